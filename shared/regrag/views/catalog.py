"""The corpora the index holds, read from the store and cached (listing them is not free) until the store
changes: where the store has a write counter (ports.Versioned: the local index), a finished ingest in another
process is seen at the next query; elsewhere (the chunk map in Cloud Storage) for `ttl_s` at most."""

from __future__ import annotations

import threading
import time
from typing import Any

from regrag.ports import ChunkStore, Versioned

# how stale the list of corpora a query fans out over may be: GET /corpora and reconcile read it fresh, and a corpus
# added in the last half minute is searched from the next question on (not measured: a bound, not a cost)
TTL_S = 30.0


class CorpusCatalog:
    """[{corpus, documents, chunks}] from `ChunkStore.stats()`, kept until the store's version changes (or for
    `ttl_s` on a store without one), or until invalidated."""

    def __init__(self, store: ChunkStore, ttl_s: float = TTL_S) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self._cached: tuple[float, list[dict[str, Any]]] | None = None
        self._names: tuple[float, list[str]] | None = None
        self._version: int | None = None
        self._lock = threading.Lock()

    def _check_version(self) -> None:
        """Forget what was read at another version of the store (called with the lock held)."""
        if not isinstance(self.store, Versioned):
            return
        version = self.store.index_version()
        if version != self._version:
            self._cached = self._names = None
            self._version = version

    def entries(self) -> list[dict[str, Any]]:
        """[{corpus, documents, chunks}], sorted by name."""
        with self._lock:
            self._check_version()
            now = time.monotonic()
            if self._cached is None or now - self._cached[0] > self.ttl_s:
                self._cached = (now, list(self.store.stats().get("corpora", [])))
            return list(self._cached[1])

    def names(self) -> list[str]:
        """The corpora to search, from ChunkStore.corpus_names (no listing of every document), cached as entries."""
        with self._lock:
            self._check_version()
            now = time.monotonic()
            if self._names is None or now - self._names[0] > self.ttl_s:
                self._names = (now, self.store.corpus_names())
            return list(self._names[1])

    def invalidate(self) -> None:
        """Forget the cached list: an upsert or delete may have added or emptied a corpus."""
        with self._lock:
            self._cached = None
            self._names = None
