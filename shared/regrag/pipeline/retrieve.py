"""Hybrid retrieval: dense (query embedding) and Chinese BM25 legs, fused by reciprocal rank fusion.

RRF (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ_legs w_leg / (k + rank_leg(d)). It needs no score
calibration between legs, which matters because cosine similarities and BM25 scores live on unrelated scales.
Both legs apply the metadata filters inside the index search, so top-k is taken among matching chunks only.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from regrag.domain.errors import Unavailable
from regrag.domain.models import Candidate, Filters, Hit
from regrag.pipeline.lexical import query_tokens
from regrag.ports import ChunkStore, Embedder, LexicalIndex, VectorIndex


@dataclass(frozen=True)
class RetrievalConfig:
    top_k: int = 12
    dense_k: int = 50
    lexical_k: int = 50
    rrf_k: int = 20
    dense_weight: float = 0.5
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


@dataclass(frozen=True)
class CorpusStat:
    """How one corpus answered a fanned-out query."""

    corpus: str
    status: str  # ok | timeout | error
    latency_ms: float
    hits: int
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {"corpus": self.corpus, "status": self.status, "latency_ms": self.latency_ms, "hits": self.hits}
        if self.error:
            data["error"] = self.error
        return data


@dataclass
class Retrieval:
    candidates: list[Candidate]
    filters: Filters
    tokens: list[str]
    timings_ms: dict[str, float] = field(default_factory=dict)
    corpus_stats: list[CorpusStat] = field(default_factory=list)


def effective_filters(filters: Filters, today: dt.date | None = None) -> Filters:
    """Default `as_of` to today: only versions in force are retrieved unless the request says otherwise."""
    if filters.as_of or filters.include_superseded:
        return filters
    return replace(filters, as_of=(today or dt.date.today()).isoformat())


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


class Retriever:
    """Runs both legs over the ports and fuses them; fans out over corpora when asked."""

    def __init__(
        self,
        *,
        embedder: Embedder,
        vectors: VectorIndex,
        lexical: LexicalIndex,
        store: ChunkStore,
        config: RetrievalConfig,
        max_workers: int = 8,
    ) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.lexical = lexical
        self.store = store
        self.config = config
        self.max_workers = max_workers

    def _encode(self, question: str, timings: dict[str, float]) -> tuple[list[str], np.ndarray]:
        t = time.perf_counter()
        tokens = query_tokens(question)
        timings["tokenize"] = _ms(t)
        t = time.perf_counter()
        qvec = self.embedder.embed_query(question)
        timings["embed_query"] = _ms(t)
        return tokens, qvec

    def _search(
        self,
        tokens: Sequence[str],
        qvec: np.ndarray,
        filters: Filters,
        top_k: int,
        timings: dict[str, float] | None = None,
    ) -> list[Candidate]:
        cfg = self.config
        t = time.perf_counter()
        lexical_hits = self.lexical.search(tokens, filters, max(cfg.lexical_k, top_k)) if tokens else []
        t_lex = _ms(t)
        t = time.perf_counter()
        dense_hits = self.vectors.search(qvec, filters, max(cfg.dense_k, top_k))
        t_dense = _ms(t)
        t = time.perf_counter()
        fused = rrf_fuse([dense_hits, lexical_hits], [cfg.dense_weight, cfg.lexical_weight], cfg.rrf_k)[:top_k]
        chunks = {c.id: c for c in self.store.get_chunks([f.chunk_id for f in fused])}
        candidates = [
            Candidate(
                chunk=chunks[f.chunk_id],
                score=f.score,
                fused_score=f.score,
                dense_rank=f.ranks[0],
                lexical_rank=f.ranks[1],
                dense_score=f.scores[0],
                lexical_score=f.scores[1],
            )
            for f in fused
            if f.chunk_id in chunks
        ]
        if timings is not None:
            timings.update(lexical=t_lex, dense=t_dense, fuse=_ms(t))
        return candidates

    def retrieve(self, question: str, filters: Filters, top_k: int | None = None) -> Retrieval:
        """One search over everything the filters allow."""
        top_k = top_k or self.config.top_k
        timings: dict[str, float] = {}
        filters = effective_filters(filters)
        tokens, qvec = self._encode(question, timings)
        candidates = self._search(tokens, qvec, filters, top_k, timings)
        return Retrieval(candidates, filters, tokens, timings)

    def retrieve_corpora(
        self,
        question: str,
        filters: Filters,
        corpora: Sequence[str],
        *,
        top_k: int | None = None,
        timeout_s: float = 3.0,
        weights: dict[str, float] | None = None,
    ) -> Retrieval:
        """Search each corpus concurrently with its own timeout and merge by rank.

        A corpus that times out or fails is reported in `corpus_stats` and left out; it never fails the
        request. Raises Unavailable (with the stats) only when no corpus answered.
        """
        top_k = top_k or self.config.top_k
        timings: dict[str, float] = {}
        filters = effective_filters(filters)
        tokens, qvec = self._encode(question, timings)

        def one(corpus: str) -> tuple[list[Candidate], float]:
            t = time.perf_counter()
            found = self._search(tokens, qvec, replace(filters, corpus=(corpus,)), top_k)
            return found, _ms(t)

        t = time.perf_counter()
        pool = ThreadPoolExecutor(max_workers=max(1, min(self.max_workers, len(corpora))), thread_name_prefix="corpus")
        futures = {pool.submit(one, corpus): corpus for corpus in corpora}
        done, _ = wait(futures, timeout=timeout_s)
        pool.shutdown(wait=False, cancel_futures=True)  # a slow corpus keeps its thread; nobody waits for it
        ranked: dict[str, list[Candidate]] = {}
        stats: list[CorpusStat] = []
        for future, corpus in futures.items():
            if future not in done:
                stats.append(
                    CorpusStat(corpus, "timeout", round(timeout_s * 1000, 1), 0, f"no answer within {timeout_s} s")
                )
                continue
            try:
                found, latency = future.result()
            except Exception as exc:  # noqa: BLE001 - one corpus failing must not fail the request
                stats.append(CorpusStat(corpus, "error", _ms(t), 0, f"{type(exc).__name__}: {exc}"))
                continue
            ranked[corpus] = found
            stats.append(CorpusStat(corpus, "ok", latency, len(found)))
        timings["fan_out"] = _ms(t)
        if not ranked:
            raise Unavailable("no corpus answered", details={"corpus_stats": [s.to_dict() for s in stats]})
        t = time.perf_counter()
        candidates = merge_corpora(ranked, weights or {}, self.config.rrf_k)[:top_k]
        timings["merge"] = _ms(t)
        return Retrieval(candidates, filters, tokens, timings, stats)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)
