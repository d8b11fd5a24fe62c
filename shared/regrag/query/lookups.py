"""Per-request memoised reads of the store that quoting and rendering make per citation: stored texts, metadata,
and the article of another version that corresponds to a cited one."""

from __future__ import annotations

from typing import Any

from regrag.domain.models import DocumentMeta
from regrag.domain.results import Citation
from regrag.ports import ChunkStore
from regrag.views.version_diff import Article, articles_of, counterpart

# what the reader is told when no article of the other version reads like the cited one: the match is by wording
# (views/version_diff.py), so a rewritten article (旧噪声法 第五十六条 → 噪声污染防治法 第七十七条（二）) is missed,
# and "none corresponds" would state what was not checked
NO_COUNTERPART_NOTE = "未找到文字相近的条文：本条可能已被改写、拆分或删除，请查阅该版本全文"


class StoreLookups:
    """One request's reads of the store, each document read once."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self._docs: dict[str, tuple[DocumentMeta, str] | None] = {}
        self._articles: dict[str, list[Article]] = {}

    def _get(self, doc_id: str) -> tuple[DocumentMeta, str] | None:
        if doc_id not in self._docs:
            self._docs[doc_id] = self.store.get_document(doc_id)
        return self._docs[doc_id]

    def text(self, doc_id: str) -> str | None:
        found = self._get(doc_id)
        return found[1] if found else None

    def meta(self, doc_id: str) -> DocumentMeta | None:
        found = self._get(doc_id)
        return found[0] if found else None

    def articles(self, doc_id: str) -> list[Article]:
        if doc_id not in self._articles:
            self._articles[doc_id] = articles_of(self.store.document_chunks(doc_id))
        return self._articles[doc_id]

    def counterpart(self, citation: Citation, other: DocumentMeta) -> dict[str, Any] | None:
        """The article of `other` (another version) that corresponds to the cited one, or None."""
        cited = next((a for a in self.articles(citation.doc_id) if a.label == citation.article), None)
        if cited is None:
            return None
        found = counterpart(cited.label, cited.text, self.articles(other.doc_id))
        if found is None:
            return {
                "doc_id": other.doc_id,
                "title": other.title,
                "article": None,
                "text": None,
                "similarity": 0.0,
                "note": NO_COUNTERPART_NOTE,
            }
        article, score = found
        return {
            "doc_id": other.doc_id,
            "title": other.title,
            "article": article.label,
            "text": article.text,
            "similarity": round(score, 3),
        }
