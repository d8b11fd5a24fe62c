"""The typed requests the read path receives (parsed and checked at the edge: regrag.inputs.parse)."""

from __future__ import annotations

from dataclasses import dataclass

from regrag.domain.models import Filters


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
