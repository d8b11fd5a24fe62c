"""Request bodies → typed requests, validated in one place with errors a caller can act on (HTTP 400).

Every HTTP endpoint and the CLI go through these parsers; the pipeline stages receive only the typed values.
Filters have their own module (regrag.pipeline.filters) because retrieval and evaluation use them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.ids import CORPUS_RE, QUERY_ID_RE
from regrag.domain.models import Filters
from regrag.pipeline.filters import parse_filters
from regrag.pipeline.reconcile import DEFAULT_MAX_REPUBLISH

MAX_QUESTION_CHARS = 2000
MAX_TOP_K = 100
MAX_CORPORA = 20
MAX_COMMENT_CHARS = 2000
MAX_REPUBLISH = 10_000


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
class CandidateRef:
    """A candidate named by id in a /rerank or /compose body; its text always comes from the store."""

    id: str
    score: float = 0.0


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


@dataclass(frozen=True)
class EvalRequest:
    """/admin/eval: a question file in the reports bucket and the cut-off k."""

    questions: str
    k: int = 10


def _object(body: Any, what: str = "request body") -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidInput(f"{what} must be a JSON object")
    return body


def parse_question(body: Any) -> str:
    question = _object(body).get("question")
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
        if not isinstance(name, str) or not CORPUS_RE.match(name):
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


def _parse_weights(body: dict[str, Any]) -> dict[str, float] | None:
    weights = body.get("corpus_weights")
    if weights is None:
        return None
    if not isinstance(weights, dict) or not all(
        isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 100
        for k, v in weights.items()
    ):
        raise InvalidInput("corpus_weights must map corpus names to numbers between 0 and 100")
    return {k: float(v) for k, v in weights.items()}


def parse_query_request(body: Any) -> QueryRequest:
    question = parse_question(body)
    filters = parse_filters(body.get("filters"))
    context = body.get("context")
    if context not in (None, "article", "section"):
        raise InvalidInput('context must be "article" or "section"')
    return QueryRequest(
        question,
        filters,
        parse_top_k(body),
        _parse_corpora(body, filters),
        _parse_float(body, "corpus_timeout_s", 0.05, 60.0),
        _parse_weights(body),
        context,
    )


def parse_candidates_request(body: Any) -> CandidatesRequest:
    """{question, candidates: [{id, score?} | id], filters?, top_n?}."""
    question = parse_question(body)
    raw = body.get("candidates")
    if not isinstance(raw, list) or not raw:
        raise InvalidInput("candidates must be a non-empty list of {id, score?}")
    refs = []
    for item in raw:
        cid = item.get("id") if isinstance(item, dict) else item
        if not isinstance(cid, str) or not cid:
            raise InvalidInput("each candidate needs a string 'id'")
        score = item.get("score", 0.0) if isinstance(item, dict) else 0.0
        refs.append(CandidateRef(cid, float(score) if isinstance(score, int | float) else 0.0))
    return CandidatesRequest(question, tuple(refs), parse_filters(body.get("filters")), parse_top_k(body, "top_n"))


def parse_feedback_request(body: Any) -> FeedbackRequest:
    """{query_id, helpful, citation?, comment?}."""
    body = _object(body, "feedback")
    unknown = set(body) - {"query_id", "helpful", "citation", "comment"}
    if unknown:
        raise InvalidInput(f"unknown feedback field(s) {sorted(unknown)}")
    query_id = body.get("query_id")
    if not isinstance(query_id, str) or not QUERY_ID_RE.match(query_id):
        raise InvalidInput("query_id must be the 32-hex-digit id a /query response returned")
    helpful = body.get("helpful")
    if not isinstance(helpful, bool):
        raise InvalidInput("helpful must be true or false")
    citation = body.get("citation")
    if citation is not None:
        if not isinstance(citation, dict) or not isinstance(citation.get("doc_id"), str):
            raise InvalidInput("citation must be an object with at least a doc_id (and the article)")
        citation = {k: citation[k] for k in ("doc_id", "article") if isinstance(citation.get(k), str)}
    comment = body.get("comment")
    if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS):
        raise InvalidInput(f"comment must be a string of at most {MAX_COMMENT_CHARS} characters")
    return FeedbackRequest(query_id, helpful, citation, comment)


def parse_reconcile_request(body: Any) -> ReconcileRequest:
    """{dry_run?, max_republish?} (Cloud Scheduler's body)."""
    body = _object(body)
    dry_run = body.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise InvalidInput("dry_run must be true or false")
    limit = body.get("max_republish", DEFAULT_MAX_REPUBLISH)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= MAX_REPUBLISH:
        raise InvalidInput(f"max_republish must be an integer between 0 and {MAX_REPUBLISH}")
    return ReconcileRequest(dry_run, limit)


def parse_eval_request(body: Any) -> EvalRequest:
    """{questions: "<object>.jsonl", k?}; the object name itself is checked where the file is read."""
    if not isinstance(body, dict) or not isinstance(body.get("questions"), str):
        raise InvalidInput('body must be {"questions": "<object name>.jsonl"}')
    k = body.get("k", 10)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 50:
        raise InvalidInput("k must be an integer between 1 and 50")
    return EvalRequest(body["questions"], k)
