"""retrieve: the question's legs searched per corpus, fused per corpus, and the corpora merged into one pool.

The legs are the dense leg (the question's embedding) and the Chinese BM25 leg (its lexical terms, tokenised
once by `analyse`), plus the retrieval aids that are wired, each with its own weight and prepared once per query
(also for a fan-out over corpora): HyDE (query/aids/hyde.py: a hypothetical answer's vector, and its words as a
lexical leg) and the questions-answered index (ingest/questions.py). Every leg applies the metadata filters
inside the index search, so top-k is taken among matching chunks only. Legs are fused by reciprocal rank fusion
within each corpus, and the corpora merged by RRF weighted by how well each corpus's best candidates cover the
question (query/fusion.py). Each candidate carries its retrieval evidence (leg ranks and scores, the within-corpus
fused score, its key-term coverage); the final order is `score`'s (query/score.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from regrag.domain.errors import Unavailable
from regrag.domain.models import Filters, Hit
from regrag.domain.results import Candidate, Features
from regrag.ports import ChunkStore, Embedder, LexicalIndex, QuestionIndex, VectorIndex
from regrag.query.aids.hyde import Hyde
from regrag.query.fusion import merge_corpora, rrf_fuse
from regrag.query.question import Question, analyse, in_force_by_default
from regrag.query.rerank import STATUS_OK, STATUS_SKIPPED
from regrag.query.score import ScoringConfig, applies, score
from regrag.text.places import PlaceScope
from regrag.text.segment import index_terms


@dataclass(frozen=True)
class RetrievalConfig:
    """How the legs are searched and fused (built by keyword from Settings: wiring/models.py), and the ordering
    signals `score` fuses after them (`scoring`)."""

    top_k: int = 12
    dense_k: int = 50
    lexical_k: int = 50
    rrf_k: int = 20
    dense_weight: float = 1.0
    lexical_weight: float = 1.0
    hyde_weight: float = 0.5
    questions_weight: float = 0.5
    hyde_lexical_weight: float = 0.0
    coverage_weight: float = 1.0
    form_weight: float = 0.0
    place_scope: bool = True
    national_preference: float = 0.8
    # the candidates of each corpus whose coverage weighs the corpus in the merge (corpus_relevance)
    corpus_relevance_top: int = 3

    @property
    def scoring(self) -> ScoringConfig:
        return ScoringConfig(
            rrf_k=self.rrf_k,
            coverage_weight=self.coverage_weight,
            form_weight=self.form_weight,
            place_scope=self.place_scope,
            national_preference=self.national_preference,
        )


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
    """What retrieval gives: the candidates (in retrieval order from `search`, in final order from `retrieve`),
    how each corpus answered, what the aids did and the time each part took."""

    candidates: list[Candidate]
    filters: Filters
    tokens: list[str]
    timings_ms: dict[str, float] = field(default_factory=dict)
    corpus_stats: list[CorpusStat] = field(default_factory=list)
    aids: QueryAids = field(default_factory=QueryAids)


def effective_filters(filters: Filters) -> Filters:
    """Default `as_of` to today: only versions in force are retrieved unless the request says otherwise."""
    return in_force_by_default(filters)


def measured(q: Question, candidates: Sequence[Candidate], scope: PlaceScope = PlaceScope()) -> list[Candidate]:
    """Candidates named by id (no retrieval behind them) with the evidence quoting and judging read: their
    key-term coverage and whether they apply in `scope` (query/score.py; empty: everywhere), in the order given."""
    return [
        replace(
            c,
            features=replace(
                c.features,
                coverage=q.coverage(c.chunk.text + c.chunk.breadcrumb),
                applies=applies(scope, c.chunk.meta.province),
            ),
        )
        for c in candidates
    ]


def corpus_relevance(ranked: dict[str, list[Candidate]], top: int = 3) -> dict[str, float]:
    """How well each corpus's own best candidates match the question, relative to the best corpus (0–1].

    Every corpus ranks its best match first, however poor: merging ranks alone interleaves the top of a corpus
    that has nothing on the question with the top of the one that has the answer (on the dev set, split into 8
    provincial corpora, round-robin merging took nDCG@10 from 0.797 to 0.494). The weight is the key-term
    coverage of the corpus's top candidates (their `coverage` feature: their text, not any retrieval score, so
    nothing is compared across corpora but the question's own words), scaled so the best corpus weighs 1.
    """
    raw: dict[str, float] = {}
    for corpus, found in ranked.items():
        covered = [c.features.coverage for c in found[:top]]
        raw[corpus] = sum(covered) / len(covered) if covered else 0.0
    best = max(raw.values(), default=0.0)
    return {c: (max(v / best, 0.05) if best > 0 else 1.0) for c, v in raw.items()}


@dataclass(frozen=True)
class Retriever:
    """Runs both legs (and the aids that are wired) over the ports and fuses them; fans out over corpora.

    `hyde` and `questions` are the optional aids: None (the default) leaves retrieval exactly as without them.
    `max_workers`: corpora searched at once in a fan-out. Searches that wait on a remote index (Vector Search)
    overlap well; searches that compute in this process (the local index) gain nothing from more threads than
    cores and lose to their contention (40× index, 8 corpora, 2 cores: p50/p95 127/160 ms with 8, 93/116 with 2).
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

    def _embed(self, q: Question, timings: dict[str, float]) -> np.ndarray:
        t = time.perf_counter()
        qvec = self.embedder.embed_query(q.text)
        timings["embed_query"] = _ms(t)
        return qvec

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
                if cfg.hyde_weight > 0:
                    legs.append(AidLeg("hyde", cfg.hyde_weight, lambda f, k: self.vectors.search(hvec, f, k)))
                debug["hyde_passage"] = expanded.passage
            # The passage is the question reworded as a statute would say it; searched by its words too, it
            # can reach an article a lay question shares no word with (偷电 → 窃电), which the vector alone
            # reaches only as far as the embedding model bridges the two wordings.
            words = index_terms(expanded.passage) if expanded.passage and cfg.hyde_lexical_weight > 0 else []
            if words:
                legs.append(
                    AidLeg("hyde_lexical", cfg.hyde_lexical_weight, lambda f, k: self.lexical.search(words, f, k))
                )
        if self.questions is not None:
            index = self.questions
            legs.append(AidLeg("questions", cfg.questions_weight, lambda f, k: index.search(qvec, f, k)))
            status["questions"] = STATUS_OK
        return QueryAids(tuple(legs), status, debug)

    def _search(
        self,
        q: Question,
        qvec: np.ndarray,
        filters: Filters,
        top_k: int,
        timings: dict[str, float] | None = None,
        aids: Sequence[AidLeg] = (),
    ) -> list[Candidate]:
        """One corpus (or everything `filters` allow): the legs, fused; each candidate with its evidence."""
        cfg = self.config
        tokens = list(q.terms)
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
                features=Features(
                    coverage=q.coverage(chunks[f.chunk_id].text + chunks[f.chunk_id].breadcrumb),
                    retrieval_rank=rank,
                    retrieval_score=f.score,
                ),
            )
            for rank, f in enumerate((f for f in fused if f.chunk_id in chunks), 1)
        ]
        if timings is not None:
            timings.update(lexical=t_lex, dense=t_dense, **{f"{name}_search": ms for name, ms in aid_ms.items()})
            timings["fuse"] = _ms(t)
        return candidates

    def retrieve(self, question: str | Question, filters: Filters | None = None, top_k: int | None = None) -> Retrieval:
        """One search over everything the filters allow, in final order (`score`): retrieval alone, as the
        evaluation's retrieval modes, the Python API and benchmarks use it."""
        q = question if isinstance(question, Question) else analyse(question, filters or Filters())
        top_k = top_k or self.config.top_k
        timings: dict[str, float] = {}
        qvec = self._embed(q, timings)
        aids = self._prepare_aids(q.text, qvec, timings)
        pool = self._search(q, qvec, q.filters, top_k, timings, aids.legs)
        ranked = score(q, pool, self.config.scoring)
        return Retrieval(ranked.candidates, q.filters, list(q.terms), timings, aids=aids)

    def search(
        self,
        q: Question,
        corpora: Sequence[str],
        *,
        top_k: int | None = None,
        timeout_s: float = 3.0,
        weights: dict[str, float] | None = None,
    ) -> Retrieval:
        """Search each corpus concurrently with its own timeout and merge them: the pool `score` orders.

        A corpus that times out or fails is reported in `corpus_stats` and left out; it never fails the
        request. Raises Unavailable (with the stats) only when no corpus answered.
        """
        top_k = top_k or self.config.top_k
        timings: dict[str, float] = {}
        qvec = self._embed(q, timings)
        aids = self._prepare_aids(q.text, qvec, timings)
        # A cold instance's first search imports and connects clients or builds the in-memory index (seconds);
        # done here, it makes that query slower instead of timing every corpus out (503 "no corpus answered").
        t = time.perf_counter()
        try:
            self.vectors.warm()
            self.lexical.warm()
        except Exception:  # noqa: BLE001 - the searches below meet the same failure and report it per corpus
            pass
        timings["warm"] = _ms(t)

        def one(corpus: str) -> tuple[list[Candidate], float]:
            t = time.perf_counter()
            found = self._search(q, qvec, replace(q.filters, corpus=(corpus,)), top_k, aids=aids.legs)
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
        relevance = corpus_relevance(ranked, self.config.corpus_relevance_top) if len(ranked) > 1 else {}
        combined = {c: (weights or {}).get(c, 1.0) * relevance.get(c, 1.0) for c in ranked}
        merged = merge_corpora(ranked, combined, self.config.rrf_k)
        timings["merge"] = _ms(t)
        return Retrieval(merged, q.filters, list(q.terms), timings, stats, aids)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def lexical_texts(lexical: LexicalIndex, store: ChunkStore, k: int = 3) -> Callable[[str], list[str]]:
    """question → the texts of its top BM25 hits among the versions in force today: the pseudo-relevance
    feedback the local stand-in generator builds HyDE passages from."""

    def search(question: str) -> list[str]:
        tokens = index_terms(question)
        hits = lexical.search(tokens, effective_filters(Filters()), k) if tokens else []
        return [c.search_text for c in store.get_chunks([h.chunk_id for h in hits])]

    return search
