"""Views of stored documents: the whole text with article anchors, the version chain, the structure around a
cited article, and candidates named by id (for /rerank and /compose)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from regrag.domain.errors import NotFound
from regrag.domain.models import Chunk, DocumentMeta
from regrag.domain.requests import CandidateRef
from regrag.domain.results import Candidate
from regrag.ports import ChunkStore
from regrag.query.citations import IN_FORCE, version_status
from regrag.text.inference import UNKNOWN_PROVINCE
from regrag.text.legal import find_cross_references
from regrag.views import links
from regrag.views.version_diff import articles_of, diff_articles, summarize


def _stored(store: ChunkStore, doc_id: str) -> tuple[DocumentMeta, str]:
    found = store.get_document(doc_id)
    if found is None:
        raise NotFound(f"no document {doc_id!r}")
    return found


def document_view(store: ChunkStore, doc_id: str) -> dict[str, Any]:
    """GET /documents/{doc_id}: the stored text, metadata and every chunk's anchor (article, offsets, pages) with
    the articles it refers to ("依照本法第二十条": offsets in `text` and the chunk that article starts in); for
    PDFs and scans, where each page lies in `text` and how it was read (`pages_view`)."""
    meta, text = _stored(store, doc_id)
    chunks = store.document_chunks(doc_id)
    first_part = {c.article: c.id for c in chunks if c.kind == "article" and c.part == 0}
    hidden = ("provenance", "pages")  # pages: see "pages" below
    return {
        "doc_id": doc_id,
        "metadata": {k: v for k, v in meta.to_dict().items() if k not in hidden},
        "provenance": meta.provenance,
        # what a reader must know about the metadata itself, by field, in the words the page shows
        "notes": reader_notes(meta, _successor(store, meta)),
        # parent laws, implementing rules and repealed texts the texts state, resolved to stored documents
        "links": links.related(meta, store.list_documents()),
        "text": text,
        "pages": pages_view(meta),
        "anchors": [_anchor(c, first_part) for c in chunks],
    }


def library_view(
    store: ChunkStore, today: str, provinces: Sequence[str] = (), title: str | None = None
) -> dict[str, Any]:
    """GET /documents: what the library holds, for a reader choosing what to ask about and where: every document
    (of `provinces`, with `title` in its title), by corpus and title, with its province, class, dates and status
    today (in force, superseded, not yet in force); and how many documents in force each province has, over the
    whole library (what the page's province list shows beside each name)."""
    metas = store.list_documents()
    by_id = {m.doc_id: m for m in metas}
    statuses = {m.doc_id: version_status(m, by_id.get(m.superseded_by or ""), today, today).status for m in metas}
    in_force: dict[str, int] = {}
    for m in metas:
        if statuses[m.doc_id] == IN_FORCE:
            in_force[m.province] = in_force.get(m.province, 0) + 1
    chosen = [m for m in metas if (not provinces or m.province in provinces) and (not title or title in m.title)]
    chosen.sort(key=lambda m: (m.corpus, m.title, m.effective_date or ""))
    return {
        "documents": [
            {
                "doc_id": m.doc_id,
                "title": m.title,
                "corpus": m.corpus,
                "province": m.province,
                "doc_class": m.doc_class,
                "regulation_level": m.regulation_level,
                "promulgated": m.promulgated,
                "effective_date": m.effective_date,
                # the text does not record when this version took effect: the date needs checking (reader_notes)
                "effective_date_uncertain": m.effective_date_uncertain,
                "status": statuses[m.doc_id],
                "superseded_by": m.superseded_by,
            }
            for m in chosen
        ],
        "in_force_by_province": dict(sorted(in_force.items())),
    }


def _successor(store: ChunkStore, meta: DocumentMeta) -> DocumentMeta | None:
    found = store.get_document(meta.superseded_by) if meta.superseded_by else None
    return found[0] if found else None


def reader_notes(meta: DocumentMeta, successor: DocumentMeta | None = None) -> dict[str, str]:
    """Notes on the values a reader could take for settled when they are not: an effective date that is an
    amendment's adoption (its entry into force not in the text) or a date only the metadata gives, the end of a
    version set by such a date of its successor, a province the text does not tell, a text that may be cut short
    (no article says when it takes effect)."""
    notes: dict[str, str] = {}
    if meta.effective_date_uncertain and meta.amendment_line:
        notes["effective_date"] = (
            f"本文本最近一次修改（{meta.amendment_line}）的施行日期，正文未载明："
            f"{meta.effective_date}为该修改通过之日，实际施行日期可能较晚，请核对修改决定。"
        )
    elif meta.effective_date_uncertain:
        notes["effective_date"] = (
            f"{meta.effective_date}来自元数据，正文未载明（正文的施行条款、题注属于此前的文本）："
            "可能是修改通过之日，实际施行日期可能较晚，请核对。"
        )
    if meta.effective_to and successor is not None and successor.effective_date_uncertain:
        notes["effective_to"] = (
            f"失效日期为新版本《{successor.title}》的施行日期{successor.effective_date}，该日期待核：请核对新版本的施行日期。"
        )
    if meta.province == UNKNOWN_PROVINCE:
        notes["province"] = "标题和发文机关均未载明所属地区：本文件不视为全国性规定，请在元数据中注明地区。"
    if meta.may_be_incomplete:
        notes["text"] = (
            "本文本没有任何一条规定其施行日期（法规通常以“本…自…起施行”结束），可能不完整：请与官方文本核对。"
        )
    return notes


def pages_view(meta: DocumentMeta) -> dict[str, Any]:
    """The page map of a PDF or scan: each page's [start, end) in the stored text, whether OCR read it, its mean
    OCR confidence, the engine and model version that read it, and its OCR lines ([start, end, x0, y0, x1, y1
    in thousandths of the page, confidence]); the OCR engine; the pages OCR'd and those under the confidence
    threshold. Empty lists for other formats."""
    return {
        "count": len(meta.pages),
        "ocr_engine": meta.ocr_engine,
        "engines": {str(p.page): p.engine for p in meta.pages if p.engine},
        "ocr_pages": [p.page for p in meta.pages if p.ocr],
        "low_confidence_pages": list(meta.low_confidence_pages),
        "confidence": {str(p.page): round(p.confidence, 4) for p in meta.pages if p.confidence is not None},
        "spans": [p.to_dict() for p in meta.pages],
    }


def _anchor(chunk: Chunk, first_part: dict[str, str]) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "kind": chunk.kind,
        "article": chunk.article,
        "part": chunk.part,
        "parts": chunk.parts,
        "heading_path": list(chunk.heading_path),
        "start": chunk.start,
        "end": chunk.end,
        "pages": list(chunk.pages),
        # the link covers the article number alone, not its scope (本法) or paragraph (第二款)
        "references": [
            {
                "article": r.label,
                "start": chunk.start + r.label_start,
                "end": chunk.start + r.label_end,
                "target": first_part[r.label],
            }
            for r in find_cross_references(chunk.text)
            if r.label in first_part and r.label != chunk.article
        ],
    }


def version_chain(store: ChunkStore, doc_id: str) -> list[DocumentMeta]:
    """The supersedes chain through `doc_id`, oldest first (links to documents not stored end it)."""
    chain = [_stored(store, doc_id)[0]]
    seen = {doc_id}
    while chain[0].supersedes and chain[0].supersedes not in seen:
        older = store.get_document(chain[0].supersedes)
        if older is None:
            break
        seen.add(older[0].doc_id)
        chain.insert(0, older[0])
    while chain[-1].superseded_by and chain[-1].superseded_by not in seen:
        newer = store.get_document(chain[-1].superseded_by)
        if newer is None:
            break
        seen.add(newer[0].doc_id)
        chain.append(newer[0])
    return chain


def versions_view(store: ChunkStore, doc_id: str) -> dict[str, Any]:
    """GET /documents/{doc_id}/versions: the supersedes chain, oldest first, each version with both of its dates
    (公布, 施行) and when it stopped being in force; and, for each pair of consecutive versions, what changed:
    articles added, removed, renumbered and changed (matched by text and label, regrag.views.version_diff),
    with both texts. Unchanged articles are only counted."""
    chain = version_chain(store, doc_id)
    articles = {m.doc_id: articles_of(store.document_chunks(m.doc_id)) for m in chain}
    changes = []
    for older, newer in itertools.pairwise(chain):
        diff = diff_articles(articles[older.doc_id], articles[newer.doc_id])
        changes.append(
            {
                "from": older.doc_id,
                "to": newer.doc_id,
                "summary": summarize(diff),
                "articles": [c.to_dict() for c in diff if c.kind != "unchanged"],
            }
        )
    return {
        "doc_id": doc_id,
        "versions": [
            {
                "doc_id": m.doc_id,
                "title": m.title,
                "promulgated": m.promulgated,
                "effective_from": m.effective_date,
                "effective_to": m.effective_to,
                "supersedes": m.supersedes,
                "superseded_by": m.superseded_by,
                "corpus": m.corpus,
            }
            for m in chain
        ],
        "changes": changes,
    }


def stored_candidates(store: ChunkStore, refs: Sequence[CandidateRef]) -> list[Candidate]:
    """Candidates named by id in a request; texts always come from the store, never from the client."""
    chunks = {c.id: c for c in store.get_chunks([r.id for r in refs])}
    missing = [r.id for r in refs if r.id not in chunks]
    if missing:
        raise NotFound(f"unknown candidate id(s): {missing[:5]}")
    return [Candidate(chunks[r.id], r.score) for r in refs]


def structure_context(store: ChunkStore, cited: list[tuple[str, str]], siblings: bool) -> list[dict[str, Any]]:
    """For each cited article: its 编/章/节 heading path, the articles it refers to ("依照本法第二十条"), and with
    `siblings` the other articles of its 章/节, as context only: they are never quoted unless retrieved."""
    by_doc: dict[str, list[Chunk]] = {}
    out = []
    related: dict[str, dict[str, Any]] = {}
    documents: list[DocumentMeta] | None = None
    for doc_id, article in cited:
        if doc_id not in by_doc:
            by_doc[doc_id] = store.document_chunks(doc_id)
        units = article_units(by_doc[doc_id])
        unit = next((u for u in units if u["article"] == article), None)
        if unit is None:
            continue
        labels = {u["article"] for u in units if u["kind"] == "article"}
        refs = [
            {"article": r.label, "text": next(u["text"] for u in units if u["article"] == r.label)}
            for r in dict.fromkeys(find_cross_references(unit["text"]))
            if r.label in labels and r.label != article
        ]
        entry: dict[str, Any] = {
            "doc_id": doc_id,
            "article": article,
            "heading_path": unit["heading_path"],
            "references": list({r["article"]: r for r in refs}.values()),
        }
        if siblings:
            if doc_id not in related:
                documents = documents if documents is not None else store.list_documents()
                meta = next((m for m in documents if m.doc_id == doc_id), None)
                related[doc_id] = links.related(meta, documents) if meta else {}
            # the parent law, implementing rules and versions the text states: context, never quoted
            entry["links"] = related[doc_id]
            entry["siblings"] = [
                {"article": u["article"], "text": u["text"]}
                for u in units
                if u["heading_path"] == unit["heading_path"] and u["article"] != article and u["kind"] == unit["kind"]
            ]
        out.append(entry)
    return out


def article_units(chunks: list[Chunk]) -> list[dict[str, Any]]:
    """The chunks of a document joined back into whole articles (parts of a long article are consecutive)."""
    units: list[dict[str, Any]] = []
    for c in chunks:
        if units and units[-1]["ordinal"] == c.ordinal and c.part > 0:
            units[-1]["text"] += "\n" + c.text
            units[-1]["end"] = c.end
            continue
        units.append(
            {
                "article": c.article,
                "kind": c.kind,
                "ordinal": c.ordinal,
                "heading_path": list(c.heading_path),
                "text": c.text,
                "start": c.start,
                "end": c.end,
                "id": c.id,
            }
        )
    return units


def metadata_audit(store: ChunkStore) -> list[dict[str, Any]]:
    """Every stored document whose metadata ingest corrected or doubts: dates that disagree between its metadata
    and its text (both dates, where each came from, the clause, what ingest did), an effective date that is an
    amendment's adoption (`effective_date_uncertain`, with the header line recording the amendment), and what
    ingest doubted of the rest (`metadata_warnings`: a province the text does not tell, a text that may be cut
    short)."""
    return [
        {
            "doc_id": m.doc_id,
            "title": m.title,
            "corpus": m.corpus,
            "promulgated": m.promulgated,
            "effective_date": m.effective_date,
            "sources": {k: m.provenance.get(k) for k in ("promulgated", "effective_date")},
            "clause": m.effective_clause,
            "warnings": list(m.date_warnings),
            "effective_date_uncertain": m.effective_date_uncertain,
            "amendment_line": m.amendment_line,
            "province": m.province,
            "metadata_warnings": list(m.metadata_warnings),
            "may_be_incomplete": m.may_be_incomplete,
        }
        for m in store.list_documents()
        if m.date_warnings or m.effective_date_uncertain or m.metadata_warnings
    ]
