"""regrag: question answering over Chinese energy regulations, with verbatim quotes and citations."""

from __future__ import annotations

from typing import Any

from regrag.version import __version__

__all__ = ["__version__", "retrieve_relevant_chunks"]


def retrieve_relevant_chunks(
    query_text: str, top_k: int = 12, filters: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Hybrid retrieval alone, on the process-wide services built from the environment (REGRAG_* settings).

    Returns [{id, chunk_text, source_document_name, score, metadata}], best first; metadata carries doc_id,
    article, corpus, heading path, dates and the other document fields. Filters as in POST /query.
    """
    from regrag.api.endpoints import retrieve_relevant_chunks as retrieve
    from regrag.wiring import get_services

    return retrieve(get_services().retriever, query_text, top_k, filters)
