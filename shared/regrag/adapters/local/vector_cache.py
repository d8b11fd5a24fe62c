"""Vectors cached by (model, content hash), so re-ingesting unchanged text never embeds it again."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from regrag.adapters.local.sqlite_db import ConnectionPool


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SqliteVectorCache:
    """A (model, sha256(text)) → float32 vector table in its own SQLite file; safe across processes."""

    def __init__(self, path: Path | str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(path)
        self._pool.get().execute(
            "CREATE TABLE IF NOT EXISTS vector(model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL, "
            "PRIMARY KEY(model, hash))"
        )
        self.hits = 0
        self.misses = 0

    def get_many(self, model: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        con = self._pool.get()
        hashes = [content_hash(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for i in range(0, len(unique), 500):
            batch = unique[i : i + 500]
            rows = con.execute(
                f"SELECT hash, vec FROM vector WHERE model=? AND hash IN ({','.join('?' * len(batch))})",
                (model, *batch),
            ).fetchall()
            found.update({h: np.frombuffer(v, dtype="<f4").copy() for h, v in rows})
        out = [found.get(h) for h in hashes]
        hit = sum(1 for v in out if v is not None)
        self.hits += hit
        self.misses += len(out) - hit
        return out

    def put_many(self, model: str, texts: Sequence[str], vectors: Sequence[np.ndarray]) -> None:
        with self._pool.write_lock:
            con = self._pool.get()
            con.execute("BEGIN IMMEDIATE")
            try:
                con.executemany(
                    "INSERT OR REPLACE INTO vector(model, hash, vec) VALUES (?,?,?)",
                    [
                        (model, content_hash(t), np.asarray(v, dtype="<f4").tobytes())
                        for t, v in zip(texts, vectors, strict=True)
                    ],
                )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise


class CachingEmbedder:
    """Wraps an Embedder: document vectors come from the cache when the same model saw the same text."""

    def __init__(self, inner, cache: SqliteVectorCache) -> None:  # type: ignore[no-untyped-def]
        self.inner = inner
        self.cache = cache

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        cached = self.cache.get_many(self.model_id, texts)
        missing = [i for i, v in enumerate(cached) if v is None]
        if missing:
            fresh = self.inner.embed_documents([texts[i] for i in missing])
            self.cache.put_many(self.model_id, [texts[i] for i in missing], list(fresh))
            for i, v in zip(missing, fresh, strict=True):
                cached[i] = v
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([np.asarray(v, dtype=np.float32) for v in cached])

    def embed_query(self, text: str) -> np.ndarray:
        return self.inner.embed_query(text)  # type: ignore[no-any-return]
