"""The search ports over the local SQLite store (regrag.adapters.local.chunk_store): thin views that name which
of its legs they search, as regrag.adapters.gcp.search_index does over one Vertex AI index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from regrag.adapters.local.chunk_store import SqliteIndex
from regrag.domain.models import Chunk, Filters, Hit


class SqliteVectorIndex:
    """VectorIndex view of a SqliteIndex."""

    def __init__(self, db: SqliteIndex) -> None:
        self.db = db

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None:
        self.db.upsert_vectors(chunks, vectors)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.db.delete_vectors(chunk_ids)

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        return self.db.search_vectors(vector, filters, k)

    def warm(self) -> None:
        self.db.snapshot()

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        self.db.refresh_metadata(chunks)


class SqliteQuestionIndex:
    """QuestionIndex view of a SqliteIndex: generated questions' vectors, filtered through their chunks."""

    def __init__(self, db: SqliteIndex) -> None:
        self.db = db

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[np.ndarray]]) -> None:
        self.db.upsert_questions(chunks, vectors)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.db.delete_questions(chunk_ids)

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        return self.db.search_questions(vector, filters, k)


class SqliteLexicalIndex:
    """LexicalIndex view of a SqliteIndex (BM25 on segmented tokens)."""

    def __init__(self, db: SqliteIndex) -> None:
        self.db = db
        self.title_weight = db.bm25.title_weight  # title and heading tokens count this much each

    def upsert(
        self, chunks: Sequence[Chunk], body_tokens: Sequence[Sequence[str]], title_tokens: Sequence[Sequence[str]]
    ) -> None:
        self.db.upsert_lexical(chunks, body_tokens, title_tokens, self.title_weight)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.db.delete_lexical(chunk_ids)

    def search(self, tokens: Sequence[str], filters: Filters, k: int) -> list[Hit]:
        return self.db.search_lexical(tokens, filters, k)

    def warm(self) -> None:
        self.db.snapshot()

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        self.db.refresh_metadata(chunks)
