"""Request bodies → typed requests: checked against their schema (regrag.inputs.schemas: the same definitions
the OpenAPI document publishes), then converted. Errors name the field (HTTP 400).

Every HTTP endpoint and the CLI go through these parsers; the pipeline stages receive only the typed values.
Filters have their own module (regrag.inputs.filters) because retrieval and evaluation use them too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.models import Filters
from regrag.domain.requests import CandidateRef, QueryRequest
from regrag.inputs import schemas
from regrag.inputs.filters import parse_filters, vocabulary_codes
from regrag.inputs.schemas import DEFAULT_MAX_REPUBLISH


@dataclass(frozen=True)
class CandidatesRequest:
    """/rerank and /compose: a question and the candidates to reorder or quote."""

    question: str
    candidates: tuple[CandidateRef, ...]
    filters: Filters
    top_n: int | None = None


@dataclass(frozen=True)
class FeedbackRequest:
    query_id: str
    helpful: bool
    citation: dict[str, str] | None = None
    comment: str | None = None


@dataclass(frozen=True)
class ReconcileRequest:
    dry_run: bool = False
    max_republish: int = DEFAULT_MAX_REPUBLISH


# the evaluation's cut-off: Recall@10 and hit@10 beside nDCG@10, the metric conventions of the question sets
# (shared/eval/README.md)
EVAL_K = 10


@dataclass(frozen=True)
class CheckRequest:
    """/check: the document's text (or its uploaded file, by name and bytes) and the as-of day, when given."""

    text: str | None = None
    name: str | None = None
    data: bytes | None = None
    as_of: str | None = None


@dataclass(frozen=True)
class WatchRequest:
    """POST /watches: a document (`doc_id`), one of its articles (+ `article`, as the user typed it), or a saved
    question (`question` + `filters`); `owner`: who the alerts are for."""

    doc_id: str | None = None
    article: str | None = None
    question: str | None = None
    filters: Filters = field(default_factory=Filters)
    owner: str | None = None


@dataclass(frozen=True)
class AlertsQuery:
    """GET /alerts: alerts since a day or time (UTC), of one watch, at most `limit`, as JSON or Atom."""

    since: str | None = None
    watch_id: str | None = None
    limit: int = 100
    format: str = "json"


@dataclass(frozen=True)
class EvalRequest:
    """/admin/eval: a question file in the reports bucket and the cut-off k."""

    questions: str
    k: int = EVAL_K


def _body(schema: dict[str, Any], body: Any) -> dict[str, Any]:
    schemas.check(schema, body)
    return body  # type: ignore[no-any-return]


def parse_query_request(body: Any) -> QueryRequest:
    """POST /query {question, filters?, corpora?, corpus_timeout_s?, corpus_weights?, top_k?, context?}."""
    body = _body(schemas.QUERY, body)
    filters = parse_filters(body.get("filters"))
    corpora = body.get("corpora")
    if isinstance(corpora, str):
        corpora = [corpora]
    weights = body.get("corpus_weights")
    timeout = body.get("corpus_timeout_s")
    return QueryRequest(
        question=body["question"].strip(),
        filters=filters,
        top_k=body.get("top_k"),
        corpora=tuple(dict.fromkeys(corpora)) if corpora else (filters.corpus or None),
        corpus_timeout_s=float(timeout) if timeout is not None else None,
        corpus_weights={k: float(v) for k, v in weights.items()} if weights is not None else None,
        context=body.get("context"),
    )


def parse_candidates_request(body: Any) -> CandidatesRequest:
    """POST /rerank and /compose {question, candidates: [{id, score?} | id], filters?, top_n?}; a candidate named
    twice counts once (its first mention)."""
    body = _body(schemas.CANDIDATES, body)
    refs: dict[str, CandidateRef] = {}
    for item in body["candidates"]:
        cid = item["id"] if isinstance(item, dict) else item
        score = item.get("score", 0.0) if isinstance(item, dict) else 0.0
        refs.setdefault(cid, CandidateRef(cid, float(score)))
    return CandidatesRequest(
        body["question"].strip(), tuple(refs.values()), parse_filters(body.get("filters")), body.get("top_n")
    )


def parse_feedback_request(body: Any) -> FeedbackRequest:
    """POST /feedback {query_id, helpful, citation?, comment?}."""
    body = _body(schemas.FEEDBACK, body)
    citation = body.get("citation")
    if citation is not None:
        citation = {k: citation[k] for k in ("doc_id", "article") if isinstance(citation.get(k), str)}
    return FeedbackRequest(body["query_id"], body["helpful"], citation, body.get("comment"))


def parse_reconcile_request(body: Any) -> ReconcileRequest:
    """POST {dry_run?, max_republish?} (Cloud Scheduler's body)."""
    body = _body(schemas.RECONCILE, body)
    return ReconcileRequest(body.get("dry_run", False), body.get("max_republish", DEFAULT_MAX_REPUBLISH))


def parse_check_request(body: Any) -> CheckRequest:
    """POST /check {text, as_of?}."""
    body = _body(schemas.CHECK, body)
    return CheckRequest(text=body["text"], as_of=body.get("as_of"))


def parse_check_upload(name: str | None, data: bytes, as_of: str | None) -> CheckRequest:
    """POST /check as multipart/form-data: `file` (its name and bytes) and `as_of`."""
    if not name:
        raise InvalidInput("file: send the document as the form field 'file', with its file name")
    if as_of:
        schemas.check(schemas.CHECK_AS_OF, as_of, "as_of")
    return CheckRequest(name=name, data=data, as_of=as_of or None)


def parse_eval_request(body: Any) -> EvalRequest:
    """POST /admin/eval {questions: "<object>.jsonl", k?}."""
    body = _body(schemas.EVAL, body)
    return EvalRequest(body["questions"], body.get("k", EVAL_K))


def parse_watch_request(body: Any) -> WatchRequest:
    """POST /watches {doc_id, article?, owner?} or {question, filters?, owner?}."""
    body = _body(schemas.WATCH, body)
    doc_id, question = body.get("doc_id"), body.get("question")
    if (doc_id is None) == (question is None):
        raise InvalidInput("send either doc_id (with article, to watch one article) or question (with filters)")
    if doc_id is not None and "filters" in body:
        raise InvalidInput("filters belong to a saved question: a document watch takes doc_id and article only")
    if question is not None and "article" in body:
        raise InvalidInput("article belongs to a document watch: send doc_id and article, or a question")
    owner = body.get("owner")
    return WatchRequest(
        doc_id=doc_id,
        article=body.get("article"),
        question=question.strip() if question is not None else None,
        filters=parse_filters(body.get("filters")),
        owner=owner.strip() if owner else None,
    )


def parse_alerts_query(args: Mapping[str, str]) -> AlertsQuery:
    """GET /alerts?since=&watch_id=&limit=&format= (json | atom)."""
    values = {k: v for k, v in args.items()}
    schemas.check(schemas.ALERTS_QUERY, values, "query")
    limit = int(values.get("limit", 100))
    if not 1 <= limit <= schemas.MAX_ALERTS:
        raise InvalidInput(f"query.limit must be a number between 1 and {schemas.MAX_ALERTS}")
    return AlertsQuery(_since(values.get("since")), values.get("watch_id"), limit, values.get("format", "json"))


def _since(raw: str | None) -> str | None:
    """A day stays a day (YYYY-MM-DD compares before every time of that day); a time becomes UTC, as alerts are
    stamped."""
    if not raw:
        return None
    try:
        if len(raw) == 10:
            return dt.date.fromisoformat(raw).isoformat()
        moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00").replace(" ", "T"))
    except ValueError as exc:
        raise InvalidInput(f"query.since={raw!r} is not a date or time (YYYY-MM-DD or ISO 8601)") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class DocumentsQuery:
    """GET /documents: the library's documents, of some provinces, whose title holds some words."""

    provinces: tuple[str, ...] = ()
    title: str | None = None


def parse_documents_query(args: Mapping[str, str]) -> DocumentsQuery:
    """GET /documents?province=gd,national&title=供用电."""
    values = {k: v for k, v in args.items()}
    schemas.check(schemas.DOCUMENTS_QUERY, values, "query")
    # read as the query filter's province is (filters.vocabulary_codes): SH, national → sh, national
    province = values.get("province")
    provinces = vocabulary_codes("province", province, "query.province") if province else ()
    return DocumentsQuery(provinces, values.get("title", "").strip() or None)


def parse_export_format(args: Mapping[str, str], default: str = "docx") -> str:
    """?format=docx | md."""
    values = {k: v for k, v in args.items()}
    schemas.check(schemas.EXPORT_QUERY, values, "query")
    return str(values.get("format", default))
