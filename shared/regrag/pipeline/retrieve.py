"""Hybrid retrieval: dense (query embedding) and Chinese BM25 legs, fused by reciprocal rank fusion.

RRF (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ_legs w_leg / (k + rank_leg(d)). It needs no score
calibration between legs, which matters because cosine similarities and BM25 scores live on unrelated scales.
Both legs apply the metadata filters inside the index search, so top-k is taken among matching chunks only.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from regrag.domain.models import Candidate, Filters, Hit
from regrag.pipeline.lexical import query_tokens
from regrag.ports import ChunkStore, Embedder, LexicalIndex, VectorIndex


@dataclass(frozen=True)
class RetrievalConfig:
    top_k: int = 12
    dense_k: int = 50
    lexical_k: int = 50
    rrf_k: int = 60
    dense_weight: float = 1.0
    lexical_weight: float = 1.0


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


@dataclass
class Retrieval:
    candidates: list[Candidate]
    filters: Filters
    tokens: list[str]
    timings_ms: dict[str, float] = field(default_factory=dict)


def effective_filters(filters: Filters, today: dt.date | None = None) -> Filters:
    """Default `as_of` to today: only versions in force are retrieved unless the request says otherwise."""
    if filters.as_of or filters.include_superseded:
        return filters
    return replace(filters, as_of=(today or dt.date.today()).isoformat())


class Retriever:
    """Runs both legs over the ports and fuses them."""

    def __init__(
        self,
        *,
        embedder: Embedder,
        vectors: VectorIndex,
        lexical: LexicalIndex,
        store: ChunkStore,
        config: RetrievalConfig,
    ) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.lexical = lexical
        self.store = store
        self.config = config

    def retrieve(self, question: str, filters: Filters, top_k: int | None = None) -> Retrieval:
        cfg = self.config
        top_k = top_k or cfg.top_k
        timings: dict[str, float] = {}
        filters = effective_filters(filters)

        t = time.perf_counter()
        tokens = query_tokens(question)
        lexical_hits = self.lexical.search(tokens, filters, max(cfg.lexical_k, top_k)) if tokens else []
        timings["lexical"] = _ms(t)

        t = time.perf_counter()
        qvec = self.embedder.embed_query(question)
        timings["embed_query"] = _ms(t)
        t = time.perf_counter()
        dense_hits = self.vectors.search(qvec, filters, max(cfg.dense_k, top_k))
        timings["dense"] = _ms(t)

        t = time.perf_counter()
        fused = rrf_fuse([dense_hits, lexical_hits], [cfg.dense_weight, cfg.lexical_weight], cfg.rrf_k)[:top_k]
        chunks = {c.id: c for c in self.store.get_chunks([f.chunk_id for f in fused])}
        candidates = [
            Candidate(
                chunk=chunks[f.chunk_id],
                score=f.score,
                dense_rank=f.ranks[0],
                lexical_rank=f.ranks[1],
                dense_score=f.scores[0],
                lexical_score=f.scores[1],
            )
            for f in fused
            if f.chunk_id in chunks
        ]
        timings["fuse"] = _ms(t)
        return Retrieval(candidates, filters, tokens, timings)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)
