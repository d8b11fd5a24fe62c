"""Bounded in-memory caches with hit/miss counters, keyed so that a re-ingest never serves stale results."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from concurrent.futures import Future
from typing import Any, TypeVar

import numpy as np

from regrag.lru import LruCache

__all__ = ["LruCache", "QueryEmbeddingCache"]

V = TypeVar("V")


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
