"""`regrag delete`, `regrag ingest --prune`, and finishing deletes a crash interrupted.

A document leaves in the order a Cloud Storage delete takes on GCP: its object (and sidecar) leaves the bucket
first, then the index removes what the object produced (handlers.object_removed), in one transaction. A process
killed between the two leaves a document whose object is gone; every later `regrag ingest`, `delete` and
`repair` finishes such deletes first (locally, an object only leaves the bucket through them).

A delete by document id removes exactly the version the index holds: it carries the stored generation, so it
works whether or not the bucket still has the file (it used to carry generation 0 when the file was gone, which
upsert ignored as older than the stored one: `"deleted": false`, exit 0).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from regrag.domain.models import DocumentMeta
from regrag.entrypoints import handlers
from regrag.ingest.ingest import SIDECAR_SUFFIX
from regrag.ingest.reconcile import is_document_object
from regrag.services import Services


class _Named(Protocol):
    @property
    def name(self) -> str: ...


@contextlib.contextmanager
def writing(services: Services, command: str) -> Iterator[None]:
    """Hold the data folder's write lock (one writing command at a time; a second waits), where there is one."""
    if services.writer_lock is None:
        yield
        return
    with services.writer_lock(command):
        yield


def orphans(services: Services) -> list[DocumentMeta]:
    """Stored documents whose object has left the bucket: deletes that did not finish."""
    present = {b.name for b in services.blobs.list() if is_document_object(b.name)}
    return [m for m in services.store.list_documents() if m.source_name and m.source_name not in present]


def complete_deletes(services: Services) -> list[DocumentMeta]:
    """Finish every delete a crash interrupted (local mode: the bucket is a folder only these commands change);
    the documents removed."""
    if services.bus is None:  # GCP: the bucket's delete notification does it, and the reconcile job after it
        return []
    done = []
    for meta in orphans(services):
        handlers.object_removed(services, meta.source_name, meta.generation)
        if services.store.get_document(meta.doc_id) is None:
            done.append(meta)
    return done


def remove_object(services: Services, name: str, stored_generation: int = 0) -> None:
    """Delete an object and its sidecar from the bucket, then remove what it produced from the index: the version
    the index holds (`stored_generation`) or the one the bucket holds, whichever is newer."""
    blob = services.blobs.read_optional(name)
    generation = max(blob.generation if blob is not None else 0, stored_generation)
    for object_name in (name + SIDECAR_SUFFIX, name):
        if services.blobs.read_optional(object_name) is not None:
            services.blobs.delete(object_name)
    handlers.object_removed(services, name, generation)


def prune(services: Services, uploads: Sequence[_Named], corpus: str | None) -> tuple[list[str], list[str]]:
    """Remove every indexed document (of `corpus`, when given) whose file this run did not see: the folder is
    the whole collection. (removed, still indexed after the attempt: each named as it is)."""
    seen = {up.name for up in uploads}
    gone = [m for m in services.store.list_documents(corpus) if m.source_name and m.source_name not in seen]
    removed: list[str] = []
    kept: list[str] = []
    for meta in gone:
        remove_object(services, meta.source_name, meta.generation)
        (kept if services.store.get_document(meta.doc_id) is not None else removed).append(meta.doc_id)
    return removed, kept


def cmd_delete(services: Services, args: argparse.Namespace) -> int:
    """`regrag delete DOC_ID…`: each document out of the bucket and the index. Exit 2 if one is not in the index
    or could not be removed."""
    with writing(services, "delete"):
        completed = {meta.doc_id: meta for meta in complete_deletes(services)}
        for doc_id in completed:
            if doc_id not in args.doc_ids:
                print(
                    f"deleted: {doc_id} (its file had left the bucket: a delete that had not finished)", file=sys.stderr
                )
        problems = 0
        for doc_id in args.doc_ids:
            if doc_id in completed:  # its file had left the bucket already: removed just now
                done = {"doc_id": doc_id, "deleted": True, "source": completed[doc_id].source_name}
                print(json.dumps(done, ensure_ascii=False))
                continue
            found = services.store.get_document(doc_id)
            if found is None:
                print(f"no document {doc_id!r} in the index", file=sys.stderr)
                problems += 1
                continue
            meta = found[0]
            if meta.source_name:
                remove_object(services, meta.source_name, meta.generation)
            else:  # stored without an object name (an old index): removed by id
                handlers.document_removed(services, meta.doc_id, meta.generation)
            deleted = services.store.get_document(doc_id) is None
            problems += 0 if deleted else 1
            result: dict[str, Any] = {"doc_id": doc_id, "deleted": deleted, "source": meta.source_name}
            print(json.dumps(result, ensure_ascii=False))
        return 0 if problems == 0 else 2
