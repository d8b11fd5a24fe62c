"""Document frequencies for the sparse (BM25) leg, kept as one JSON object in the state bucket.

Written by the reconcile job, which counts them over the whole chunk map (an exact recount: increments on the
upsert path would double-count under Pub/Sub's at-least-once delivery, and one shared object updated by
every upsert would hit GCS's one-write-per-second-per-object limit). Read by query instances, cached for
`refresh_s` seconds; a missing object means "no frequencies yet" (every idf is 1).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Protocol

from regrag.adapters.gcp.blobstore import GcsBlobStore
from regrag.adapters.gcp.sparse import Lexicon

SCHEMA_VERSION = 1


class LexiconSource(Protocol):
    """Where the sparse leg gets document frequencies from (GcsLexicon; a fixed one in tests)."""

    def current(self) -> Lexicon:
        """The frequencies to weight query tokens with now."""
        ...

    def save(self, lexicon: Lexicon) -> None: ...


class GcsLexicon:
    """Document frequencies as one JSON object (`name`) in a bucket, re-read every `refresh_s` seconds."""

    def __init__(self, blobs: GcsBlobStore, name: str = "lexicon/df.json", refresh_s: float = 600.0) -> None:
        self.blobs = blobs
        self.name = name
        self.refresh_s = refresh_s
        self._cached: tuple[float, Lexicon] | None = None
        self._lock = threading.Lock()

    def current(self) -> Lexicon:
        with self._lock:
            now = time.monotonic()
            if self._cached is None or now - self._cached[0] > self.refresh_s:
                self._cached = (now, self._load())
            return self._cached[1]

    def _load(self) -> Lexicon:
        blob = self.blobs.read_optional(self.name)
        if blob is None:
            return Lexicon()
        data = json.loads(blob.data.decode("utf-8"))
        if data.get("schema_version") != SCHEMA_VERSION:
            return Lexicon()  # written by another version: ranking without idf beats ranking with wrong idf
        return Lexicon(int(data["chunks"]), {str(k): int(v) for k, v in data["df"].items()}, data.get("avgdl"))

    def save(self, lexicon: Lexicon) -> None:
        """Replace the stored frequencies (one writer: the reconcile job) and use them here at once."""
        body = {"schema_version": SCHEMA_VERSION, "chunks": lexicon.chunks, "avgdl": lexicon.avgdl, "df": lexicon.df}
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
        self.blobs.write(self.name, data, content_type="application/json; charset=utf-8")
        with self._lock:
            self._cached = (time.monotonic(), lexicon)
