"""reconcile: the bucket against the index, on a schedule (Cloud Scheduler → HTTP, OIDC).

Events can be lost (a function deployed late, a notification dropped, a message dead-lettered and never
replayed). This job makes the index converge on the bucket anyway:

- an object with no document, or whose document is of an older generation, or was not written whole (a write
  that did not finish: no completion mark, ChunkStore.incomplete_documents), is ingested again (its
  DocumentChunked messages are published; embed and upsert do the rest, idempotently);
- a document whose object is gone is an orphan: a DocumentDeleted message is published, and upsert removes it
  (it compares generations, so a document re-uploaded meanwhile is kept);
- a lexical index that needs corpus statistics (`TermStatistics`, the Vertex sparse leg) gets document
  frequencies counted over every stored chunk.

Not covered, because the APIs cannot list them: datapoints in the vector index that no stored chunk refers to
(they cannot surface in answers, since quotes come from the chunk store), and sidecar-only changes (a sidecar
upload raises its own event).
"""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from regrag import logs
from regrag.domain.errors import PermanentError
from regrag.domain.messages import DocumentDeleted
from regrag.domain.models import DocumentMeta
from regrag.ingest.ingest import IGNORED_NAMES, INGEST_VERSION, OcrOptions, ingest_object, is_sidecar
from regrag.inputs.schemas import DEFAULT_MAX_REPUBLISH
from regrag.ports import BlobStore, ChunkStore, LexicalIndex, Publisher, TermStatistics
from regrag.text.terms import chunk_tokens

log = logs.get("reconcile")


@dataclass(frozen=True)
class ReconcileResult:
    """What one run found and did (the HTTP response of the reconcile function)."""

    objects: int
    documents: int
    republished: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    deferred: int = 0
    statistics: dict[str, Any] | None = None
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "objects": self.objects,
            "documents": self.documents,
            "republished": self.republished,
            "removed": self.removed,
            "rejected": self.rejected,
            "deferred": self.deferred,
            "statistics": self.statistics,
            "dry_run": self.dry_run,
        }


def is_document_object(name: str) -> bool:
    """Whether an object in the bucket is a document ingest would read (not a sidecar, manifest or dotfile)."""
    base = name.rsplit("/", 1)[-1]
    return not (is_sidecar(name) or base in IGNORED_NAMES or base.startswith("."))


# documents read at once by count_statistics: on GCP each is a few object reads that wait on the network, not on
# this process (not measured; the run is a nightly job's, not a user's)
STATISTICS_WORKERS = 8


def count_statistics(store: ChunkStore, max_workers: int = STATISTICS_WORKERS) -> tuple[int, dict[str, int], int, int]:
    """(chunks, document frequency per token, body tokens, title tokens) over every stored chunk, with the
    pipeline's own tokenizer (the one both sides of the lexical index use). Documents are read concurrently:
    on GCP each is a few object reads."""
    df: Counter[str] = Counter()
    chunks = body_total = title_total = 0
    doc_ids = [meta.doc_id for meta in store.list_documents()]
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="reconcile") as pool:
        for document in pool.map(store.document_chunks, doc_ids):
            for chunk in document:
                body, title = chunk_tokens(chunk)
                chunks += 1
                body_total += len(body)
                title_total += len(title)
                df.update(set(body) | set(title))
    return chunks, dict(df), body_total, title_total


def reconcile(
    *,
    blobs: BlobStore,
    store: ChunkStore,
    publisher: Publisher,
    lexical: LexicalIndex,
    topic_chunked: str,
    topic_embedded: str,
    max_chars: int,
    dry_run: bool = False,
    max_republish: int = DEFAULT_MAX_REPUBLISH,
    ocr: OcrOptions | None = None,
) -> ReconcileResult:
    """Compare the bucket with the chunk store and publish what makes them agree (see the module docstring)."""
    objects = {b.name: b.generation for b in blobs.list() if is_document_object(b.name)}
    documents = store.list_documents()
    missing = _to_ingest(objects, documents, set(store.incomplete_documents()))
    republished, rejected = _republish(
        missing[:max_republish], blobs, publisher, topic_chunked, max_chars, ocr, dry_run
    )
    removed = _remove_orphans(documents, objects, publisher, topic_embedded, dry_run)
    statistics = None
    if isinstance(lexical, TermStatistics):
        chunks, df, body_total, title_total = count_statistics(store)
        if not dry_run:
            lexical.update_statistics(chunks, df, body_total, title_total)
        statistics = {"chunks": chunks, "terms": len(df), "body_tokens": body_total, "title_tokens": title_total}

    result = ReconcileResult(
        objects=len(objects),
        documents=len(documents),
        republished=republished,
        removed=removed,
        rejected=rejected,
        deferred=max(0, len(missing) - max_republish),
        statistics=statistics,
        dry_run=dry_run,
    )
    logs.event(
        log,
        logging.INFO,
        "bucket and index reconciled",
        objects=result.objects,
        documents=result.documents,
        republished=len(republished),
        removed=len(removed),
        rejected=len(rejected),
        deferred=result.deferred,
        dry_run=dry_run,
    )
    return result


def _to_ingest(objects: dict[str, int], documents: list[DocumentMeta], incomplete: set[str]) -> list[str]:
    """Objects the index lacks, holds at an older generation, holds half-written, or derived by older rules."""
    by_source: dict[str, int] = {}
    outdated: set[str] = set()  # derived by older ingest rules: ingested again even though the bytes did not change
    for meta in documents:
        if meta.source_name:
            by_source[meta.source_name] = max(by_source.get(meta.source_name, 0), meta.generation)
            if meta.ingest_version < INGEST_VERSION or meta.doc_id in incomplete:
                outdated.add(meta.source_name)
    return sorted(name for name, gen in objects.items() if by_source.get(name, -1) < gen or name in outdated)


def _republish(
    names: list[str],
    blobs: BlobStore,
    publisher: Publisher,
    topic: str,
    max_chars: int,
    ocr: OcrOptions | None,
    dry_run: bool,
) -> tuple[list[str], list[dict[str, str]]]:
    """Ingest each object again (its chunks go down the pipeline); (republished, rejected with the reason)."""
    republished: list[str] = []
    rejected: list[dict[str, str]] = []
    for name in names:
        if dry_run:
            republished.append(name)
            continue
        try:
            ingest_object(name, blobs=blobs, publisher=publisher, topic=topic, max_chars=max_chars, ocr=ocr)
        except PermanentError as exc:  # e.g. an empty or binary upload: it stays out of the index
            rejected.append({"name": name, "reason": exc.code, "error": str(exc)})
            continue
        republished.append(name)
    return republished, rejected


def _remove_orphans(
    documents: list[DocumentMeta], objects: dict[str, int], publisher: Publisher, topic: str, dry_run: bool
) -> list[str]:
    """Documents whose object is gone from the bucket (a lost delete notification): a delete event for each."""
    removed: list[str] = []
    for meta in documents:
        if not meta.source_name or meta.source_name in objects:
            continue
        removed.append(meta.doc_id)
        if not dry_run:
            message = DocumentDeleted(meta.doc_id, meta.source_name, meta.generation, meta.corpus)
            publisher.publish(topic, message.to_json(), {"kind": message.kind, "doc_id": meta.doc_id})
    return removed
