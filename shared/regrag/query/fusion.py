"""Fusion of ranked lists: reciprocal rank fusion of retrieval legs, and the merge of per-corpus rankings.

RRF (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ_legs w_leg / (k + rank_leg(d)). It needs no score
calibration between legs, which matters because cosine similarities and BM25 scores live on unrelated scales.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from regrag.domain.models import Hit
from regrag.domain.results import Candidate


@dataclass(frozen=True)
class Fused:
    chunk_id: str
    score: float
    ranks: tuple[int | None, ...]
    scores: tuple[float | None, ...]


def rrf_fuse(legs: Sequence[Sequence[Hit]], weights: Sequence[float], k: int) -> list[Fused]:
    """Reciprocal rank fusion of ranked legs; ties broken by the best single rank, then by id (deterministic)."""
    table: dict[str, list[float | int | None]] = {}
    n = len(legs)
    for leg_no, (hits, weight) in enumerate(zip(legs, weights, strict=True)):
        for hit in hits:
            row = table.setdefault(hit.chunk_id, [0.0] + [None] * (2 * n))
            if row[1 + leg_no] is not None:
                continue  # a leg lists each chunk once; ignore duplicates defensively
            row[0] = float(row[0] or 0.0) + weight / (k + hit.rank)
            row[1 + leg_no] = hit.rank
            row[1 + n + leg_no] = hit.score
    fused = [
        Fused(cid, float(row[0] or 0.0), tuple(row[1 : 1 + n]), tuple(row[1 + n :]))  # type: ignore[arg-type]
        for cid, row in table.items()
    ]
    fused.sort(key=lambda f: (-f.score, min((r for r in f.ranks if r is not None), default=10**9), f.chunk_id))
    return fused


def duplicate_key(candidate: Candidate) -> tuple[str, str | None, str, int]:
    """The same provision in two corpora: same title and version date, same article and part."""
    chunk = candidate.chunk
    return chunk.meta.title, chunk.meta.effective_date, f"{chunk.kind}:{chunk.article}", chunk.part


def merge_corpora(ranked: dict[str, list[Candidate]], weights: dict[str, float], k: int) -> list[Candidate]:
    """Merge per-corpus rankings by RRF over ranks (never raw scores, which are not comparable across corpora);
    collapse duplicates of one provision into a single candidate that lists every corpus it came from."""
    merged: dict[tuple[str, str | None, str, int], Candidate] = {}
    scores: dict[tuple[str, str | None, str, int], float] = {}
    for corpus in sorted(ranked):
        for rank, cand in enumerate(ranked[corpus], 1):
            key = duplicate_key(cand)
            scores[key] = scores.get(key, 0.0) + weights.get(corpus, 1.0) / (k + rank)
            if key in merged:
                kept = merged[key]
                merged[key] = replace(kept, corpora=tuple(sorted({*kept.corpora, corpus})))
            else:
                merged[key] = replace(cand, corpora=(corpus,))
    order = sorted(merged, key=lambda key: (-scores[key], merged[key].chunk.id))
    return [replace(merged[key], score=scores[key]) for key in order]
