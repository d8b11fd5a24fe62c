"""Which stored version a document replaces, and which stored documents replace it, before and after it is stored.

A version link comes from the sidecar (`supersedes`) or from the text (……《X》同时废止: a repeal clause naming
a text of the same corpus, titled X, that took effect earlier). A link is kept only when both versions are in
the same corpus and the successor took effect after its predecessor: any upload could otherwise declare any
regulation replaced (a one-line file with {"supersedes": "nat-reg-0088"} made every answer quoting it say so).

The stores keep the links consistent whichever version arrives first (ChunkStore.put_part); this module adds
what only the pipeline can judge: the claim's validity, and links that a text states about a version stored
before or after it (ChunkStore.find_documents, .set_supersedes).
"""

from __future__ import annotations

import logging

from regrag import logs
from regrag.domain.errors import InvalidInput
from regrag.domain.models import REPEALS, DocumentMeta
from regrag.ports import ChunkStore

log = logs.get("versions")


def claim_problem(newer: DocumentMeta, older: DocumentMeta) -> str | None:
    """Why `newer` cannot supersede `older`, or None when it can."""
    if older.corpus != newer.corpus:
        return (
            f"supersedes names {older.doc_id!r} of corpus {older.corpus!r}: a version can only replace one of its "
            f"own corpus ({newer.corpus!r})"
        )
    if older.effective_date and newer.effective_date and older.effective_date >= newer.effective_date:
        return (
            f"supersedes names {older.doc_id!r}, which took effect on {older.effective_date}, not before this "
            f"version ({newer.effective_date})"
        )
    return None


def _earlier(a: DocumentMeta, b: DocumentMeta) -> bool:
    return (a.effective_date or "") < (b.effective_date or "")


def predecessor(meta: DocumentMeta, store: ChunkStore) -> DocumentMeta:
    """`meta` with its `supersedes` checked (InvalidInput naming the field when the stored target refuses the
    claim) or, without one, taken from its repeal clauses: the newest earlier version of a repealed title."""
    if meta.supersedes:
        found = store.get_document(meta.supersedes)
        problem = claim_problem(meta, found[0]) if found else None
        if problem:
            raise InvalidInput(f"{meta.source_name or meta.doc_id}: {problem}")
        return meta
    candidates = [
        m
        for key in meta.keys()[REPEALS]
        for m in store.find_documents(meta.corpus, "title", key)
        if m.doc_id != meta.doc_id and _earlier(m, meta)
    ]
    if not candidates:
        return meta
    older = max(candidates, key=lambda m: (m.effective_date or "", m.doc_id))
    return meta.with_changes(supersedes=older.doc_id, provenance={**meta.provenance, "supersedes": "text"})


def later_links(meta: DocumentMeta, store: ChunkStore) -> list[str]:
    """After `meta` is stored: link the stored documents whose repeal clauses name its title (and that name no
    other predecessor) to it, and withdraw claims on it that break the rules. The documents relinked."""
    relinked: list[str] = []
    if meta.title_key:
        newer = [
            m
            for m in store.find_documents(meta.corpus, REPEALS, meta.title_key)
            if m.doc_id != meta.doc_id and not m.supersedes and _earlier(meta, m)
        ]
        if newer:
            # the earliest later text is the direct successor; the others replace it in turn
            first = min(newer, key=lambda m: (m.effective_date or "", m.doc_id))
            relinked += [first.doc_id, *store.set_supersedes(first.doc_id, meta.doc_id).relinked]
    if meta.superseded_by:
        claimant = store.get_document(meta.superseded_by)
        problem = claim_problem(claimant[0], meta) if claimant else None
        if claimant and problem:
            logs.event(log, logging.ERROR, "version claim withdrawn", doc_id=claimant[0].doc_id, problem=problem)
            relinked += [claimant[0].doc_id, *store.set_supersedes(claimant[0].doc_id, None).relinked]
    return list(dict.fromkeys(relinked))
