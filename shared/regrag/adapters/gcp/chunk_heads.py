"""The chunk map's plumbing under GcsChunkStore: object names, per-document locks, cached heads with their
compare-and-swap update, and the content-addressed objects they name (see chunk_store for the layout)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from regrag.adapters.gcp.blobstore import GenerationMismatch, Listed
from regrag.adapters.gcp.chunk_layout import JSON_TYPE, Head, MissingObject, Objects, content_sha
from regrag.adapters.gcp.clients import LostRace, until_written
from regrag.domain.errors import NotFound, Unavailable
from regrag.domain.models import Chunk, DocumentMeta
from regrag.lru import LruCache

# A head written by two instances at once: the loser re-reads and tries again after a jittered 20 ms, 40 ms … up to
# 1 s, 12 times (at most ≈ 6 s in all), before the message goes back to Pub/Sub for a later delivery (not measured:
# GCS takes about one write per second on one object, and the parts of one document rarely land together)
_CAS_ATTEMPTS = 12
CAS_BACKOFF_S = 0.02
CAS_MAX_BACKOFF_S = 1.0
# parsed immutable objects kept (a part is ~50 kB: ≈ 13 MB) and chunk owners (an id and a doc id each: a few MB)
OBJECTS_CACHED = 256
CHUNK_OWNERS_CACHED = 100_000
# chunk-map objects read at once (each a GCS read that waits on the network; not measured)
READ_WORKERS = 16


class HeadStore:
    """Names, locks, heads and immutable objects of a chunk map; GcsChunkStore adds the port's operations."""

    def __init__(
        self,
        objects: Objects,
        *,
        prefix: str = "",
        dimension: int | None = None,
        model_id: str | None = None,
        cache_s: float = 30.0,
        max_workers: int = READ_WORKERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.objects = objects
        self.prefix = prefix
        self.dimension = dimension
        self.model_id = model_id
        self.cache_s = cache_s
        self.max_workers = max_workers
        self._clock = clock
        self._corpora_marked: set[str] = set()
        self._heads: dict[str, tuple[float, int, Head | None]] = {}  # doc id → (fetched at, object gen, head)
        # content-addressed object name → parsed content (a part is ~50 kB: 256 of them ≈ 13 MB)
        self._objects_cache: LruCache[Any] = LruCache(OBJECTS_CACHED)
        self._doc_of: LruCache[str] = LruCache(CHUNK_OWNERS_CACHED)  # chunk id → doc id
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    # --- names --------------------------------------------------------------------------------------------

    def _head_name(self, doc_id: str) -> str:
        return f"{self.prefix}docs/{doc_id}/head.json"

    def _pointer_name(self, chunk_id: str) -> str:
        return f"{self.prefix}chunk-ids/{chunk_id}.json"

    def _marker_name(self, older: str, newer: str) -> str:
        return f"{self.prefix}successors/{older}/{newer}"

    def _key_prefix(self, corpus: str, kind: str, key: str) -> str:
        # keys are Chinese titles: hashed to keep object names ASCII and short
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
        return f"{self.prefix}keys/{corpus}/{kind}/{digest}/"

    def _key_names(self, meta: DocumentMeta) -> list[str]:
        return [self._key_prefix(scope, kind, key) + meta.doc_id for scope, kind, key in meta.index_keys()]

    def _lock(self, doc_id: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(doc_id, threading.RLock())

    def _map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        if len(items) <= 1:
            return [fn(i) for i in items]
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(items)), thread_name_prefix="chunkmap") as pool:
            return list(pool.map(fn, items))

    # --- heads --------------------------------------------------------------------------------------------

    def _fetch_head(self, doc_id: str) -> tuple[int, Head | None]:
        blob = self.objects.read_optional(self._head_name(doc_id))
        entry = (0, None) if blob is None else (blob.generation, Head.from_json(blob.data))
        with self._guard:
            self._heads[doc_id] = (self._clock(), *entry)
        return entry

    def _head(self, doc_id: str, fresh: bool = False) -> Head | None:
        with self._guard:
            cached = self._heads.get(doc_id)
        if not fresh and cached is not None and self._clock() - cached[0] <= self.cache_s:
            return cached[2]
        return self._fetch_head(doc_id)[1]

    def _head_at(self, listed: Listed) -> Head | None:
        """A listed head, parsed; the cached copy when its object generation has not changed; None when the
        document was deleted between the listing and the read."""
        doc_id = listed.info.name[len(self.prefix) + len("docs/") : -len("/head.json")]
        with self._guard:
            cached = self._heads.get(doc_id)
        if cached is not None and cached[1] == listed.info.generation and cached[2] is not None:
            return cached[2]
        return self._fetch_head(doc_id)[1]

    def _update_head(self, doc_id: str, change: Callable[[Head | None], Head | None]) -> Head | None:
        """Read-modify-write the head with compare-and-swap; `change` returns the new head (None deletes it)
        and must be repeatable, as it runs again after a lost race."""
        name = self._head_name(doc_id)

        def attempt() -> Head | None:
            while True:
                generation, head = self._fetch_head(doc_id)
                new = change(head)
                if new is head:
                    return head
                try:
                    if new is None:
                        if head is not None:
                            self.objects.delete(name, if_generation_match=generation)
                        stored = 0
                    else:
                        stored = self.objects.write(
                            name, new.to_json(), new.metadata(), content_type=JSON_TYPE, if_generation_match=generation
                        ).generation
                except GenerationMismatch as exc:
                    raise LostRace(name) from exc
                except NotFound:
                    continue  # deleted meanwhile: decide again on what is there now
                with self._guard:
                    self._heads[doc_id] = (self._clock(), stored, new)
                return new

        return until_written(
            attempt,
            attempts=_CAS_ATTEMPTS,
            initial_s=CAS_BACKOFF_S,
            maximum_s=CAS_MAX_BACKOFF_S,
            exhausted=Unavailable(f"the chunk map head of {doc_id} kept changing; retry later"),
        )

    # --- immutable objects ------------------------------------------------------------------------------

    def _read_object(self, name: str) -> bytes:
        blob = self.objects.read_optional(name)
        if blob is None:
            raise MissingObject(f"chunk map object {name} is gone; retry")
        if not name.rsplit("/", 1)[-1].split(".", 1)[0].endswith(content_sha(blob.data)):
            raise MissingObject(f"chunk map object {name} does not match its content hash")
        return blob.data

    def _part_rows(self, name: str) -> list[dict[str, Any]]:
        rows = self._objects_cache.get(name)
        if rows is None:
            rows = json.loads(self._read_object(name).decode("utf-8"))["chunks"]
            self._objects_cache.put(name, rows)
        return list(rows)

    def _chunks_in(self, head: Head, name: str) -> dict[str, Chunk]:
        """The live chunks whose data is in part object `name`, with the head's (current) metadata."""
        meta = head.meta
        return {
            row["id"]: Chunk.from_dict({**row, "meta": meta})
            for row in self._part_rows(name)
            if head.chunks.get(row["id"], (0, ""))[1] == name
        }

    def _text(self, head: Head) -> str:
        text = self._objects_cache.get(head.text_name)
        if text is None:
            text = self._read_object(head.text_name).decode("utf-8")
            self._objects_cache.put(head.text_name, text)
        return str(text)

    def _reading(self, doc_id: str, read: Callable[[Head], Any]) -> Any:
        """`read(head)` on the cached head; once more on a fresh head if an object it names is gone."""
        head = self._head(doc_id)
        if head is None:
            return None
        try:
            return read(head)
        except MissingObject:
            head = self._head(doc_id, fresh=True)
            return None if head is None else read(head)
