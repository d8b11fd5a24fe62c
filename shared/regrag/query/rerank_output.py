"""The reranker's contract with the model: the JSON schema it must answer, and its answer turned into scores.

The model's output is data from outside: indices are checked against the candidates sent, scores clamped to
1–10, duplicates and unknown indices ignored; an answer without one usable item is InvalidRerankOutput.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from regrag.domain.results import Candidate

MIN_SCORE, MAX_SCORE = 1.0, 10.0
MAX_REASON_CHARS = 200

# (position in the candidates sent, 0-based) → (score clamped to 1–10, reason or None)
Scores = dict[int, tuple[float, str | None]]


class InvalidRerankOutput(ValueError):
    """The model's JSON parsed but holds no usable {index, score} item."""


def response_schema(count: int) -> dict[str, Any]:
    """The answer's shape: [{"index": 1..count, "score": 1..10, "reason": str}], one item per candidate.

    The service enforces it (responseSchema); `parse_scores` still checks every item, because a schema
    narrows what a model emits without making its output trustworthy.
    """
    return {
        "type": "array",
        "minItems": count,
        "maxItems": count,
        "items": {
            "type": "object",
            "properties": {
                "index": {"type": "integer", "minimum": 1, "maximum": count},
                "score": {"type": "integer", "minimum": int(MIN_SCORE), "maximum": int(MAX_SCORE)},
                "reason": {"type": "string"},
            },
            "required": ["index", "score", "reason"],
            "propertyOrdering": ["index", "score", "reason"],
        },
    }


def _as_index(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _as_score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return min(MAX_SCORE, max(MIN_SCORE, float(value)))


def parse_scores(raw: Any, count: int) -> Scores:
    """Validate the model's answer: keep items with a known 1-based index and a numeric score.

    Scores outside 1–10 are clamped; unknown indices, repeated indices (the first usable item counts) and items
    without a numeric score are ignored. Raises InvalidRerankOutput if nothing usable is left.
    """
    if not isinstance(raw, list):
        raise InvalidRerankOutput(f"expected a JSON array, got {type(raw).__name__}")
    scores: Scores = {}
    for item in raw:
        if not isinstance(item, dict):
            continue
        index = _as_index(item.get("index"))
        score = _as_score(item.get("score"))
        if index is None or not 1 <= index <= count or index - 1 in scores or score is None:
            continue
        reason = item.get("reason")
        reason = reason.strip()[:MAX_REASON_CHARS] if isinstance(reason, str) and reason.strip() else None
        scores[index - 1] = (score, reason)
    if not scores:
        raise InvalidRerankOutput(f"none of the {len(raw)} items has a known index and a numeric score")
    return scores


def apply_scores(candidates: Sequence[Candidate], scores: Scores, top_n: int) -> list[Candidate]:
    """The top_n best-scored candidates (ties: retrieval order), then all the others in retrieval order."""
    scored = [
        replace(c, rerank_score=scores[i][0], rerank_reason=scores[i][1]) if i in scores else c
        for i, c in enumerate(candidates)
    ]
    top = sorted(scores, key=lambda i: (-scores[i][0], i))[:top_n]
    chosen = set(top)
    return [scored[i] for i in top] + [c for i, c in enumerate(scored) if i not in chosen]
