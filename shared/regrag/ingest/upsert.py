"""upsert: ChunksEmbedded → chunk store + vector index + lexical index; DocumentDeleted → removal.

Idempotent by construction: chunks are written by id, a message older than the stored version is dropped,
and obsolete chunks (older versions, or ids the complete new version lacks) are removed only after the new
ones are written, so a redelivered or reordered message never loses or duplicates anything.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from regrag import logs
from regrag.domain.errors import InvalidInput
from regrag.domain.messages import ChunksEmbedded, DocumentDeleted
from regrag.domain.models import SOURCE, SOURCE_SCOPE, DocumentMeta
from regrag.ingest import alerts, versions
from regrag.ports import ChunkStore, LexicalIndex, QuestionIndex, VectorIndex
from regrag.text.terms import chunk_tokens

log = logs.get("upsert")


@dataclass(frozen=True)
class UpsertResult:
    status: str  # upserted | stale | deleted | not-found
    doc_id: str
    written: int = 0
    removed: int = 0


def upsert_chunks(
    message: ChunksEmbedded,
    *,
    store: ChunkStore,
    vectors: VectorIndex,
    lexical: LexicalIndex,
    questions: QuestionIndex | None = None,
    watching: alerts.Watching | None = None,
) -> UpsertResult:
    """Write a part's chunks, vectors and terms; then remove obsolete chunks from every index.

    `questions`: the questions-answered index, whose vectors of obsolete chunks go too (None: not wired).
    `watching`: the watches to tell what the document changed, once it is stored (None: no watches wired).
    """
    meta = message.meta
    current = _stored_generation(meta, store)
    if current is not None and current > meta.generation:
        logs.event(
            log,
            logging.INFO,
            "stale version dropped",
            doc_id=meta.doc_id,
            generation=meta.generation,
            stored_generation=current,
        )
        return UpsertResult("stale", meta.doc_id)
    meta = versions.predecessor(meta, store)
    put = store.put_part(meta, message.text, message.chunks, message.part, message.parts)
    stored = store.get_document(meta.doc_id)
    linked = stored[0] if stored else put.meta  # later_links may have linked a successor to this version
    # the predecessor is refreshed on every delivery, not only the one that linked it: a refresh that could not
    # finish (datapoints not yet readable) raised, and the redelivery must do it again
    predecessor = [linked.supersedes] if linked.supersedes else []
    relinked = list(dict.fromkeys([*put.relinked, *versions.later_links(put.meta, store), *predecessor]))
    chunks = [replace(c, meta=linked) for c in message.chunks]  # carry version links into the restricts
    vectors.upsert(chunks, list(message.vectors))
    tokens = [chunk_tokens(c) for c in chunks]
    lexical.upsert(chunks, [b for b, _ in tokens], [t for _, t in tokens])
    for doc_id in relinked:
        related = store.document_chunks(doc_id)
        vectors.refresh_metadata(related)
        lexical.refresh_metadata(related)
    obsolete = store.obsolete_chunk_ids(meta.doc_id)
    _remove(obsolete, store, vectors, lexical, questions)
    if watching is not None:
        alerts.record_changes(watching, store, linked, message.text, relinked, parts=message.parts)
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
    return UpsertResult("upserted", meta.doc_id, len(chunks), len(obsolete))


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
    """Remove the documents produced by the deleted object, unless a newer generation replaced them."""
    # the documents the object produced (a sidecar may have named them), found by key, never by listing all
    docs = store.find_documents(SOURCE_SCOPE, SOURCE, message.source_name) if message.source_name else []
    if not docs:
        found = store.get_document(message.doc_id)
        docs = [found[0]] if found else []
    removed = 0
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
        ids = store.delete_document(meta.doc_id)
        _remove(ids, store, vectors, lexical, questions)
        if meta.supersedes:
            previous = store.document_chunks(meta.supersedes)  # the older version is in force again
            vectors.refresh_metadata(previous)
            lexical.refresh_metadata(previous)
        removed += len(ids)
        logs.event(log, logging.INFO, "document deleted", doc_id=meta.doc_id, removed=len(ids))
    return UpsertResult("deleted" if removed or docs else "not-found", message.doc_id, removed=removed)


def _remove(
    ids: list[str], store: ChunkStore, vectors: VectorIndex, lexical: LexicalIndex, questions: QuestionIndex | None
) -> None:
    if not ids:
        return
    vectors.delete(ids)
    lexical.delete(ids)
    if questions is not None:
        questions.delete(ids)
    store.delete_chunks(ids)
