"""query: question (+ filters, corpora) → hybrid retrieval per corpus → rerank → compose → the API response."""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.models import Chunk, DocumentMeta, Filters
from regrag.pipeline.compose import RelevanceFloor, compose_answer, question_keywords, with_caution
from regrag.pipeline.confidence import assess
from regrag.pipeline.filters import parse_filters
from regrag.pipeline.rerank import STATUS_SKIPPED, rerank_candidates
from regrag.pipeline.retrieve import Retriever
from regrag.ports import ChunkStore
from regrag.text.legal import find_cross_references

MAX_QUESTION_CHARS = 2000
MAX_TOP_K = 100
MAX_CORPORA = 20
_CORPUS_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


@dataclass(frozen=True)
class QueryRequest:
    question: str
    filters: Filters
    top_k: int | None = None
    corpora: tuple[str, ...] | None = None  # None: every corpus
    corpus_timeout_s: float | None = None
    corpus_weights: dict[str, float] | None = None
    context: str | None = None  # None | "article" | "section"


@dataclass(frozen=True)
class QueryOptions:
    rerank_enabled: bool = True
    rerank_top_n: int = 5
    compose_top_n: int = 5
    max_bullets: int = 4
    floor: RelevanceFloor = field(default_factory=RelevanceFloor)
    corpus_timeout_s: float = 3.0


class CorpusCatalog:
    """The corpora the index holds, read from the store and cached briefly (listing them is not free)."""

    def __init__(self, store: ChunkStore, ttl_s: float = 30.0) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self._cached: tuple[float, list[dict[str, Any]]] | None = None
        self._lock = threading.Lock()

    def entries(self) -> list[dict[str, Any]]:
        """[{corpus, documents, chunks}], sorted by name."""
        with self._lock:
            now = time.monotonic()
            if self._cached is None or now - self._cached[0] > self.ttl_s:
                self._cached = (now, list(self.store.stats().get("corpora", [])))
            return list(self._cached[1])

    def names(self) -> list[str]:
        return [c["corpus"] for c in self.entries()]

    def invalidate(self) -> None:
        with self._lock:
            self._cached = None


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


def _parse_corpora(body: dict[str, Any], filters: Filters) -> tuple[str, ...] | None:
    raw = body.get("corpora")
    if raw is None:
        return filters.corpus or None
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise InvalidInput("corpora must be a list of corpus names")
    if not raw:
        raise InvalidInput("corpora is empty: select at least one corpus (or leave it out to search all)")
    if len(raw) > MAX_CORPORA:
        raise InvalidInput(f"at most {MAX_CORPORA} corpora per request, got {len(raw)}")
    names = []
    for name in raw:
        if not isinstance(name, str) or not _CORPUS_RE.match(name):
            raise InvalidInput(f"invalid corpus name {name!r}")
        names.append(name)
    return tuple(dict.fromkeys(names))


def _parse_float(body: dict[str, Any], key: str, low: float, high: float) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InvalidInput(f"{key} must be a number between {low} and {high}")
    return float(value)


def parse_query_request(body: Any) -> QueryRequest:
    question = parse_question(body)
    filters = parse_filters(body.get("filters"))
    weights = body.get("corpus_weights")
    if weights is not None:
        if not isinstance(weights, dict) or not all(
            isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 100
            for k, v in weights.items()
        ):
            raise InvalidInput("corpus_weights must map corpus names to numbers between 0 and 100")
        weights = {k: float(v) for k, v in weights.items()}
    context = body.get("context")
    if context not in (None, "article", "section"):
        raise InvalidInput('context must be "article" or "section"')
    return QueryRequest(
        question,
        filters,
        parse_top_k(body),
        _parse_corpora(body, filters),
        _parse_float(body, "corpus_timeout_s", 0.05, 60.0),
        weights,
        context,
    )


def answer_question(
    request: QueryRequest,
    *,
    retriever: Retriever,
    reranker: object,
    store: ChunkStore,
    catalog: CorpusCatalog,
    options: QueryOptions,
) -> dict[str, Any]:
    """The whole query path; returns the API response body."""
    started = time.perf_counter()
    known = catalog.names()
    corpora = request.corpora or tuple(known)
    unknown = [c for c in corpora if c not in known]
    if unknown:
        raise InvalidInput(f"unknown corpus {unknown}; available: {known}")
    if not corpora:
        raise InvalidInput("the index holds no documents yet; ingest some first")
    retrieval = retriever.retrieve_corpora(
        request.question,
        request.filters,
        corpora,
        top_k=request.top_k,
        timeout_s=request.corpus_timeout_s or options.corpus_timeout_s,
        weights=request.corpus_weights,
    )
    timings = {f"retrieve_{k}": v for k, v in retrieval.timings_ms.items()}

    t = time.perf_counter()
    ranked, status = rerank_candidates(
        request.question, retrieval.candidates, reranker, top_n=options.rerank_top_n, enabled=options.rerank_enabled
    )
    timings["rerank"] = round((time.perf_counter() - t) * 1000, 2)

    t = time.perf_counter()
    source_text, document_meta = store_lookups(store)
    answer = compose_answer(
        request.question,
        ranked,
        retrieval.filters,
        source_text=source_text,
        top_n=options.compose_top_n,
        max_bullets=options.max_bullets,
        floor=options.floor,
        document_meta=document_meta,
    )
    confidence = assess(
        ranked, answer, question_keywords(request.question), rerank_status=status, dense_floor=options.floor.dense
    )
    if confidence.level == "low" and not answer.abstained:
        answer = with_caution(answer)
    timings["compose"] = round((time.perf_counter() - t) * 1000, 2)
    extra: dict[str, Any] = {}
    if request.context:
        t = time.perf_counter()
        cited = [(b.citation.doc_id, b.citation.article) for b in answer.bullets]
        extra["context"] = structure_context(store, list(dict.fromkeys(cited)), request.context == "section")
        timings["context"] = round((time.perf_counter() - t) * 1000, 2)
    if retrieval.aids.debug:
        # what the aids generated, for whoever debugs retrieval: never a source, never quoted
        extra["debug"] = dict(retrieval.aids.debug)
    timings["total"] = round((time.perf_counter() - started) * 1000, 2)
    return {
        **extra,
        "query_id": uuid.uuid4().hex,
        **answer.to_dict(),
        "confidence": confidence.to_dict(),
        "candidates": [c.to_dict() for c in ranked],
        "rerank_status": status,
        # retrieval aids: ok | skipped (off) | fallback:<reason> (no extra leg; retrieval ran without it)
        "hyde_status": retrieval.aids.status.get("hyde", STATUS_SKIPPED),
        "questions_status": retrieval.aids.status.get("questions", STATUS_SKIPPED),
        "corpus_stats": [s.to_dict() for s in retrieval.corpus_stats],
        "filters": retrieval.filters.to_dict(),
        # the provinces the question names (their rules and national ones rank first); empty when none
        "scope": retrieval.scope.to_dict(),
        "timings_ms": timings,
    }


def structure_context(store: ChunkStore, cited: list[tuple[str, str]], siblings: bool) -> list[dict[str, Any]]:
    """For each cited article: its 编/章/节 heading path, the articles it refers to ("依照本法第二十条"), and with
    `siblings` the other articles of its 章/节, as context only: they are never quoted unless retrieved."""
    by_doc: dict[str, list[Chunk]] = {}
    out = []
    for doc_id, article in cited:
        if doc_id not in by_doc:
            by_doc[doc_id] = store.document_chunks(doc_id)
        units = article_units(by_doc[doc_id])
        unit = next((u for u in units if u["article"] == article), None)
        if unit is None:
            continue
        labels = {u["article"] for u in units if u["kind"] == "article"}
        refs = [
            {"article": r.label, "text": next(u["text"] for u in units if u["article"] == r.label)}
            for r in dict.fromkeys(find_cross_references(unit["text"]))
            if r.label in labels and r.label != article
        ]
        entry: dict[str, Any] = {
            "doc_id": doc_id,
            "article": article,
            "heading_path": unit["heading_path"],
            "references": list({r["article"]: r for r in refs}.values()),
        }
        if siblings:
            entry["siblings"] = [
                {"article": u["article"], "text": u["text"]}
                for u in units
                if u["heading_path"] == unit["heading_path"] and u["article"] != article and u["kind"] == unit["kind"]
            ]
        out.append(entry)
    return out


def article_units(chunks: list[Chunk]) -> list[dict[str, Any]]:
    """The chunks of a document joined back into whole articles (parts of a long article are consecutive)."""
    units: list[dict[str, Any]] = []
    for c in chunks:
        if units and units[-1]["ordinal"] == c.ordinal and c.part > 0:
            units[-1]["text"] += "\n" + c.text
            units[-1]["end"] = c.end
            continue
        units.append(
            {
                "article": c.article,
                "kind": c.kind,
                "ordinal": c.ordinal,
                "heading_path": list(c.heading_path),
                "text": c.text,
                "start": c.start,
                "end": c.end,
                "id": c.id,
            }
        )
    return units


def store_lookups(store: ChunkStore) -> tuple[Callable[[str], str | None], Callable[[str], DocumentMeta | None]]:
    """Per-request memoised lookups of stored text and metadata by doc id (compose calls them per citation)."""
    cache: dict[str, tuple[DocumentMeta, str] | None] = {}

    def get(doc_id: str) -> tuple[DocumentMeta, str] | None:
        if doc_id not in cache:
            cache[doc_id] = store.get_document(doc_id)
        return cache[doc_id]

    def text(doc_id: str) -> str | None:
        found = get(doc_id)
        return found[1] if found else None

    def meta(doc_id: str) -> DocumentMeta | None:
        found = get(doc_id)
        return found[0] if found else None

    return text, meta


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
