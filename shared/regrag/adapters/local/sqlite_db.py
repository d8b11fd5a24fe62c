"""SQLite connections with FTS5 and the sqlite-vec extension.

This Python's stdlib sqlite3 cannot load extensions (built without --enable-loadable-sqlite-extensions), so
connections come from pysqlite3-binary, which bundles a recent SQLite with FTS5. Keep every connection
creation here.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any


def connect(path: Path | str, *, vec: bool = True) -> Any:
    """Open a connection in WAL mode with sqlite-vec loaded (if `vec`)."""
    try:
        from pysqlite3 import dbapi2 as sqlite3
    except ImportError as exc:  # pragma: no cover - the requirement pins it
        raise RuntimeError(
            "pysqlite3-binary is required for the local index (pip install -r requirements.txt)"
        ) from exc
    con = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False, isolation_level=None)
    if vec:
        import sqlite_vec

        con.enable_load_extension(True)
        sqlite_vec.load(con)
        con.enable_load_extension(False)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("PRAGMA foreign_keys=ON")
    return con


class ConnectionPool:
    """One connection per thread (SQLite connections are not shared across threads), one write lock."""

    def __init__(self, path: Path | str, *, vec: bool = True) -> None:
        self.path = str(path)
        self._vec = vec
        self._local = threading.local()
        self.write_lock = threading.RLock()
        self._all: list[Any] = []
        self._all_lock = threading.Lock()

    def get(self) -> Any:
        con = getattr(self._local, "con", None)
        if con is None:
            con = connect(self.path, vec=self._vec)
            self._local.con = con
            with self._all_lock:
                self._all.append(con)
        return con

    def close(self) -> None:
        with self._all_lock:
            for con in self._all:
                with contextlib.suppress(Exception):  # closing is best effort at shutdown
                    con.close()
            self._all.clear()
        self._local = threading.local()
