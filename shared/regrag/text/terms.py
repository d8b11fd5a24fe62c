"""The lexical fields of a chunk and of a query, segmented by the same tokenizer."""

from __future__ import annotations

from regrag.domain.models import Chunk
from regrag.text.segment import index_terms, tokenize


def chunk_tokens(chunk: Chunk) -> tuple[list[str], list[str]]:
    """(body terms, title terms): the chunk text, and its document title plus heading path (words + characters)."""
    return index_terms(chunk.search_text), index_terms(" ".join((chunk.meta.title, *chunk.heading_path)))


def query_tokens(question: str) -> list[str]:
    return index_terms(question)


def question_words(question: str) -> list[str]:
    """The words of a question (jieba search mode, two characters or more, no stopwords), once each: what a saved
    question is matched on against a newly ingested document before it is asked again."""
    return list(dict.fromkeys(t for t in tokenize(question) if len(t) >= 2))
