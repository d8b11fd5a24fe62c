"""The read path, in the order a question travels it: analyse → retrieve → score → rerank → quote → judge →
render. Each step is a function with a typed input and output (query/<step>.py); this module runs them and
nothing else computes anything about the question.

    q = analyse(question, filters)        # once: keywords, terms, places, as-of, figures and units, forms
    pool = retriever.search(q, corpora)   # legs → fusion per corpus → merge (each candidate with its evidence)
    ranked = score(q, pool)               # every ordering signal a named feature, fused once
    ranked = rerank(q, ranked)            # Gemini, or the order as it is
    quotes = quote(q, ranked)             # verbatim spans of the first candidates
    verdict = judge(q, ranked, quotes)    # floor, confidence, abstention: reading the features
    answer = render(q, quotes, verdict)   # heading, bullets, citations, notes
    held = later_only(q, today's ranking) # a past day: the acts held only in later versions (query/held.py)
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

from regrag import logs
from regrag.domain.errors import InvalidInput, Unavailable
from regrag.domain.models import DocumentMeta
from regrag.domain.requests import QueryRequest
from regrag.domain.results import Answer, Candidate
from regrag.ports import ChunkStore, Composer, Reranker
from regrag.query.held import later_only
from regrag.query.held import note as held_note
from regrag.query.judge import JudgeConfig, Verdict, floor_verdict, judge, unquoted_verdict
from regrag.query.lookups import StoreLookups
from regrag.query.question import Question, analyse
from regrag.query.quote import QuoteConfig, Quotes, chinese_ratio, quote
from regrag.query.render import (
    CounterpartLookup,
    DocumentMetaLookup,
    abstention_for,
    finish,
    quoted,
    render,
    with_note,
)
from regrag.query.rerank import STATUS_SKIPPED, rerank_candidates
from regrag.query.retrieve import Retrieval, Retriever, measured
from regrag.query.score import place_scope, score
from regrag.query.temporal import SOURCE_TODAY
from regrag.query.translate import NOT_TRANSLATED, QuestionTranslator, Translation, translate_question
from regrag.views.catalog import CorpusCatalog
from regrag.views.documents import structure_context, version_chain

log = logs.get("query")

COMPOSE_IN_PROCESS = "in_process"
COMPOSE_REMOTE = "remote"


@dataclass(frozen=True)
class QueryOptions:
    """The read path's settings after retrieval (built by keyword from Settings: wiring/models.py)."""

    rerank_enabled: bool
    rerank_top_n: int
    quote: QuoteConfig
    judge: JudgeConfig
    corpus_timeout_s: float
    place_scope: bool = True  # REGRAG_PLACE_SCOPE, as the ranking's (query/score.py): which candidates may be quoted

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReadPath:
    """What the read path runs on (Services.read_path). `composer`: quote remotely (the `compose` function), in
    process when it fails."""

    retriever: Retriever
    reranker: Reranker
    store: ChunkStore
    catalog: CorpusCatalog
    options: QueryOptions
    composer: Composer | None = None
    translator: QuestionTranslator | None = None  # a question not in Chinese is searched in Chinese (translate.py)


@dataclass(frozen=True)
class Answered:
    """One question's way through the read path: every step's output, for the API response and the evaluation."""

    question: Question
    retrieval: Retrieval
    ranked: list[Candidate]
    rerank_status: str
    answer: Answer
    verdict: Verdict
    compose_status: str
    scope: dict[str, list[str]]
    timings_ms: dict[str, float]
    context: list[dict[str, Any]] | None = None
    translation: Translation = NOT_TRANSLATED


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def answer(request: QueryRequest, path: ReadPath) -> Answered:
    """The whole read path, for one question."""
    retriever, reranker, store, options, composer = (
        path.retriever,
        path.reranker,
        path.store,
        path.options,
        path.composer,
    )
    started = time.perf_counter()
    translation = translate_question(request.question, path.translator)
    timings = {"translate": _ms(started)} if translation.status != STATUS_SKIPPED else {}
    q = analyse(translation.text or request.question, request.filters, store.list_documents)
    top_k = request.top_k or retriever.config.top_k
    pool = retriever.search(
        q,
        _corpora(request, path.catalog),
        top_k=top_k,
        timeout_s=request.corpus_timeout_s or options.corpus_timeout_s,
        weights=request.corpus_weights,
    )
    timings.update({f"retrieve_{k}": v for k, v in pool.timings_ms.items()})
    t = time.perf_counter()
    scored = score(q, pool.candidates, retriever.config.scoring, request.corpus_weights)
    timings["score"] = _ms(t)

    t = time.perf_counter()
    ranked, rerank_status = rerank_candidates(
        q.text,
        scored.candidates[:top_k],
        reranker,
        top_n=options.rerank_top_n,
        enabled=options.rerank_enabled,
    )
    timings["rerank"] = _ms(t)

    t = time.perf_counter()
    lookups = StoreLookups(store)
    remote = _remote_answer(composer, q, ranked, options, lookups) if composer is not None else None
    compose_status = COMPOSE_IN_PROCESS if composer is None else remote[1]  # type: ignore[index]
    if remote is not None and remote[0] is not None:
        given = remote[0]
        quotes = Quotes(given.bullets, given.dropped_spans)  # the remote function's choice of quotes
        verdict = judge(q, ranked, quotes, rerank_status, options.judge)
        composed = finish(q, given, verdict)
    else:
        quotes = quote(q, ranked, lookups.text, options.quote)
        verdict = judge(q, ranked, quotes, rerank_status, options.judge)
        composed = render(q, quotes, verdict, lookups.meta, lookups.counterpart)
    if translation.note:
        composed = with_note(composed, translation.note)
    timings["compose"] = _ms(t)
    held = _later_only(q, path, request, top_k, timings)
    if held:
        # first when nothing is quoted: it, not the words shared, is why the law of that day is not found
        composed = with_note(composed, held_note(q.as_of.date, held), first=composed.abstained)

    context = None
    if request.context:
        t = time.perf_counter()
        cited = [(b.citation.doc_id, b.citation.article) for b in composed.bullets]
        context = structure_context(store, list(dict.fromkeys(cited)), request.context == "section")
        timings["context"] = _ms(t)
    timings["total"] = _ms(started)
    return Answered(
        q,
        pool,
        ranked,
        rerank_status,
        composed,
        verdict,
        compose_status,
        scored.scope.to_dict(),
        timings,
        context,
        translation,
    )


def _later_only(
    q: Question,
    path: ReadPath,
    request: QueryRequest,
    top_k: int,
    timings: dict[str, float],
) -> list[DocumentMeta]:
    """For a question about a past day: the acts it would be answered from among today's law that the library
    holds only in versions later than that day (query/held.py). One more search, for those questions only."""
    today = dt.date.today().isoformat()
    if q.as_of.source == SOURCE_TODAY or q.as_of.date >= today or q.filters.include_superseded:
        return []
    t = time.perf_counter()
    now = replace(q, filters=replace(q.filters, as_of=today))
    try:
        pool = path.retriever.search(
            now,
            _corpora(request, path.catalog),
            top_k=top_k,
            timeout_s=request.corpus_timeout_s or path.options.corpus_timeout_s,
            weights=request.corpus_weights,
        )
    except Unavailable as err:  # the answer stands without the note: a search failing now fails no request
        logs.event(log, logging.WARNING, "later versions not checked: today's search failed", error=str(err))
        return []
    ranked = score(now, pool.candidates, path.retriever.config.scoring, request.corpus_weights).candidates
    provinces = {*q.filters.province, *q.places.provinces}
    found = later_only(q.as_of.date, ranked, partial(version_chain, path.store), path.options.judge.top_n, provinces)
    timings["later_only"] = _ms(t)
    return found


def response(done: Answered) -> dict[str, Any]:
    """The API response body of one answered question."""
    extra: dict[str, Any] = {}
    if done.context is not None:
        extra["context"] = done.context
    if done.retrieval.aids.debug:
        # what the aids generated, for whoever debugs retrieval: never a source, never quoted
        extra["debug"] = dict(done.retrieval.aids.debug)
    retrieval = done.retrieval
    return {
        **extra,
        "query_id": uuid.uuid4().hex,
        **done.answer.to_dict(),
        "confidence": done.verdict.confidence.to_dict(),
        "candidates": [c.to_dict() for c in done.ranked],
        "rerank_status": done.rerank_status,
        # a question not in Chinese: ok (searched as `question_zh`) | skipped | fallback:<reason> (searched as asked)
        "translation_status": done.translation.status,
        **({"question_zh": done.translation.text} if done.translation.text else {}),
        # retrieval aids: ok | skipped (off) | fallback:<reason> (no extra leg; retrieval ran without it)
        "hyde_status": retrieval.aids.status.get("hyde", STATUS_SKIPPED),
        "questions_status": retrieval.aids.status.get("questions", STATUS_SKIPPED),
        "corpus_stats": [s.to_dict() for s in retrieval.corpus_stats],
        "filters": retrieval.filters.to_dict(),
        # the provinces the question names (their rules and national ones rank first); empty when none
        "scope": done.scope,
        # the day the answer is about and why: a filter, a date the question names, or today
        "temporal": done.question.as_of.to_dict(),
        "compose_status": done.compose_status,
        "timings_ms": done.timings_ms,
    }


def answer_question(request: QueryRequest, path: ReadPath) -> dict[str, Any]:
    """The read path's API response (`answer`, then `response`)."""
    return response(answer(request, path))


def _corpora(request: QueryRequest, catalog: CorpusCatalog) -> tuple[str, ...]:
    """The corpora to search: those asked for (each must exist), else every corpus the index holds."""
    known = catalog.names()
    corpora = request.corpora or tuple(known)
    unknown = [c for c in corpora if c not in known]
    if unknown:
        raise InvalidInput(f"unknown corpus {unknown}; available: {known}")
    if not corpora:
        raise InvalidInput("the index holds no documents yet; ingest some first")
    return corpora


def compose(
    q: Question,
    candidates: Sequence[Candidate],
    options: QueryOptions,
    *,
    source_text: Callable[[str], str | None],
    document_meta: DocumentMetaLookup | None = None,
    counterpart: CounterpartLookup | None = None,
) -> Answer:
    """What the `compose` function returns for candidates named by id (no retrieval evidence but their text):
    their verbatim quotes, or "no matching provision" below the relevance floor or with nothing quotable. The
    confidence rule is the query's, which reads the retrieval evidence.

    Args:
        source_text: doc_id → the stored document text, which every span must be a substring of.
        document_meta: doc_id → stored metadata, used to name newer versions of cited documents.
        counterpart: (citation, another version) → that version's corresponding article (citations.py).
    """
    ranked = measured(q, candidates, place_scope(q, options.place_scope))
    refused = floor_verdict(q, ranked, options.judge)
    if refused is not None:
        return abstention_for(q, Quotes(()), refused)
    quotes = quote(q, ranked, source_text, options.quote)
    if not quotes.bullets:
        return abstention_for(q, quotes, unquoted_verdict(q, ranked, options.judge))
    return quoted(q, quotes, document_meta, counterpart)


def _remote_answer(
    composer: Composer, q: Question, ranked: Sequence[Candidate], options: QueryOptions, lookups: StoreLookups
) -> tuple[Answer | None, str]:
    """The answer the `compose` function made, checked as if it were our own: every span verbatim in the stored
    text of the document it cites, every bullet from a candidate that was sent. None and the reason otherwise."""
    sent_candidates = ranked[: options.quote.top_n]
    try:
        body = composer.compose(q.text, [c.chunk.id for c in sent_candidates], q.filters.to_dict())
        given = Answer.from_dict(body, chinese_ratio(str(body.get("answer_zh", ""))))
    except Exception as exc:  # noqa: BLE001 - any failure of the remote call composes in process instead
        reason = getattr(exc, "reason", None) or "remote_invalid"
        logs.event(log, logging.WARNING, "remote compose failed; composing in process", reason=reason, error=str(exc))
        return None, f"fallback:{reason}"
    sent = {c.chunk.id for c in sent_candidates}
    for bullet in given.bullets:
        text = lookups.text(bullet.citation.doc_id)
        if bullet.chunk_id not in sent or text is None or not bullet.verbatim_in(text):
            logs.event(
                log, logging.ERROR, "remote compose returned a quote that is not verbatim", chunk=bullet.chunk_id
            )
            return None, "fallback:remote_not_verbatim"
    return given, COMPOSE_REMOTE
