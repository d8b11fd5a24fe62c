"""Links between documents that their texts state: the law a regulation implements (根据《…》，制定本条例), the
regulations that implement a law, and the texts a version repeals (……同时废止), matched to stored documents by
title."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from regrag.domain.models import IMPLEMENTS, REPEALS, DocumentMeta
from regrag.text.relations import title_key


def resolve(title: str, documents: Iterable[DocumentMeta], corpus: str | None = None) -> list[DocumentMeta]:
    """The stored documents titled `title` (same key: 《》, spaces and the 中华人民共和国 prefix aside), newest first;
    those of `corpus` first when given."""
    key = title_key(title)
    found = [m for m in documents if title_key(m.title) == key]
    found.sort(key=lambda m: (m.corpus != corpus, _minus(m.effective_date)))
    return found


def _minus(day: str | None) -> str:
    # newest first within a corpus: sort on the complement of each digit
    return "".join(chr(ord("9") - ord(c) + ord("0")) if c.isdigit() else c for c in (day or "0000-00-00"))


def related(meta: DocumentMeta, documents: list[DocumentMeta]) -> dict[str, Any]:
    """GET /documents/{id}'s `links`: parent laws, implementing rules, repealed texts, versions."""

    def ref(r: Any) -> dict[str, Any]:
        match = resolve(r.title, documents, meta.corpus)
        target = next((m for m in match if m.doc_id != meta.doc_id), None)
        return {"title": r.title, "doc_id": target.doc_id if target else None, "clause": r.clause, "date": r.date}

    key = title_key(meta.title)
    implemented_by = [
        {"doc_id": m.doc_id, "title": m.title, "effective_date": m.effective_date, "corpus": m.corpus}
        for m in documents
        if m.doc_id != meta.doc_id and any(title_key(r.title) == key for r in m.titled(IMPLEMENTS))
    ]
    return {
        "implements": [ref(r) for r in meta.titled(IMPLEMENTS)],
        "implemented_by": sorted(implemented_by, key=lambda d: (d["corpus"], d["title"])),
        "repeals": [ref(r) for r in meta.titled(REPEALS)],
        "supersedes": meta.supersedes,
        "superseded_by": meta.superseded_by,
    }
