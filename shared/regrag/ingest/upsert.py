"""upsert: ChunksEmbedded → chunk store + vector index + lexical index; DocumentDeleted → removal.

A document is written whole or not at all:

- where the store allows (locally: one SQLite file), everything a document changes is one transaction: its
  chunks, vectors and terms, the dates of the version it replaces, the removal of its obsolete chunks, and the
  mark that it is complete (ports.Transactional). A reader sees the state before or after; a process killed
  inside leaves nothing behind.
- elsewhere (the chunk map in Cloud Storage and Vector Search), the completion mark is written last
  (ChunkStore.mark_complete): `regrag ingest` and the reconcile job redo a document that lacks it. The version
  it replaces leaves the search (its end date refreshed) before this one's vectors enter it, so no reader ever
  gets both; a crash in between leaves a gap the redo closes, never a mix.
- a document whose chunks come in several messages is kept part by part (ports.PartStaging) until the last
  part arrives, then written whole like any other.

Idempotent by construction: chunks are written by id, a message older than the stored version is dropped,
and obsolete chunks are removed in the same step that writes their replacements, so a redelivered or reordered
message never loses or duplicates anything.
"""

from __future__ import annotations

import contextlib
import logging
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace

from regrag import logs
from regrag.domain import supersession
from regrag.domain.errors import InvalidInput
from regrag.domain.messages import ChunksEmbedded, DocumentDeleted, covers_whole, part_span
from regrag.domain.models import SOURCE, SOURCE_SCOPE, DocumentMeta
from regrag.ingest import alerts, versions
from regrag.ports import ChunkStore, LexicalIndex, PartStaging, QuestionIndex, Transactional, VectorIndex
from regrag.text.terms import chunk_tokens

log = logs.get("upsert")


@dataclass(frozen=True)
class UpsertResult:
    status: str  # upserted | staged | stale | deleted | not-found
    doc_id: str
    written: int = 0
    removed: int = 0


def atomically(store: ChunkStore) -> AbstractContextManager[None]:
    """One transaction over the store and the indexes sharing its storage, where it has them."""
    return store.atomically() if isinstance(store, Transactional) else contextlib.nullcontext()


def upsert_chunks(
    message: ChunksEmbedded,
    *,
    store: ChunkStore,
    vectors: VectorIndex,
    lexical: LexicalIndex,
    questions: QuestionIndex | None = None,
    staging: PartStaging | None = None,
    watching: alerts.Watching | None = None,
) -> UpsertResult:
    """Write a document's chunks, vectors and terms, link its versions, remove its obsolete chunks, and mark it
    complete: one step for a reader (see the module docstring).

    `questions`: the questions-answered index, whose vectors of obsolete chunks go too (None: not wired).
    `staging`: where the parts of a document sent in several messages wait for the last one (None: each part
    is written as it comes, and the document is complete with its last part).
    `watching`: the watches to tell what the document changed, once it is stored and committed (None: no watches
    wired): after the transaction, so that a saved question asked again reads what a user would.
    """
    meta = message.meta
    if _stale(meta, store):
        return UpsertResult("stale", meta.doc_id)
    parted = message.parts > 1 and staging is not None
    if parted:
        assert staging is not None
        whole = _assembled(message, staging, store)
        if whole is None:
            return UpsertResult("staged", meta.doc_id)
        message = whole
    with atomically(store):
        result, written = _write(message, store, vectors, lexical, questions)
        if parted:
            assert staging is not None
            staging.clear(meta.doc_id, meta.generation)
    if watching is not None and written is not None:
        linked, relinked = written
        alerts.record_changes(watching, store, linked, message.text, relinked, parts=message.parts)
    return result


def _stale(meta: DocumentMeta, store: ChunkStore) -> bool:
    current = _stored_generation(meta, store)
    if current is None or current <= meta.generation:
        return False
    logs.event(
        log,
        logging.INFO,
        "stale version dropped",
        doc_id=meta.doc_id,
        generation=meta.generation,
        stored_generation=current,
    )
    return True


def _assembled(message: ChunksEmbedded, staging: PartStaging, store: ChunkStore) -> ChunksEmbedded | None:
    """The whole document once every part of its generation has arrived (None until then)."""
    meta = message.meta
    stored = store.get_document(meta.doc_id)
    if (
        stored is not None
        and stored[0].generation == meta.generation
        and stored[0].ingest_version == meta.ingest_version
        and not store.incomplete_documents([meta.doc_id])
    ):
        # a part redelivered after its document was written whole: kept, it would wait for parts that never come
        logs.event(log, logging.INFO, "part of a complete document dropped", doc_id=meta.doc_id, part=message.part)
        return None
    parts = staging.stage(message)
    if not covers_whole((p.part, p.parts) for p in parts):
        logs.event(
            log,
            logging.INFO,
            "part kept until the document is whole",
            doc_id=meta.doc_id,
            part=message.part,
            parts=message.parts,
            arrived=len(parts),
        )
        return None
    unique = {(p.part, p.parts): p for p in parts}
    ordered = [unique[key] for key in sorted(unique, key=lambda key: part_span(*key))]
    return ChunksEmbedded(
        meta,
        message.text,
        tuple(c for p in ordered for c in p.chunks),
        tuple(v for p in ordered for v in p.vectors),
        message.model,
    )


def _write(
    message: ChunksEmbedded,
    store: ChunkStore,
    vectors: VectorIndex,
    lexical: LexicalIndex,
    questions: QuestionIndex | None,
) -> tuple[UpsertResult, tuple[DocumentMeta, list[str]] | None]:
    """The result, and what the watches need once it is committed: the document as linked and the versions
    relinked (None when nothing was written)."""
    meta = message.meta
    if _stale(meta, store):  # checked again inside the transaction: another writer may have stored a newer one
        return UpsertResult("stale", meta.doc_id), None
    meta = versions.predecessor(meta, store)
    put = store.put_part(meta, message.text, message.chunks, message.part, message.parts)
    stored = store.get_document(meta.doc_id)
    linked = stored[0] if stored else put.meta  # later_links may have linked a successor to this version
    # the predecessor is refreshed on every delivery, not only the one that linked it: a refresh that could not
    # finish (datapoints not yet readable) raised, and the redelivery must do it again
    predecessor = [linked.supersedes] if linked.supersedes else []
    relinked = list(dict.fromkeys([*put.relinked, *versions.later_links(put.meta, store), *predecessor]))
    # the versions this one replaces (or that replace it) get their new dates before this one's vectors are
    # searchable: without a transaction, a reader then sees a gap for a moment, never old and new together
    for doc_id in relinked:
        related = store.document_chunks(doc_id)
        vectors.refresh_metadata(related)
        lexical.refresh_metadata(related)
    chunks = [replace(c, meta=linked) for c in message.chunks]  # carry version links into the restricts
    vectors.upsert(chunks, list(message.vectors))
    tokens = [chunk_tokens(c) for c in chunks]
    lexical.upsert(chunks, [b for b, _ in tokens], [t for _, t in tokens])
    obsolete = store.obsolete_chunk_ids(meta.doc_id)
    _remove(obsolete, store, vectors, lexical, questions)
    if message.parts == 1:  # a document in parts is complete once assembled (PartStaging), never part by part
        store.mark_complete(meta.doc_id, meta.generation)
    logs.event(
        log,
        logging.INFO,
        "chunks upserted",
        doc_id=meta.doc_id,
        generation=meta.generation,
        part=message.part,
        parts=message.parts,
        written=len(chunks),
        removed=len(obsolete),
    )
    return UpsertResult("upserted", meta.doc_id, len(chunks), len(obsolete)), (linked, relinked)


def _stored_generation(meta: DocumentMeta, store: ChunkStore) -> int | None:
    """The generation stored under the message's doc id; refused when another object owns that id."""
    existing = store.get_document(meta.doc_id)
    if existing is None:
        return None
    if existing[0].source_name and existing[0].source_name != meta.source_name:
        # Two objects claiming one doc id would silently overwrite each other's articles.
        raise InvalidInput(
            f"doc_id {meta.doc_id!r} of {meta.source_name!r} is already used by {existing[0].source_name!r} "
            f"(corpus {existing[0].corpus!r}); give one of them another doc_id in its sidecar, or delete the other"
        )
    return existing[0].generation


def delete_document(
    message: DocumentDeleted,
    *,
    store: ChunkStore,
    vectors: VectorIndex,
    lexical: LexicalIndex,
    questions: QuestionIndex | None = None,
) -> UpsertResult:
    """Remove the documents produced by the deleted object, unless a newer generation replaced them.

    Each removal is one step for a reader: its vectors and terms go first, then the version it had replaced gets
    its dates back (in force again), and only then the document itself; so an interrupted delete (no transaction
    on GCP) leaves the document stored, and the redelivered event does it all again."""
    # the documents the object produced (a sidecar may have named them), found by key, never by listing all
    docs = store.find_documents(SOURCE_SCOPE, SOURCE, message.source_name) if message.source_name else []
    if not docs:
        found = store.get_document(message.doc_id)
        docs = [found[0]] if found else []
    removed = 0
    with atomically(store):
        for meta in docs:
            if meta.generation > message.generation:
                logs.event(
                    log,
                    logging.INFO,
                    "delete of an older generation ignored",
                    doc_id=meta.doc_id,
                    generation=message.generation,
                    stored_generation=meta.generation,
                )
                continue
            removed += remove_document(meta, store=store, vectors=vectors, lexical=lexical, questions=questions)
    return UpsertResult("deleted" if removed or docs else "not-found", message.doc_id, removed=removed)


def remove_document(
    meta: DocumentMeta,
    *,
    store: ChunkStore,
    vectors: VectorIndex,
    lexical: LexicalIndex,
    questions: QuestionIndex | None = None,
) -> int:
    """Take one stored document out of every index and the store, its predecessor in force again (see
    delete_document for the order); the chunks removed. Also `regrag repair`'s first step for a damaged one."""
    ids = [c.id for c in store.document_chunks(meta.doc_id)]
    _remove_from_indexes(ids, vectors, lexical, questions)
    if meta.supersedes and meta.supersedes != meta.doc_id:
        older = store.get_document(meta.supersedes)
        if older is not None and older[0].superseded_by == meta.doc_id:
            freed = supersession.freed(older[0])
            previous = [replace(c, meta=freed) for c in store.document_chunks(older[0].doc_id)]
            vectors.refresh_metadata(previous)
            lexical.refresh_metadata(previous)
    gone = store.delete_document(meta.doc_id)
    known = set(ids)
    _remove_from_indexes([c for c in gone if c not in known], vectors, lexical, questions)  # rows too damaged to read
    logs.event(log, logging.INFO, "document deleted", doc_id=meta.doc_id, removed=len(gone))
    return len(gone)


def _remove_from_indexes(
    ids: list[str], vectors: VectorIndex, lexical: LexicalIndex, questions: QuestionIndex | None
) -> None:
    if not ids:
        return
    vectors.delete(ids)
    lexical.delete(ids)
    if questions is not None:
        questions.delete(ids)


def _remove(
    ids: list[str], store: ChunkStore, vectors: VectorIndex, lexical: LexicalIndex, questions: QuestionIndex | None
) -> None:
    if not ids:
        return
    _remove_from_indexes(ids, vectors, lexical, questions)
    store.delete_chunks(ids)
