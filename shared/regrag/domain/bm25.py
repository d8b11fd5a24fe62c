"""BM25's parameters, one definition for both lexical indexes.

Okapi BM25 (Robertson & Zaragoza 2009): w(t, d) = tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)). Anserini's
defaults k1 = 0.9, b = 0.4 scored this corpus best (bench/README.md). Title and heading tokens count
`title_weight` each. The local index measures `avgdl` over what it holds; Vertex AI sparse vectors are computed
per chunk before the corpus is known, so the GCP index assumes `avgdl` (the sample corpus: 198 words +
characters per chunk, title-weighted).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bm25Params:
    k1: float = 0.9
    b: float = 0.4
    title_weight: float = 0.5
    avgdl: float = 198.0
