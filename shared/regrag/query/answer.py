"""query: question (+ filters, corpora) → hybrid retrieval per corpus → rerank → compose → the API response."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from regrag import logs
from regrag.api.filters import parse_filters
from regrag.api.requests import QueryRequest
from regrag.domain.errors import InvalidInput
from regrag.domain.models import DocumentMeta, Filters
from regrag.domain.results import Answer, Candidate, Citation
from regrag.ports import ChunkStore, Composer, Reranker
from regrag.query import abstention, compose, temporal
from regrag.query.abstention import AbstentionRule
from regrag.query.compose import (
    RelevanceFloor,
    chinese_ratio,
    compose_answer,
    question_keywords,
    with_caution,
    with_note,
)
from regrag.query.confidence import Confidence, assess
from regrag.query.rerank import STATUS_SKIPPED, rerank_candidates
from regrag.query.retrieve import Retrieval, Retriever
from regrag.views.catalog import CorpusCatalog
from regrag.views.documents import structure_context
from regrag.views.version_diff import Article, articles_of, counterpart

log = logs.get("query")


@dataclass(frozen=True)
class QueryOptions:
    rerank_enabled: bool = True
    rerank_top_n: int = 5
    compose_top_n: int = 5
    max_bullets: int = 4
    floor: RelevanceFloor = field(default_factory=RelevanceFloor)
    abstention: AbstentionRule = field(default_factory=AbstentionRule)
    corpus_timeout_s: float = 3.0


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def answer_question(
    request: QueryRequest,
    *,
    retriever: Retriever,
    reranker: Reranker,
    store: ChunkStore,
    catalog: CorpusCatalog,
    options: QueryOptions,
    composer: Composer | None = None,
) -> dict[str, Any]:
    """The whole query path; returns the API response body. `composer`: compose remotely (the `compose`
    function), in process when it fails."""
    started = time.perf_counter()
    filters, as_of = temporal.resolve_as_of(request.question, request.filters, store.list_documents)
    retrieval = retriever.retrieve_corpora(
        request.question,
        filters,
        _corpora(request, catalog),
        top_k=request.top_k,
        timeout_s=request.corpus_timeout_s or options.corpus_timeout_s,
        weights=request.corpus_weights,
    )
    timings = {f"retrieve_{k}": v for k, v in retrieval.timings_ms.items()}

    t = time.perf_counter()
    ranked, status = rerank_candidates(
        request.question, retrieval.candidates, reranker, top_n=options.rerank_top_n, enabled=options.rerank_enabled
    )
    timings["rerank"] = _ms(t)

    t = time.perf_counter()
    answer, confidence, compose_status = _compose(
        request.question, ranked, retrieval.filters, status, store, options, composer
    )
    when = temporal.note(as_of)
    if when and not answer.abstained:
        answer = with_note(answer, when)
    timings["compose"] = _ms(t)
    extra: dict[str, Any] = {}
    if request.context:
        t = time.perf_counter()
        cited = [(b.citation.doc_id, b.citation.article) for b in answer.bullets]
        extra["context"] = structure_context(store, list(dict.fromkeys(cited)), request.context == "section")
        timings["context"] = _ms(t)
    if retrieval.aids.debug:
        # what the aids generated, for whoever debugs retrieval: never a source, never quoted
        extra["debug"] = dict(retrieval.aids.debug)
    timings["total"] = _ms(started)
    return {
        **extra,
        **_response(answer, confidence, ranked, status, retrieval),
        # the day the answer is about and why: a filter, a date the question names, or today
        "temporal": as_of.to_dict(),
        "compose_status": compose_status,
        "timings_ms": timings,
    }


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


COMPOSE_IN_PROCESS = "in_process"
COMPOSE_REMOTE = "remote"


def _compose(
    question: str,
    ranked: Sequence[Candidate],
    filters: Filters,
    rerank_status: str,
    store: ChunkStore,
    options: QueryOptions,
    composer: Composer | None = None,
) -> tuple[Answer, Confidence, str]:
    """Verbatim quotes from the ranked candidates, how far to trust them (a caution line when low), and where
    they were composed (compose_status: in_process, remote, or fallback:<reason> to in process)."""
    lookups = StoreLookups(store)
    answer, status = None, COMPOSE_IN_PROCESS
    if composer is not None:
        answer, status = remote_answer(composer, question, ranked[: options.compose_top_n], filters, lookups)
    if answer is None:
        answer = compose_answer(
            question,
            ranked,
            filters,
            source_text=lookups.text,
            top_n=options.compose_top_n,
            max_bullets=options.max_bullets,
            floor=options.floor,
            document_meta=lookups.meta,
            counterpart=lookups.counterpart,
        )
    answer, confidence = _judge(question, ranked, filters, rerank_status, options, answer)
    return answer, confidence, status


def remote_answer(
    composer: Composer, question: str, ranked: Sequence[Candidate], filters: Filters, lookups: StoreLookups
) -> tuple[Answer | None, str]:
    """The answer the `compose` function made, checked as if it were our own: every span verbatim in the stored
    text of the document it cites, every bullet from a candidate that was sent. None and the reason otherwise."""
    try:
        body = composer.compose(question, [c.chunk.id for c in ranked], filters.to_dict())
        answer = Answer.from_dict(body, chinese_ratio(str(body.get("answer_zh", ""))))
    except Exception as exc:  # noqa: BLE001 - any failure of the remote call composes in process instead
        reason = getattr(exc, "reason", None) or "remote_invalid"
        logs.event(log, logging.WARNING, "remote compose failed; composing in process", reason=reason, error=str(exc))
        return None, f"fallback:{reason}"
    sent = {c.chunk.id for c in ranked}
    for bullet in answer.bullets:
        text = lookups.text(bullet.citation.doc_id)
        if bullet.chunk_id not in sent or text is None or bullet.span not in text:
            logs.event(
                log, logging.ERROR, "remote compose returned a quote that is not verbatim", chunk=bullet.chunk_id
            )
            return None, "fallback:remote_not_verbatim"
    return answer, COMPOSE_REMOTE


def _judge(
    question: str,
    ranked: Sequence[Candidate],
    filters: Filters,
    rerank_status: str,
    options: QueryOptions,
    answer: Answer,
) -> tuple[Answer, Confidence]:
    """Confidence, and the answer-level abstention (query/abstention.py) with a caution line when low."""
    keywords = question_keywords(question)
    confidence = assess(ranked, answer, keywords, rerank_status=rerank_status, dense_floor=options.floor.dense)
    if answer.abstained:
        return answer, confidence
    seen = abstention.signals(question, keywords, answer, ranked, confidence.overall, options.compose_top_n)
    reasons = options.abstention.reasons(seen)
    confidence = replace(confidence, inputs={**confidence.inputs, "signals": seen.to_dict(), "reasons": reasons})
    if options.abstention.abstains(seen):
        # the quotes found do not answer: say so, with why; the candidates stay in the response as evidence
        answer = compose.abstention(question, filters)
        for reason in reasons:
            answer = with_note(answer, f"最接近的条文未予引用：{reason}")
        inputs = {**confidence.inputs, "abstained_by": "confidence"}
        return answer, replace(confidence, level="low", inputs=inputs)
    for caution in options.abstention.cautions(seen):
        answer = with_note(answer, f"请注意：{caution}")
    if confidence.level == "low":
        answer = with_caution(answer)
    return answer, confidence


def _response(
    answer: Answer, confidence: Confidence, ranked: Sequence[Candidate], rerank_status: str, retrieval: Retrieval
) -> dict[str, Any]:
    return {
        "query_id": uuid.uuid4().hex,
        **answer.to_dict(),
        "confidence": confidence.to_dict(),
        "candidates": [c.to_dict() for c in ranked],
        "rerank_status": rerank_status,
        # retrieval aids: ok | skipped (off) | fallback:<reason> (no extra leg; retrieval ran without it)
        "hyde_status": retrieval.aids.status.get("hyde", STATUS_SKIPPED),
        "questions_status": retrieval.aids.status.get("questions", STATUS_SKIPPED),
        "corpus_stats": [s.to_dict() for s in retrieval.corpus_stats],
        "filters": retrieval.filters.to_dict(),
        # the provinces the question names (their rules and national ones rank first); empty when none
        "scope": retrieval.scope.to_dict(),
    }


class StoreLookups:
    """Per-request memoised reads of the store that compose makes per citation: stored texts, metadata, and the
    article of another version that corresponds to a cited one."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self._docs: dict[str, tuple[DocumentMeta, str] | None] = {}
        self._articles: dict[str, list[Article]] = {}

    def _get(self, doc_id: str) -> tuple[DocumentMeta, str] | None:
        if doc_id not in self._docs:
            self._docs[doc_id] = self.store.get_document(doc_id)
        return self._docs[doc_id]

    def text(self, doc_id: str) -> str | None:
        found = self._get(doc_id)
        return found[1] if found else None

    def meta(self, doc_id: str) -> DocumentMeta | None:
        found = self._get(doc_id)
        return found[0] if found else None

    def articles(self, doc_id: str) -> list[Article]:
        if doc_id not in self._articles:
            self._articles[doc_id] = articles_of(self.store.document_chunks(doc_id))
        return self._articles[doc_id]

    def counterpart(self, citation: Citation, other: DocumentMeta) -> dict[str, Any] | None:
        """The article of `other` (another version) that corresponds to the cited one, or None."""
        cited = next((a for a in self.articles(citation.doc_id) if a.label == citation.article), None)
        if cited is None:
            return None
        found = counterpart(cited.label, cited.text, self.articles(other.doc_id))
        if found is None:
            return {"doc_id": other.doc_id, "title": other.title, "article": None, "text": None, "similarity": 0.0}
        article, score = found
        return {
            "doc_id": other.doc_id,
            "title": other.title,
            "article": article.label,
            "text": article.text,
            "similarity": round(score, 3),
        }


def retrieve_relevant_chunks(
    retriever: Retriever, query_text: str, top_k: int = 12, filters: Filters | dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Retrieval alone: [{id, chunk_text, source_document_name, score, metadata}], best first."""
    if not isinstance(query_text, str) or not query_text.strip():
        raise InvalidInput("query_text must be a non-empty string")
    parsed = filters if isinstance(filters, Filters) else parse_filters(filters)
    result = retriever.retrieve(query_text.strip(), parsed, top_k)
    out = []
    for cand in result.candidates:
        data = cand.to_dict()
        out.append(
            {
                "id": data["id"],
                "chunk_text": data["text"],
                "source_document_name": cand.chunk.meta.title,
                "score": data["score"],
                "metadata": {
                    "doc_id": data["doc_id"],
                    "article": data["article"],
                    "corpus": data["corpus"],
                    **data["metadata"],
                },
            }
        )
    return out
