"""Feedback on answers, and its export as eval questions a maintainer can grade."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from regrag.domain.errors import InvalidInput, NotFound
from regrag.ports import FeedbackStore

MAX_COMMENT_CHARS = 2000
_QUERY_ID_RE = re.compile(r"^[0-9a-f]{32}$")


def query_record(request_body: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """What to remember about a query: the question, filters, and the articles shown and cited."""
    return {
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "question": response.get("question") or request_body.get("question"),
        "filters": response.get("filters", {}),
        "corpora": [s["corpus"] for s in response.get("corpus_stats", [])],
        "candidates": [
            {"doc_id": c["doc_id"], "article": c["article"], "title": c["title"]}
            for c in response.get("candidates", [])[:10]
        ],
        "cited": [
            {"doc_id": b["citation"]["doc_id"], "article": b["citation"]["article"]}
            for b in response.get("bullets", [])
        ],
        "abstained": response.get("abstained"),
        "rerank_status": response.get("rerank_status"),
    }


def parse_feedback(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidInput("feedback must be a JSON object {query_id, helpful, citation?, comment?}")
    unknown = set(body) - {"query_id", "helpful", "citation", "comment"}
    if unknown:
        raise InvalidInput(f"unknown feedback field(s) {sorted(unknown)}")
    query_id = body.get("query_id")
    if not isinstance(query_id, str) or not _QUERY_ID_RE.match(query_id):
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
    return {"query_id": query_id, "helpful": helpful, "citation": citation, "comment": comment}


def record_feedback(body: Any, store: FeedbackStore) -> dict[str, Any]:
    record = parse_feedback(body)
    if store.get_query(record["query_id"]) is None:
        raise NotFound(f"unknown query_id {record['query_id']}: feedback refers to a query this service answered")
    record["time"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    store.add_feedback(record)
    return {"status": "recorded", "query_id": record["query_id"]}


def export_questions(store: FeedbackStore) -> list[dict[str, Any]]:
    """Feedback as eval questions (the shape of shared/eval/dev.jsonl) for a maintainer to grade.

    Each question lists the articles the user saw; `relevant` starts with the article the user pointed to (grade
    3 when the answer helped, 0 when it did not) and the maintainer completes the grades.
    """
    out: dict[str, dict[str, Any]] = {}
    for fb in store.list_feedback():
        query = fb.get("query") or {}
        qid = f"fb-{fb['query_id'][:12]}"
        entry = out.setdefault(
            qid,
            {
                "id": qid,
                "question": query.get("question"),
                "filters": query.get("filters") or {},
                "relevant": [],
                "answerable": True,
                "type": "feedback",
                "feedback": [],
                "shown": query.get("candidates", []),
                "cited": query.get("cited", []),
                "needs_grading": True,
            },
        )
        entry["feedback"].append({"helpful": fb["helpful"], "comment": fb.get("comment"), "time": fb["time"]})
        cite = fb.get("citation")
        if cite and cite.get("article"):
            grade = 3 if fb["helpful"] else 0
            if not any(r["doc_id"] == cite["doc_id"] and r["article"] == cite["article"] for r in entry["relevant"]):
                entry["relevant"].append({"doc_id": cite["doc_id"], "article": cite["article"], "grade": grade})
    return list(out.values())
