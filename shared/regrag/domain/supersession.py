"""The one rule that links two stored versions of a regulation, whichever arrives (or is re-ingested) first.

When a newer version supersedes an older one, the older one gets `superseded_by` and stops being in force the
day the newer one took effect (`effective_to`). An end date the older version's own metadata states explicitly
(a sidecar's `effective_to`: repealed before its successor came) is kept when it is earlier; an end date an
earlier link derived is not kept, so a successor whose entry into force was corrected moves it. When the
successor goes away, the older version is in force again (unless its own metadata ends it).
"""

from __future__ import annotations

from regrag.domain.models import DocumentMeta

EXPLICIT_SOURCES = ("sidecar", "object-metadata")


def earliest(a: str | None, b: str | None) -> str | None:
    dates = [d for d in (a, b) if d]
    return min(dates) if dates else None


def _own_end(meta: DocumentMeta) -> str | None:
    """The end date the version's own metadata gives, not one an earlier link derived."""
    return meta.effective_to if meta.provenance.get("effective_to") in EXPLICIT_SOURCES else None


def superseded(older: DocumentMeta, newer: DocumentMeta) -> DocumentMeta:
    """`older` as `newer` supersedes it."""
    return older.with_changes(superseded_by=newer.doc_id, effective_to=earliest(_own_end(older), newer.effective_date))


def freed(older: DocumentMeta) -> DocumentMeta:
    """`older` once its successor is gone: in force again, unless its own metadata ends it."""
    return older.with_changes(superseded_by=None, effective_to=_own_end(older))
