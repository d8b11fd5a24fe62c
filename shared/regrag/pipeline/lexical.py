"""The lexical fields of a chunk and of a query, segmented by the same tokenizer."""

from __future__ import annotations

from regrag.domain.models import Chunk
from regrag.text.segment import tokenize


def chunk_tokens(chunk: Chunk) -> tuple[list[str], list[str]]:
    """(body tokens, title tokens): the chunk text, and its document title plus heading path."""
    return tokenize(chunk.search_text), tokenize(" ".join((chunk.meta.title, *chunk.heading_path)))


def query_tokens(question: str) -> list[str]:
    return tokenize(question)
