"""SQLite connections (stdlib sqlite3: no extension is needed, searches run in numpy). Keep every connection
creation here."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def connect(path: Path | str) -> Any:
    """Open a connection in autocommit mode (transactions are explicit) with WAL journaling."""
    con = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("PRAGMA foreign_keys=ON")
    return con


class ConnectionPool:
    """One connection per thread (SQLite connections are not shared across threads), one write lock."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._local = threading.local()
        self.write_lock = threading.RLock()
        self._all: list[Any] = []
        self._all_lock = threading.Lock()

    def get(self) -> Any:
        con = getattr(self._local, "con", None)
        if con is None:
            con = connect(self.path)
            self._local.con = con
            with self._all_lock:
                self._all.append(con)
        return con

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """One write transaction on this thread's connection: committed when the block ends, rolled back if it
        raises. BEGIN IMMEDIATE takes SQLite's write lock up front, so a second writer (another process) waits
        out `timeout` instead of failing mid-transaction on a lock upgrade."""
        with self.write_lock:
            con = self.get()
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def close(self) -> None:
        with self._all_lock:
            for con in self._all:
                with contextlib.suppress(Exception):  # closing is best effort at shutdown
                    con.close()
            self._all.clear()
        self._local = threading.local()
