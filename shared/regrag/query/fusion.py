"""Reciprocal rank fusion, the one way rankings are combined on the read path: retrieval legs within a corpus,
corpora into one list, and the ordering signals of `score` (retrieval order, key-term coverage, question forms).

RRF (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ_rankings w / (k + rank(d)). It needs no score
calibration between rankings, which matters because cosine similarities, BM25 scores and coverage shares live on
unrelated scales.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from regrag.domain.models import Hit
from regrag.domain.results import Candidate

K = TypeVar("K", bound=Hashable)


def rrf(rankings: Sequence[tuple[float, Mapping[K, int]]], k: int) -> dict[K, float]:
    """Σ weight / (k + rank) over the rankings each key appears in; `rankings`: (weight, key → 1-based rank).

    The sums are added in the order the rankings are given, so the same rankings always give the same floats.
    """
    fused: dict[K, float] = {}
    for weight, ranks in rankings:
        for key, rank in ranks.items():
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def positions(keys: Sequence[K]) -> dict[K, int]:
    """A list's own order as ranks (1-based), for `rrf`: the first occurrence of each key counts."""
    ranks: dict[K, int] = {}
    for rank, key in enumerate(keys, 1):
        ranks.setdefault(key, rank)
    return ranks


@dataclass(frozen=True)
class Fused:
    chunk_id: str
    score: float
    ranks: tuple[int | None, ...]
    scores: tuple[float | None, ...]


def rrf_fuse(legs: Sequence[Sequence[Hit]], weights: Sequence[float], k: int) -> list[Fused]:
    """Reciprocal rank fusion of ranked legs (each hit's own rank); ties broken by the best single rank, then by
    id (deterministic). A leg lists each chunk once; a duplicate is ignored."""
    ranks: list[dict[str, int]] = []
    scores: list[dict[str, float]] = []
    for hits in legs:
        leg_ranks: dict[str, int] = {}
        leg_scores: dict[str, float] = {}
        for hit in hits:
            if hit.chunk_id not in leg_ranks:
                leg_ranks[hit.chunk_id] = hit.rank
                leg_scores[hit.chunk_id] = hit.score
        ranks.append(leg_ranks)
        scores.append(leg_scores)
    fused = rrf(list(zip(weights, ranks, strict=True)), k)
    out = [
        Fused(cid, score, tuple(r.get(cid) for r in ranks), tuple(s.get(cid) for s in scores))
        for cid, score in fused.items()
    ]
    out.sort(key=lambda f: (-f.score, min((r for r in f.ranks if r is not None), default=10**9), f.chunk_id))
    return out


def duplicate_key(candidate: Candidate) -> tuple[str, str | None, str, int]:
    """The same provision in two corpora: same title and version date, same article and part."""
    chunk = candidate.chunk
    return chunk.meta.title, chunk.meta.effective_date, f"{chunk.kind}:{chunk.article}", chunk.part


def merge_corpora(ranked: dict[str, list[Candidate]], weights: dict[str, float], k: int) -> list[Candidate]:
    """Merge per-corpus rankings by RRF over ranks (never raw scores, which are not comparable across corpora);
    collapse duplicates of one provision into a single candidate that lists every corpus it came from. The
    merged place and score are the candidates' `retrieval_rank` and `retrieval_score` features."""
    merged: dict[tuple[str, str | None, str, int], Candidate] = {}
    rankings: list[tuple[float, dict[tuple[str, str | None, str, int], int]]] = []
    for corpus in sorted(ranked):
        keys = [duplicate_key(cand) for cand in ranked[corpus]]
        rankings.append((weights.get(corpus, 1.0), positions(keys)))
        for key, cand in zip(keys, ranked[corpus], strict=True):
            if key in merged:
                kept = merged[key]
                merged[key] = replace(kept, corpora=tuple(sorted({*kept.corpora, corpus})))
            else:
                merged[key] = replace(cand, corpora=(corpus,))
    scores = rrf(rankings, k)
    order = sorted(merged, key=lambda key: (-scores[key], merged[key].chunk.id))
    return [
        replace(
            merged[key],
            score=scores[key],
            features=replace(merged[key].features, retrieval_rank=rank, retrieval_score=scores[key]),
        )
        for rank, key in enumerate(order, 1)
    ]
