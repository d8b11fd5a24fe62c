"""rerank: reorder retrieval candidates for the question; on any failure, keep the retrieval order.

The Gemini scorer lives in an adapter behind the `Reranker` port. Without a key (or with RERANK=false)
the stage answers the retrieval order with rerank_status "skipped".
"""

from __future__ import annotations

from collections.abc import Sequence

from regrag.domain.models import Candidate

STATUS_OK = "ok"
STATUS_SKIPPED = "skipped"


class RetrievalOrderReranker:
    """The fallback: keeps the fused retrieval order. Used when no model is configured."""

    def __init__(self, reason: str = STATUS_SKIPPED) -> None:
        self.reason = reason

    def rerank(self, question: str, candidates: Sequence[Candidate], top_n: int) -> tuple[list[Candidate], str]:
        return list(candidates), self.reason


def rerank_candidates(
    question: str, candidates: Sequence[Candidate], reranker: object, *, top_n: int, enabled: bool = True
) -> tuple[list[Candidate], str]:
    """Apply `reranker` unless disabled or pointless (no more candidates than `top_n`)."""
    if not enabled or len(candidates) <= 1:
        return list(candidates), STATUS_SKIPPED
    reordered, status = reranker.rerank(question, candidates, top_n)  # type: ignore[attr-defined]
    return list(reordered), status
