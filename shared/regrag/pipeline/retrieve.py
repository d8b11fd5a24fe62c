"""Hybrid retrieval: dense (query embedding) and Chinese BM25 legs, fused by reciprocal rank fusion.

RRF (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ_legs w_leg / (k + rank_leg(d)). It needs no score
calibration between legs, which matters because cosine similarities and BM25 scores live on unrelated scales.
Both legs apply the metadata filters inside the index search, so top-k is taken among matching chunks only.

Optional retrieval aids add legs to the same fusion, each with its own weight, prepared once per query (also
for a fan-out over corpora) and filtered like the others: HyDE (regrag.pipeline.hyde: a hypothetical answer's
vector searched over the chunk vectors) and the questions-answered index (regrag.pipeline.questions: the
question's vector searched over questions generated at ingest). Without them the fusion is exactly the two legs.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from regrag.domain.errors import Unavailable
from regrag.domain.models import Candidate, Filters, Hit
from regrag.pipeline.hyde import Hyde
from regrag.pipeline.keywords import coverage, question_keywords
from regrag.pipeline.lexical import query_tokens
from regrag.pipeline.rerank import STATUS_OK, STATUS_SKIPPED
from regrag.ports import ChunkStore, Embedder, LexicalIndex, QuestionIndex, VectorIndex
from regrag.text.places import PlaceScope, mentioned_provinces


@dataclass(frozen=True)
class RetrievalConfig:
    top_k: int = 12
    dense_k: int = 50
    lexical_k: int = 50
    rrf_k: int = 20
    dense_weight: float = 0.5
    lexical_weight: float = 1.0
    hyde_weight: float = 0.5
    questions_weight: float = 0.5
    coverage_weight: float = 1.0
    place_scope: bool = True
    national_preference: float = 0.8


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
class AidLeg:
    """One more ranked list for the fusion: prepared once per query, searched per corpus with its filters."""

    name: str
    weight: float
    search: Callable[[Filters, int], list[Hit]]


@dataclass(frozen=True)
class QueryAids:
    """The aid legs of one query, what each aid did (status per aid: ok | skipped | fallback:<reason>) and
    debugging detail that is never a source (the HyDE passage)."""

    legs: tuple[AidLeg, ...] = ()
    status: dict[str, str] = field(default_factory=dict)
    debug: dict[str, Any] = field(default_factory=dict)


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
    aids: QueryAids = field(default_factory=QueryAids)
    scope: PlaceScope = field(default_factory=PlaceScope)


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


def coverage_rerank(candidates: list[Candidate], question: str, k: int, weight: float) -> list[Candidate]:
    """Fuse the retrieval order with a second ranking of the same candidates: by how much of the question's key
    terms each one's text covers (RRF again, so no score is compared). A cheap local reranker that needs no
    model: +0.8 nDCG@10 on the dev set in one corpus, and it recovers most of what merging many corpora by
    rank loses (0.730 → 0.758 over 8 provincial corpora; bench/README.md). `weight` 0 turns it off."""
    if weight <= 0 or len(candidates) < 2:
        return candidates
    keywords = question_keywords(question)
    covered = [coverage(c.chunk.text + c.chunk.breadcrumb, keywords) for c in candidates]
    by_coverage = sorted(range(len(candidates)), key=lambda i: (-covered[i], i))
    fused = [1.0 / (k + i + 1) for i in range(len(candidates))]
    for rank, i in enumerate(by_coverage, 1):
        fused[i] += weight / (k + rank)
    order = sorted(range(len(candidates)), key=lambda i: (-fused[i], i))
    return [replace(candidates[i], score=fused[i]) for i in order]


def question_scope(question: str, filters: Filters, enabled: bool = True) -> PlaceScope:
    """The provinces the question names, when they should steer the ranking: not when the request already
    filters by province (the filter decides) and not when turned off."""
    if not enabled or filters.province:
        return PlaceScope()
    return mentioned_provinces(question)


def scope_first(candidates: list[Candidate], scope: PlaceScope) -> list[Candidate]:
    """Rules that apply where the question is about first: national ones and those of the provinces it names;
    other provinces' local rules after them, each group in its own order.

    Another province's local regulation does not apply to a project in the named province, but it can share
    every word with the question (two provinces' 供用电条例 read alike). This is a preference, not a filter:
    nothing is dropped, so a question that names a place only in passing still finds what else matches.
    On the dev set: nDCG@10 0.805 → 0.815 (15 of 50 questions name a place; bench/README.md).
    """
    if not scope:
        return candidates
    allowed = {"national", *scope.provinces}
    ordered = [c for c in candidates if c.chunk.meta.province in allowed]
    cap = min((c.score for c in ordered), default=float("inf"))
    for c in candidates:
        if c.chunk.meta.province not in allowed:  # the score stays a ranking score: never above an earlier rule
            cap = min(cap, c.score)
            ordered.append(replace(c, score=cap))
    return ordered


def prefer_national(candidates: list[Candidate], factor: float) -> list[Candidate]:
    """When the question names no place: local rules' scores times `factor` (< 1), then re-sorted.

    A national rule applies wherever the project is; a local one only in its province. Without this, merging
    corpora by rank puts each provincial corpus's best match beside the national answer (a question on notice
    before planned outages quoted 上海 and 河南 before the national 电力供应与使用条例). Dev set: one corpus
    0.815 → 0.817 (noise), 8 provincial corpora 0.783 → 0.806 at 0.8 (bench/README.md). 1 turns it off.
    """
    if factor >= 1.0:
        return candidates
    weighted = [
        (c.score * (1.0 if c.chunk.meta.province == "national" else factor), i) for i, c in enumerate(candidates)
    ]
    weighted.sort(key=lambda t: (-t[0], t[1]))
    return [replace(candidates[i], score=score) for score, i in weighted]


def by_applicability(
    candidates: list[Candidate],
    question: str,
    filters: Filters,
    config: RetrievalConfig,
    corpus_weights: dict[str, float] | None = None,
) -> tuple[list[Candidate], PlaceScope]:
    """Order candidates by where their rules apply: the places the question names first (scope_first), else
    national rules slightly ahead (prefer_national). A province filter in the request decides alone, and
    explicit corpus weights replace the national preference (the caller said which corpora matter)."""
    if filters.province:
        return candidates, PlaceScope()
    scope = question_scope(question, filters, config.place_scope)
    if scope:
        return scope_first(candidates, scope), scope
    if corpus_weights:
        return candidates, scope
    return prefer_national(candidates, config.national_preference), scope


def corpus_relevance(ranked: dict[str, list[Candidate]], question: str, top: int = 3) -> dict[str, float]:
    """How well each corpus's own best candidates match the question, relative to the best corpus (0–1].

    Every corpus ranks its best match first, however poor: merging ranks alone interleaves the top of a corpus
    that has nothing on the question with the top of the one that has the answer (on the dev set, split into 8
    provincial corpora, round-robin merging took nDCG@10 from 0.797 to 0.494). The weight is the key-term
    coverage of the corpus's top candidates (their text, not any retrieval score, so nothing is compared across
    corpora but the question's own words), scaled so the best corpus weighs 1.
    """
    keywords = question_keywords(question)
    raw: dict[str, float] = {}
    for corpus, found in ranked.items():
        covered = [coverage(c.chunk.text + c.chunk.breadcrumb, keywords) for c in found[:top]]
        raw[corpus] = sum(covered) / len(covered) if covered else 0.0
    best = max(raw.values(), default=0.0)
    return {c: (max(v / best, 0.05) if best > 0 else 1.0) for c, v in raw.items()}


@dataclass(frozen=True)
class Retriever:
    """Runs both legs (and the aids that are wired) over the ports and fuses them; fans out over corpora.

    `hyde` and `questions` are the optional aids: None (the default) leaves retrieval exactly as without them.
    Frozen, so a variant (another config, another index) is `dataclasses.replace(retriever, …)`.
    """

    embedder: Embedder
    vectors: VectorIndex
    lexical: LexicalIndex
    store: ChunkStore
    config: RetrievalConfig
    max_workers: int = 8
    hyde: Hyde | None = None
    questions: QuestionIndex | None = None

    def _encode(self, question: str, timings: dict[str, float]) -> tuple[list[str], np.ndarray]:
        t = time.perf_counter()
        tokens = query_tokens(question)
        timings["tokenize"] = _ms(t)
        t = time.perf_counter()
        qvec = self.embedder.embed_query(question)
        timings["embed_query"] = _ms(t)
        return tokens, qvec

    def _prepare_aids(self, question: str, qvec: np.ndarray, timings: dict[str, float]) -> QueryAids:
        """The aid legs of one query, built once (a fan-out reuses them for every corpus)."""
        cfg = self.config
        legs: list[AidLeg] = []
        status = {"hyde": STATUS_SKIPPED, "questions": STATUS_SKIPPED}
        debug: dict[str, Any] = {}
        if self.hyde is not None:
            t = time.perf_counter()
            expanded = self.hyde.expand(question)  # never raises: a failure is a status and no leg
            timings["hyde"] = _ms(t)
            status["hyde"] = expanded.status
            hvec = expanded.vector
            if hvec is not None:
                legs.append(AidLeg("hyde", cfg.hyde_weight, lambda f, k: self.vectors.search(hvec, f, k)))
                debug["hyde_passage"] = expanded.passage
        if self.questions is not None:
            index = self.questions
            legs.append(AidLeg("questions", cfg.questions_weight, lambda f, k: index.search(qvec, f, k)))
            status["questions"] = STATUS_OK
        return QueryAids(tuple(legs), status, debug)

    def _search(
        self,
        tokens: Sequence[str],
        qvec: np.ndarray,
        filters: Filters,
        top_k: int,
        timings: dict[str, float] | None = None,
        aids: Sequence[AidLeg] = (),
    ) -> list[Candidate]:
        cfg = self.config
        t = time.perf_counter()
        lexical_hits = self.lexical.search(tokens, filters, max(cfg.lexical_k, top_k)) if tokens else []
        t_lex = _ms(t)
        t = time.perf_counter()
        dense_hits = self.vectors.search(qvec, filters, max(cfg.dense_k, top_k))
        t_dense = _ms(t)
        legs, weights, aid_ms = [dense_hits, lexical_hits], [cfg.dense_weight, cfg.lexical_weight], {}
        for aid in aids:  # dense and lexical stay legs 0 and 1: the candidates' ranks below index them
            t = time.perf_counter()
            legs.append(aid.search(filters, max(cfg.dense_k, top_k)))
            weights.append(aid.weight)
            aid_ms[aid.name] = _ms(t)
        t = time.perf_counter()
        fused = rrf_fuse(legs, weights, cfg.rrf_k)[:top_k]
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
            timings.update(lexical=t_lex, dense=t_dense, **{f"{name}_search": ms for name, ms in aid_ms.items()})
            timings["fuse"] = _ms(t)
        return candidates

    def retrieve(self, question: str, filters: Filters, top_k: int | None = None) -> Retrieval:
        """One search over everything the filters allow."""
        top_k = top_k or self.config.top_k
        timings: dict[str, float] = {}
        filters = effective_filters(filters)
        tokens, qvec = self._encode(question, timings)
        aids = self._prepare_aids(question, qvec, timings)
        candidates = self._search(tokens, qvec, filters, top_k, timings, aids.legs)
        candidates = coverage_rerank(candidates, question, self.config.rrf_k, self.config.coverage_weight)
        candidates, scope = by_applicability(candidates, question, filters, self.config)
        return Retrieval(candidates, filters, tokens, timings, aids=aids, scope=scope)

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
        aids = self._prepare_aids(question, qvec, timings)

        def one(corpus: str) -> tuple[list[Candidate], float]:
            t = time.perf_counter()
            found = self._search(tokens, qvec, replace(filters, corpus=(corpus,)), top_k, aids=aids.legs)
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
        relevance = corpus_relevance(ranked, question) if len(ranked) > 1 else {}
        combined = {c: (weights or {}).get(c, 1.0) * relevance.get(c, 1.0) for c in ranked}
        candidates = merge_corpora(ranked, combined, self.config.rrf_k)
        candidates = coverage_rerank(candidates, question, self.config.rrf_k, self.config.coverage_weight)
        candidates, scope = by_applicability(candidates, question, filters, self.config, weights)
        candidates = candidates[:top_k]
        timings["merge"] = _ms(t)
        return Retrieval(candidates, filters, tokens, timings, stats, aids, scope)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def lexical_texts(lexical: LexicalIndex, store: ChunkStore, k: int = 3) -> Callable[[str], list[str]]:
    """question → the texts of its top BM25 hits among the versions in force today: the pseudo-relevance
    feedback the local stand-in generator builds HyDE passages from."""

    def search(question: str) -> list[str]:
        tokens = query_tokens(question)
        hits = lexical.search(tokens, effective_filters(Filters()), k) if tokens else []
        return [c.search_text for c in store.get_chunks([h.chunk_id for h in hits])]

    return search
