"""query: question (+ filters) → hybrid retrieval → rerank → compose → the API response."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.models import Filters
from regrag.pipeline.compose import compose_answer
from regrag.pipeline.filters import parse_filters
from regrag.pipeline.rerank import rerank_candidates
from regrag.pipeline.retrieve import Retriever
from regrag.ports import ChunkStore

MAX_QUESTION_CHARS = 2000
MAX_TOP_K = 100


@dataclass(frozen=True)
class QueryRequest:
    question: str
    filters: Filters
    top_k: int | None = None


@dataclass(frozen=True)
class QueryOptions:
    rerank_enabled: bool = True
    rerank_top_n: int = 5
    compose_top_n: int = 5
    max_bullets: int = 4
    relevance_floor: float = 0.25


def parse_question(body: Any) -> str:
    if not isinstance(body, dict):
        raise InvalidInput("request body must be a JSON object")
    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("question is required and must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidInput(f"question is longer than {MAX_QUESTION_CHARS} characters")
    return question.strip()


def parse_top_k(body: dict[str, Any], key: str = "top_k") -> int | None:
    top_k = body.get(key)
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidInput(f"{key} must be an integer between 1 and {MAX_TOP_K}")
    return top_k


def parse_query_request(body: Any) -> QueryRequest:
    question = parse_question(body)
    return QueryRequest(question, parse_filters(body.get("filters")), parse_top_k(body))


def answer_question(
    request: QueryRequest, *, retriever: Retriever, reranker: object, store: ChunkStore, options: QueryOptions
) -> dict[str, Any]:
    """The whole query path; returns the API response body."""
    started = time.perf_counter()
    retrieval = retriever.retrieve(request.question, request.filters, request.top_k)
    timings = {f"retrieve_{k}": v for k, v in retrieval.timings_ms.items()}

    t = time.perf_counter()
    ranked, status = rerank_candidates(
        request.question, retrieval.candidates, reranker, top_n=options.rerank_top_n, enabled=options.rerank_enabled
    )
    timings["rerank"] = round((time.perf_counter() - t) * 1000, 2)

    t = time.perf_counter()

    def source_text(doc_id: str) -> str | None:
        found = store.get_document(doc_id)
        return found[1] if found else None

    answer = compose_answer(
        request.question,
        ranked,
        retrieval.filters,
        source_text=source_text,
        top_n=options.compose_top_n,
        max_bullets=options.max_bullets,
        relevance_floor=options.relevance_floor,
    )
    timings["compose"] = round((time.perf_counter() - t) * 1000, 2)
    timings["total"] = round((time.perf_counter() - started) * 1000, 2)
    return {
        "query_id": uuid.uuid4().hex,
        **answer.to_dict(),
        "candidates": [c.to_dict() for c in ranked],
        "rerank_status": status,
        "filters": retrieval.filters.to_dict(),
        "timings_ms": timings,
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
                "metadata": {"doc_id": data["doc_id"], "article": data["article"], **data["metadata"]},
            }
        )
    return out
