"""Feedback on answers, and its export as eval questions a maintainer can grade."""

from __future__ import annotations

import datetime as dt
from typing import Any

from regrag.domain.errors import NotFound
from regrag.inputs.parse import FeedbackRequest
from regrag.ports import FeedbackStore

ANSWER_FIELDS = ("answer_zh", "title", "bullets", "citations", "notes", "caution", "abstained", "dropped_spans")


def query_record(request_body: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """What to remember about a query: the question, filters, and the articles shown and cited; and the answer
    as the user saw it (every bullet's span, pieces and citation with its marker, the notes, the day it is
    about), which GET /query/{query_id}/export lays out for a memo."""
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
        "temporal": response.get("temporal"),
        "scope": response.get("scope"),
        "confidence": (response.get("confidence") or {}).get("level"),
        "answer": {k: response[k] for k in ANSWER_FIELDS if k in response},
    }


def record_feedback(request: FeedbackRequest, store: FeedbackStore) -> dict[str, Any]:
    """Store feedback on an answer this service gave (NotFound for an unknown query id)."""
    if store.get_query(request.query_id) is None:
        raise NotFound(f"unknown query_id {request.query_id}: feedback refers to a query this service answered")
    record: dict[str, Any] = {
        "query_id": request.query_id,
        "helpful": request.helpful,
        "citation": request.citation,
        "comment": request.comment,
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    store.add_feedback(record)
    return {"status": "recorded", "query_id": request.query_id}


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
