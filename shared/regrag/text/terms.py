"""The lexical fields of a chunk and of a query, segmented by the same tokenizer."""

from __future__ import annotations

from regrag.domain.models import Chunk
from regrag.text.segment import index_terms


def chunk_tokens(chunk: Chunk) -> tuple[list[str], list[str]]:
    """(body terms, title terms): the chunk text, and its document title plus heading path (words + characters)."""
    return index_terms(chunk.search_text), index_terms(" ".join((chunk.meta.title, *chunk.heading_path)))


def query_tokens(question: str) -> list[str]:
    return index_terms(question)
