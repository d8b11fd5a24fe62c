"""Citations of quoted spans, and what the reader must know about the cited version (a newer one exists, or is
promulgated but not yet in force), seen from the question's as-of date."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from regrag.domain.models import DocumentMeta
from regrag.domain.results import Bullet, Candidate, Citation


def citation_for(candidate: Candidate) -> Citation:
    meta = candidate.chunk.meta
    return Citation(
        meta.title,
        meta.effective_date,
        meta.source_url,
        meta.doc_id,
        candidate.chunk.article,
        meta.corpus,
        candidate.corpora or (meta.corpus,),
    )


def version_note(
    meta: DocumentMeta, successor: DocumentMeta | None, as_of: str | None, today: str
) -> tuple[str, dict[str, Any] | None, str | None]:
    """(status, successor summary, note) for a cited version, seen from the question's as-of date.

    The quotes always come from the version in force on `as_of`; the note tells the reader when a newer
    version exists (superseded) or is promulgated but takes effect later (upcoming).
    """
    if not meta.superseded_by or successor is None:
        return "in_force", None, None
    summary = {"doc_id": successor.doc_id, "title": successor.title, "effective_date": successor.effective_date}
    when = successor.effective_date or "日期不详"
    if successor.effective_date and successor.effective_date > today:
        return (
            "upcoming",
            summary,
            f"《{meta.title}》的新版本（生效：{when}）已公布，将于{when}起施行；以上引文为现行版本。",
        )
    day = as_of or today
    return (
        "superseded",
        summary,
        f"以上引用的《{meta.title}》（生效：{meta.effective_date}）是{day}时有效的版本，"
        f"已被新版本《{successor.title}》（生效：{when}）取代。",
    )


def annotate_versions(
    bullets: Sequence[Bullet],
    citations: Sequence[Citation],
    as_of: str | None,
    document_meta: Callable[[str], DocumentMeta | None],
) -> tuple[list[Bullet], list[Citation], list[str]]:
    """Each cited version's status and successor (on the citations and their bullets), and the notes to show."""
    today = dt.date.today().isoformat()
    notes: list[str] = []
    out: list[Citation] = []
    for cite in citations:
        meta = document_meta(cite.doc_id)
        if meta is None or not meta.superseded_by:
            out.append(cite)
            continue
        status, summary, note = version_note(meta, document_meta(meta.superseded_by), as_of, today)
        out.append(replace(cite, version_status=status, successor=summary))
        if note:
            notes.append(note)
    by_doc = {c.doc_id: c for c in out}
    annotated = [
        replace(
            b,
            citation=replace(
                b.citation,
                version_status=by_doc[b.citation.doc_id].version_status,
                successor=by_doc[b.citation.doc_id].successor,
            ),
        )
        for b in bullets
    ]
    return annotated, out, notes
