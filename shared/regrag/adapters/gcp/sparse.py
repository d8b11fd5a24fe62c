"""BM25 as sparse vectors, so that Vector Search's sparse dot product is a BM25 score (pure; no Google imports).

Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009):

    score(q, d) = Σ_{t ∈ q} idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
    idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

The document side holds the saturated term frequency of each token, the query side its idf, so the dot
product of the two sparse vectors is the sum above (a query term repeated counts again). Title and heading
terms go in the same bag with weight `title_weight` (tf = tf_body + w·tf_title, |d| = |body| + w·|title|),
the weighting of the local index (regrag.adapters.local.snapshot), whose k1/b defaults these share.

Limits of this encoding, on purpose:
- `avgdl` is a fixed setting, not the live corpus average: document weights are written once at upsert and
  would all have to be rewritten if it moved. The reconcile job measures the real average and logs a warning
  when the setting is far off.
- idf comes from a `Lexicon` (document frequencies counted by the reconcile job over the chunk map). Before
  the first count every idf is 1, so ranking is by saturated term frequency alone (coordination-level BM25).
  A token the lexicon has never seen gets the idf of a term in no chunk (new text since the last count).
- Tokens become dimensions through a 63-bit BLAKE2b hash; a collision between two tokens (probability about
  n²/2⁶⁴ for n distinct tokens, ~10⁻⁹ for 200 k tokens) would merge their weights.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from regrag.domain.bm25 import Bm25Params


@dataclass(frozen=True)
class SparseVector:
    """Sorted dimensions and their weights; empty when a text has no tokens."""

    dimensions: tuple[int, ...]
    values: tuple[float, ...]

    def as_dict(self) -> dict[int, float]:
        return dict(zip(self.dimensions, self.values, strict=True))

    def __bool__(self) -> bool:
        return bool(self.dimensions)


def token_dimension(token: str) -> int:
    """A stable non-negative int64 dimension for a token: the first 63 bits of BLAKE2b-64 of its UTF-8 bytes."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def _vector(weights: Mapping[int, float]) -> SparseVector:
    dims = sorted(d for d, w in weights.items() if w > 0)
    return SparseVector(tuple(dims), tuple(float(weights[d]) for d in dims))


def document_vector(body: Sequence[str], title: Sequence[str], params: Bm25Params) -> SparseVector:
    """The document side: each token's saturated, length-normalised term frequency."""
    tf: dict[str, float] = {}
    for token in body:
        tf[token] = tf.get(token, 0.0) + 1.0
    for token in title:
        tf[token] = tf.get(token, 0.0) + params.title_weight
    length = len(body) + params.title_weight * len(title)
    norm = params.k1 * (1 - params.b + params.b * length / params.avgdl)
    weights: dict[int, float] = {}
    for token, freq in tf.items():
        dim = token_dimension(token)
        weights[dim] = weights.get(dim, 0.0) + freq * (params.k1 + 1) / (freq + norm)
    return _vector(weights)


@dataclass(frozen=True)
class Lexicon:
    """Document frequencies over the indexed chunks: `chunks` = N, `df[token]` = chunks containing it."""

    chunks: int = 0
    df: Mapping[str, int] = field(default_factory=dict)
    avgdl: float | None = None  # the measured average chunk length, for the reconcile report

    def idf(self, token: str) -> float:
        """BM25 idf; 1 for every token while no frequencies are known (an empty lexicon)."""
        if self.chunks <= 0:
            return 1.0
        df = min(self.df.get(token, 0), self.chunks)
        return math.log(1 + (self.chunks - df + 0.5) / (df + 0.5))

    @classmethod
    def count(cls, documents: Iterable[tuple[Sequence[str], Sequence[str]]], title_weight: float) -> Lexicon:
        """Count frequencies over (body tokens, title tokens) pairs, one pair per chunk."""
        df: Counter[str] = Counter()
        chunks = 0
        total_length = 0.0
        for body, title in documents:
            chunks += 1
            total_length += len(body) + title_weight * len(title)
            df.update(set(body) | set(title))
        return cls(chunks, dict(df), (total_length / chunks) if chunks else None)


def query_vector(tokens: Sequence[str], lexicon: Lexicon) -> SparseVector:
    """The query side: each query token's idf, once per occurrence (as the local index scores a query)."""
    weights: dict[int, float] = {}
    for token in (t for t in tokens if t.strip()):
        dim = token_dimension(token)
        weights[dim] = weights.get(dim, 0.0) + lexicon.idf(token)
    return _vector(weights)
