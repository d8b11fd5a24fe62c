"""Bounded in-memory caches with hit/miss counters, keyed so that a re-ingest never serves stale results."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

import numpy as np

V = TypeVar("V")


class LruCache(Generic[V]):
    """A thread-safe LRU map with counters (reported by /healthz)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
            return None

    def put(self, key: Hashable, value: V) -> None:
        if self.max_entries <= 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        found = self.get(key)
        if found is not None:
            return found
        value = compute()
        self.put(key, value)
        return value

    def stats(self) -> dict[str, Any]:
        with self._lock:
            total = self.hits + self.misses
            return {
                "entries": len(self._data),
                "max_entries": self.max_entries,
                "hits": self.hits,
                "misses": self.misses,
                "hit_rate": round(self.hits / total, 4) if total else None,
            }


class QueryEmbeddingCache:
    """Wraps an Embedder: query vectors cached by (model, normalised question); documents pass through.

    The key holds the model id, so vectors of another model are never served; query vectors do not depend on
    the index, so a re-ingest leaves them valid.
    """

    def __init__(self, inner: Any, max_entries: int = 2048) -> None:
        self.inner = inner
        self.query_cache: LruCache[np.ndarray] = LruCache(max_entries)
        # single flight: identical questions asked at once are embedded once, the others wait for that result
        self._in_flight: dict[Hashable, Future[np.ndarray]] = {}
        self._flight_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed_documents(self, texts: Any) -> np.ndarray:
        return self.inner.embed_documents(texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> np.ndarray:
        key = (self.model_id, " ".join(text.split()))
        found = self.query_cache.get(key)
        if found is not None:
            return found
        with self._flight_lock:
            flight = self._in_flight.get(key)
            leader = flight is None
            if flight is None:
                flight = self._in_flight[key] = Future()
        if not leader:
            return flight.result()  # the leader's vector, or its exception
        try:
            vector = self.inner.embed_query(text)
            self.query_cache.put(key, vector)
            flight.set_result(vector)
            return vector
        except BaseException as exc:
            flight.set_exception(exc)
            raise
        finally:
            with self._flight_lock:
                self._in_flight.pop(key, None)

    def __getattr__(self, name: str) -> Any:  # e.g. the vector cache of a CachingEmbedder underneath
        return getattr(self.inner, name)
