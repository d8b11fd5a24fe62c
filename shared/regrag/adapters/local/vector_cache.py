"""Vectors cached by (model, content hash), so re-ingesting unchanged text never embeds it again.

Each entry carries a CRC-32 of its key and vector (checksums.py): an entry that fails it is a miss (the text is
embedded again and the entry rewritten), never a vector trusted into the index. Entries written before the
checksum existed are kept when they are unit vectors with finite values (what every embedder here returns; a
damaged one almost never is), and sealed with their checksum.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from regrag import logs
from regrag.adapters.local import checksums
from regrag.adapters.local.sqlite_db import ConnectionPool
from regrag.domain import integrity as I
from regrag.domain.integrity import Finding

log = logs.get("vector_cache")
CACHE_REPAIR = "run `regrag repair` (it sets the cache aside; vectors are embedded again as documents are ingested)"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_sum(model: str, text_hash: str, vec: bytes) -> int:
    return checksums.of(model, "\x1f", text_hash, "\x1f", vec)


def _plausible(vec: bytes) -> bool:
    """An entry written before checksums: a finite unit vector, as every embedder here returns."""
    if not vec or len(vec) % 4:
        return False
    arr = np.frombuffer(vec, dtype="<f4")
    return bool(np.all(np.isfinite(arr))) and abs(float(np.linalg.norm(arr)) - 1.0) < 1e-3


class SqliteVectorCache:
    """A (model, sha256(text)) → float32 vector table in its own SQLite file; safe across processes."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(path, CACHE_REPAIR)
        con = self._pool.get()
        con.execute(
            "CREATE TABLE IF NOT EXISTS vector(model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL, "
            "sum INTEGER, PRIMARY KEY(model, hash))"
        )
        if "sum" not in {row[1] for row in con.execute("PRAGMA table_info(vector)")}:
            con.execute("ALTER TABLE vector ADD COLUMN sum INTEGER")  # sealed entry by entry as they are read
        self.hits = 0
        self.misses = 0
        self.damaged = 0  # entries that failed their checksum (re-embedded)

    def get_many(self, model: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        con = self._pool.get()
        hashes = [content_hash(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        bad: list[str] = []
        sealed: list[tuple[int, str, str]] = []
        for i in range(0, len(unique), 500):
            batch = unique[i : i + 500]
            rows = con.execute(
                f"SELECT hash, vec, sum FROM vector WHERE model=? AND hash IN ({','.join('?' * len(batch))})",
                (model, *batch),
            ).fetchall()
            for h, vec, sum_ in rows:
                if sum_ is None and _plausible(vec):
                    sealed.append((entry_sum(model, h, vec), model, h))
                elif sum_ is None or entry_sum(model, h, vec) != sum_:
                    bad.append(h)
                    continue
                found[h] = np.frombuffer(vec, dtype="<f4").copy()
        if bad or sealed:
            self._after_read(model, bad, sealed)
        out = [found.get(h) for h in hashes]
        hit = sum(1 for v in out if v is not None)
        self.hits += hit
        self.misses += len(out) - hit
        return out

    def _after_read(self, model: str, bad: list[str], sealed: list[tuple[int, str, str]]) -> None:
        """Damaged entries are dropped (their texts are embedded again); old plausible ones get their checksum."""
        if bad:
            self.damaged += len(bad)
            logs.event(
                log, logging.ERROR, "damaged vector cache entries dropped", cache=str(self.path), entries=len(bad)
            )
        with self._pool.transaction() as con:
            con.executemany("DELETE FROM vector WHERE model=? AND hash=?", [(model, h) for h in bad])
            con.executemany("UPDATE vector SET sum=? WHERE model=? AND hash=?", sealed)

    def put_many(self, model: str, texts: Sequence[str], vectors: Sequence[np.ndarray]) -> None:
        rows = []
        for t, v in zip(texts, vectors, strict=True):
            h, vec = content_hash(t), np.asarray(v, dtype="<f4").tobytes()
            rows.append((model, h, vec, entry_sum(model, h, vec)))
        with self._pool.transaction() as con:
            con.executemany("INSERT OR REPLACE INTO vector(model, hash, vec, sum) VALUES (?,?,?,?)", rows)

    def check_integrity(self, deep: bool = True) -> list[Finding]:
        """The file (SQLite's check) and every entry's checksum; nothing when not `deep` (the cache only feeds
        ingest, and a damaged entry is never used anyway)."""
        if not deep:
            return []
        con = self._pool.get()
        problems = [r[0] for r in con.execute("PRAGMA integrity_check(20)").fetchall()]
        if problems != ["ok"]:
            detail = f"SQLite's integrity check failed: {'; '.join(problems[:3])}"
            return [Finding("damaged_file", str(self.path), detail, I.REBUILD)]
        bad = sum(
            1
            for model, h, vec, sum_ in con.execute("SELECT model, hash, vec, sum FROM vector")
            if (sum_ is None and not _plausible(vec)) or (sum_ is not None and entry_sum(model, h, vec) != sum_)
        )
        if not bad:
            return []
        detail = f"{bad} cached vector(s) fail their checksum (never used: re-embedded when needed); removed"
        return [Finding("cache_checksum", str(self.path), detail, I.STORE)]

    def fix(self, findings: Sequence[Finding]) -> list[Finding]:
        fixed = []
        for finding in findings:
            if finding.kind != "cache_checksum":
                continue
            with self._pool.transaction() as con:
                for model, h, vec, sum_ in con.execute("SELECT model, hash, vec, sum FROM vector").fetchall():
                    if (sum_ is None and not _plausible(vec)) or (
                        sum_ is not None and entry_sum(model, h, vec) != sum_
                    ):
                        con.execute("DELETE FROM vector WHERE model=? AND hash=?", (model, h))
            fixed.append(finding)
        return fixed

    def close(self) -> None:
        self._pool.close()


class CachingEmbedder:
    """Wraps an Embedder: document vectors come from the cache when the same model saw the same text."""

    def __init__(self, inner: Any, cache: SqliteVectorCache) -> None:
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
