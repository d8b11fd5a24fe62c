"""The ChunkStore on Cloud Storage: a chunk map in the state bucket, so the vector index holds ids only.

The objects and their names are in chunk_layout.py; names, locks, cached heads and their compare-and-swap
update in chunk_heads.py.

Every event (upsert, delete, version link) and the query path read a number of objects that does not grow with
the number of documents: heads by id, markers by key (bench/gcp_heads.py counts them). Only the operator paths
(stats, list_documents: /corpora, reconcile, /documents links) list the heads.

The head is the commit point: data objects are written first, then the head, with a compare-and-swap on its
GCS generation (`if_generation_match`), retried on a lost race; so concurrent instances never lose each
other's parts. Within one process a lock per document serialises writers as well.

Text and part objects are content-addressed (<sha> is a SHA-256 prefix of their bytes, checked on read):
an object name always holds the same bytes, so a redelivered message that writes its part again never
changes what a concurrent reader of the head finds, and a redelivery the head already records writes
nothing at all.

Semantics are those of the local SqliteIndex (put_part and its version links, obsolete_chunk_ids,
delete_document, stats), checked by the same contract suite. Per instance, heads are cached for `cache_s`
seconds on the read path (queries), part and text objects forever (content-addressed, so never stale); every
write path reads the head fresh. A reader whose cached head names an object that a writer has since
garbage-collected reads the head again once.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from regrag.adapters.gcp.blobstore import GenerationMismatch, Listed
from regrag.adapters.gcp.chunk_heads import HeadStore
from regrag.adapters.gcp.chunk_layout import (
    JSON_TYPE,
    SCHEMA_VERSION,
    Head,
    MissingObject,
    PartRef,
    StaleWrite,
    content_sha,
)
from regrag.domain import integrity
from regrag.domain import supersession as versions
from regrag.domain.errors import NotFound
from regrag.domain.integrity import Finding
from regrag.domain.messages import covers_whole
from regrag.domain.models import Chunk, DocumentMeta
from regrag.ports import PutResult


class GcsChunkStore(HeadStore):
    """The `ChunkStore` port on a chunk map in a bucket (see the module docstring)."""

    # --- ChunkStore: writes -------------------------------------------------------------------------------

    def put_part(self, meta: DocumentMeta, text: str, chunks: Sequence[Chunk], part: int, parts: int) -> PutResult:
        """Store one part of a document version and link it with its predecessor/successor (see the port).

        Raises StaleWrite (transient) if a newer generation of the document is stored meanwhile.
        """
        doc_id, generation = meta.doc_id, meta.generation
        with self._lock(doc_id):
            current = self._head(doc_id, fresh=True)
            if current is not None and current.generation > generation:
                raise StaleWrite(f"{doc_id}: generation {current.generation} is stored; {generation} is older")
            successor = self._successor_of(doc_id)
            if successor is not None:
                meta = versions.superseded(meta, successor)
            base = f"{self.prefix}docs/{doc_id}/{generation}"
            rows = [c.to_dict(with_meta=False) for c in chunks]  # the head carries the (linked) metadata once
            part_body = json.dumps({"schema_version": SCHEMA_VERSION, "chunks": rows}, ensure_ascii=False).encode()
            part_name = f"{base}/part-{part:05d}-of-{parts:05d}-{content_sha(part_body)}.json"
            text_body = text.encode("utf-8")
            text_name = f"{base}/text-{content_sha(text_body)}.txt"
            recorded = {name for _, name in current.chunks.values()} | {current.text_name} if current else set()
            if part_name not in recorded:  # a redelivery the head records has nothing to write
                self.objects.write(part_name, part_body, content_type=JSON_TYPE)
            if text_name not in recorded:
                self.objects.write(text_name, text_body, content_type="text/plain; charset=utf-8")
            known = current.pointers if current is not None else set()
            self._write_pointers(doc_id, [c.id for c in chunks if c.id not in known])
            if meta.supersedes and meta.supersedes != doc_id:
                self.objects.write(self._marker_name(meta.supersedes, doc_id), b"", content_type="text/plain")
            stale_keys = set(self._key_names(current.meta)) - set(self._key_names(meta)) if current else set()
            self._delete_quietly(sorted(stale_keys))
            for name in self._key_names(meta):
                self.objects.write(name, b"", content_type="text/plain")
            self._mark_corpus(meta.corpus)
            linked = meta
            ref = PartRef(parts, tuple(c.id for c in chunks), part_name)

            def change(head: Head | None) -> Head | None:
                if head is not None and head.generation > generation:
                    raise StaleWrite(f"{doc_id}: generation {head.generation} was stored meanwhile")
                now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
                if head is None:
                    new = Head(linked, now, text_name)
                else:  # not whole until mark_complete, written after the vectors
                    new = head.copy(meta=linked, updated_at=now, text_name=text_name, complete=None)
                new.parts.setdefault(generation, {})[part] = ref
                for c in chunks:
                    new.chunks[c.id] = (generation, part_name)
                    new.pointers.add(c.id)
                return new

            self._update_head(doc_id, change)
        # Outside this document's lock: two documents naming each other as predecessors must not deadlock.
        relinked = self._link_older(linked) if linked.supersedes and linked.supersedes != doc_id else ()
        return PutResult(linked, relinked)

    def set_supersedes(self, doc_id: str, older_id: str | None) -> PutResult:
        previous: list[str | None] = []
        updated: list[DocumentMeta] = []

        def change(head: Head | None) -> Head | None:
            previous.clear()
            updated.clear()
            if head is None:
                return head
            previous.append(head.meta.supersedes)
            meta = head.meta.with_changes(supersedes=older_id)
            updated.append(meta)
            return head.copy(meta=meta)

        with self._lock(doc_id):
            self._update_head(doc_id, change)
        if not updated:
            raise NotFound(f"no document {doc_id!r}")
        old = previous[0]
        if old and old != older_id:
            self._delete_quietly([self._marker_name(old, doc_id)])
            self._unlink_older(old, doc_id)
        if older_id is None:
            return PutResult(updated[0], (old,) if old else ())
        self.objects.write(self._marker_name(older_id, doc_id), b"", content_type="text/plain")
        return PutResult(updated[0], self._link_older(updated[0]))

    def mark_complete(self, doc_id: str, generation: int) -> None:
        def change(head: Head | None) -> Head | None:
            if head is None or head.generation != generation or head.complete == generation:
                return head
            return head.copy(complete=generation)

        with self._lock(doc_id):
            self._update_head(doc_id, change)

    def incomplete_documents(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        """From one listing of the heads' custom metadata (`whole`), or the named heads read fresh."""
        if doc_ids is None:
            prefix = f"{self.prefix}docs/"
            return sorted(
                item.info.name[len(prefix) : -len("/head.json")]
                for item in self._listed_heads()
                if item.metadata.get("whole", "1") != "1"
            )
        ids = list(dict.fromkeys(doc_ids))
        heads = self._map(lambda d: self._head(d, fresh=True), ids)
        return sorted(d for d, head in zip(ids, heads, strict=True) if head is not None and not head.whole)

    def check_integrity(self, deep: bool = True) -> list[Finding]:
        """Documents not written whole, and version links to documents that are gone: one listing of the heads,
        then (`deep`) every head read. What Vector Search holds is not read here: doing so would mean reading
        every datapoint (see infra/README.md, "What a crash can leave")."""
        findings = [
            Finding("incomplete_document", d, "not written whole (a write that did not finish); ingested again",
                    integrity.REINGEST, (d,))
            for d in self.incomplete_documents()
        ]  # fmt: skip
        if not deep:
            return findings
        heads = {h.meta.doc_id: h for h in self._map(self._head_at, self._listed_heads()) if h is not None}
        for doc_id, head in sorted(heads.items()):
            newer = head.meta.superseded_by
            if newer and (newer not in heads or heads[newer].meta.supersedes != doc_id):
                detail = (
                    f"marked superseded by {newer}, which is gone or does not name it: the version is hidden from "
                    "answers about today (an interrupted delete or relink); ingested again"
                )
                findings.append(Finding("dangling_link", doc_id, detail, integrity.REINGEST, (doc_id,)))
            older = head.meta.supersedes
            if older and older not in heads:
                detail = f"names {older} as the version it replaces, which is not stored (not ingested yet?)"
                findings.append(
                    Finding("pending_link", doc_id, detail, integrity.NONE, (doc_id,), severity=integrity.WARNING)
                )
        return findings

    def fix(self, findings: Sequence[Finding]) -> list[Finding]:
        """Nothing to fix alone: every finding here is put right by ingesting its document again."""
        return []

    def _write_pointers(self, doc_id: str, chunk_ids: Sequence[str]) -> None:
        body = json.dumps({"doc_id": doc_id}).encode("utf-8")
        self._map(
            lambda cid: self.objects.write(self._pointer_name(cid), body, content_type=JSON_TYPE), list(chunk_ids)
        )
        for cid in chunk_ids:
            self._doc_of.put(cid, doc_id)

    def _successor_of(self, doc_id: str) -> DocumentMeta | None:
        """A stored document that supersedes `doc_id`, found through the successor markers."""
        prefix = f"{self.prefix}successors/{doc_id}/"
        for info in self.objects.list(prefix):
            newer = info.name[len(prefix) :]
            head = self._head(newer, fresh=True)
            if head is not None and head.meta.supersedes == doc_id and newer != doc_id:
                return head.meta
        return None

    def _link_older(self, meta: DocumentMeta) -> tuple[str, ...]:
        """Give the version `meta` supersedes its `superseded_by` and `effective_to` (if it is stored)."""
        older_id = str(meta.supersedes)
        changed: list[bool] = []

        def change(head: Head | None) -> Head | None:
            changed.clear()
            if head is None:
                return head
            linked = versions.superseded(head.meta, meta)
            if linked == head.meta:
                return head
            changed.append(True)
            return head.copy(meta=linked)

        with self._lock(older_id):
            self._update_head(older_id, change)
        return (older_id,) if changed else ()

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        if not chunk_ids:
            return
        by_doc: dict[str, set[str]] = {}
        for cid, doc_id in zip(chunk_ids, self._docs_of(chunk_ids), strict=True):
            if doc_id is not None:
                by_doc.setdefault(doc_id, set()).add(cid)
        for doc_id, ids in by_doc.items():
            self._drop_chunks(doc_id, ids)

    def _drop_chunks(self, doc_id: str, ids: set[str]) -> None:
        """Forget chunks of one document; a generation left without chunks loses its objects too.

        Pointers (chunk-ids/…) stay: a chunk id always belongs to the same document, and a concurrent writer
        may be re-adding it. delete_document removes them.
        """
        garbage: list[str] = []

        def change(head: Head | None) -> Head | None:
            garbage.clear()
            if head is None or not ids & set(head.chunks):
                return head
            new = head.copy()
            for cid in ids:
                new.chunks.pop(cid, None)
            live = {g for g, _ in new.chunks.values()} | {new.generation}
            for g in [g for g in new.parts if g not in live]:
                del new.parts[g]
                garbage.append(f"{self.prefix}docs/{doc_id}/{g}/")
            return new

        with self._lock(doc_id):
            self._update_head(doc_id, change)
            # everything under a dropped generation: its parts, its text, and objects of crashed writes
            self._delete_quietly([i.name for prefix in garbage for i in self.objects.list(prefix)])

    def delete_document(self, doc_id: str) -> list[str]:
        """Remove the document and everything of it in the bucket; its predecessor is in force again."""
        with self._lock(doc_id):
            removed: list[Head] = []

            def change(head: Head | None) -> Head | None:
                removed.clear()
                if head is not None:
                    removed.append(head)
                return None

            self._update_head(doc_id, change)
            if not removed:
                return []
            head = removed[0]
            ids = list(head.chunks)
            leftovers = [i.name for i in self.objects.list(f"{self.prefix}docs/{doc_id}/")]
            leftovers += [self._pointer_name(cid) for cid in sorted(head.pointers | set(ids))]
            leftovers += [i.name for i in self.objects.list(f"{self.prefix}successors/{doc_id}/")]
            if head.meta.supersedes:
                leftovers.append(self._marker_name(head.meta.supersedes, doc_id))
            leftovers += self._key_names(head.meta)
            self._delete_quietly(leftovers)
        if head.meta.supersedes and head.meta.supersedes != doc_id:
            self._unlink_older(head.meta.supersedes, doc_id)
        return ids

    def _unlink_older(self, older_id: str, deleted_id: str) -> None:
        """The version a deleted successor superseded is in force again."""

        def change(head: Head | None) -> Head | None:
            if head is None or head.meta.superseded_by != deleted_id:
                return head
            return head.copy(meta=versions.freed(head.meta))

        with self._lock(older_id):
            self._update_head(older_id, change)

    def _delete_quietly(self, names: Sequence[str]) -> None:
        def one(name: str) -> None:
            with contextlib.suppress(NotFound):  # already gone (a redelivered delete, or a concurrent cleanup)
                self.objects.delete(name)

        self._map(one, list(dict.fromkeys(names)))

    # --- ChunkStore: reads ----------------------------------------------------------------------------------

    def obsolete_chunk_ids(self, doc_id: str) -> list[str]:
        head = self._head(doc_id, fresh=True)
        if head is None:
            return []
        generation = head.generation
        stale = [cid for cid, (g, _) in head.chunks.items() if g < generation]
        parts = head.parts.get(generation, {})
        if parts and covers_whole((p, ref.parts) for p, ref in parts.items()):
            keep = {cid for ref in parts.values() for cid in ref.chunk_ids}
            stale.extend(cid for cid, (g, _) in head.chunks.items() if g == generation and cid not in keep)
        return stale

    def _docs_of(self, chunk_ids: Sequence[str]) -> list[str | None]:
        unknown = [cid for cid in dict.fromkeys(chunk_ids) if self._doc_of.get(cid) is None]

        def lookup(cid: str) -> None:
            blob = self.objects.read_optional(self._pointer_name(cid))
            if blob is not None:
                self._doc_of.put(cid, json.loads(blob.data.decode("utf-8"))["doc_id"])

        self._map(lookup, unknown)
        return [self._doc_of.get(cid) for cid in chunk_ids]

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks that exist, in the order asked, each with its document's current metadata."""
        if not chunk_ids:
            return []
        docs = self._docs_of(chunk_ids)
        wanted = sorted({d for d in docs if d is not None})
        heads = dict(zip(wanted, self._map(self._head, wanted), strict=True))
        objects: dict[tuple[str, str], Head] = {}
        for cid, doc_id in zip(chunk_ids, docs, strict=True):
            head = heads.get(doc_id) if doc_id else None
            if head is not None and cid in head.chunks:
                objects[(head.meta.doc_id, head.chunks[cid][1])] = head

        def load(key: tuple[str, str]) -> dict[str, Chunk]:
            try:
                return self._chunks_in(objects[key], key[1])
            except MissingObject:  # the cached head is older than a garbage collection: read it again
                head = self._head(key[0], fresh=True)
                if head is None or key[1] not in {name for _, name in head.chunks.values()}:
                    return {}
                return self._chunks_in(head, key[1])

        found: dict[str, Chunk] = {}
        for by_id in self._map(load, list(objects)):
            found.update(by_id)
        return [found[cid] for cid in chunk_ids if cid in found]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        def read(head: Head) -> list[Chunk]:
            names = sorted({name for _, name in head.chunks.values()})
            loaded = self._map(lambda name: self._chunks_in(head, name), names)
            return sorted((c for by_id in loaded for c in by_id.values()), key=lambda c: (c.ordinal, c.part))

        return self._reading(doc_id, read) or []

    def get_document(self, doc_id: str) -> tuple[DocumentMeta, str] | None:
        found: tuple[DocumentMeta, str] | None = self._reading(doc_id, lambda head: (head.meta, self._text(head)))
        return found

    def _listed_heads(self) -> list[Listed]:
        return self.objects.scan(f"{self.prefix}docs/", match_glob=f"{self.prefix}docs/*/head.json")

    def find_documents(self, corpus: str, kind: str, key: str) -> list[DocumentMeta]:
        """One listing of the key's marker objects, then the heads it names (never every head)."""
        prefix = self._key_prefix(corpus, kind, key)
        doc_ids = [info.name[len(prefix) :] for info in self.objects.list(prefix)]
        heads = self._map(lambda d: self._head(d, fresh=True), doc_ids)
        found = [h.meta for h in heads if h is not None and h.meta.has_key(kind, key)]
        return sorted(found, key=lambda m: m.doc_id)

    def _corpus_marker(self, corpus: str) -> str:
        return f"{self.prefix}corpora/{corpus}"

    def _mark_corpus(self, corpus: str) -> None:
        """A create-only object per corpus, written once per instance: corpus_names lists these, never the heads."""
        if corpus in self._corpora_marked:
            return
        with contextlib.suppress(GenerationMismatch):  # another writer made it: all that matters is that it exists
            self.objects.write(self._corpus_marker(corpus), b"", content_type="text/plain", if_generation_match=0)
        self._corpora_marked.add(corpus)

    def corpus_names(self) -> list[str]:
        """One listing of the corpus markers. A chunk map written before the markers existed has none: the heads
        are listed once and the markers written, so the next call is one listing again."""
        prefix = f"{self.prefix}corpora/"
        names = sorted(info.name[len(prefix) :] for info in self.objects.list(prefix))
        if names:
            return names
        found = sorted({item.metadata.get("corpus", "") for item in self._listed_heads()} - {""})
        for corpus in found:
            self._mark_corpus(corpus)
        return found

    def list_documents(self, corpus: str | None = None) -> list[DocumentMeta]:
        heads = self._map(self._head_at, self._listed_heads())
        metas = [h.meta for h in heads if h is not None and (corpus is None or h.meta.corpus == corpus)]
        return sorted(metas, key=lambda m: m.doc_id)

    def stats(self) -> dict[str, Any]:
        """Counts from one listing of the heads (their custom metadata), the shape SqliteIndex.stats() has."""
        corpora: dict[str, list[int]] = {}
        last: str | None = None
        for item in self._listed_heads():
            corpus = item.metadata.get("corpus", "")
            row = corpora.setdefault(corpus, [0, 0])
            row[0] += 1
            row[1] += int(item.metadata.get("chunks", "0") or 0)
            updated = item.metadata.get("updated")
            if updated and (last is None or updated > last):
                last = updated
        return {
            "documents": sum(d for d, _ in corpora.values()),
            "chunks": sum(n for _, n in corpora.values()),
            "corpora": [{"corpus": c, "documents": d, "chunks": n} for c, (d, n) in sorted(corpora.items())],
            "embedding_model": self.model_id,
            "dimension": self.dimension,
            "last_ingest": last,
        }
