"""SQLite connections (stdlib sqlite3: no extension is needed, searches run in numpy). Keep every connection
creation here."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# how long a writer waits for another's lock before SQLite gives up: longer than the slowest write transaction
# (one document's chunks and vectors; 民法典's 1,260 articles take seconds), so writers queue instead of failing
BUSY_TIMEOUT_S = 30.0


def connect(path: Path | str) -> Any:
    """Open a connection in autocommit mode (transactions are explicit) with WAL journaling."""
    con = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("PRAGMA foreign_keys=ON")
    return con


class ConnectionPool:
    """One connection per live thread (SQLite connections are not shared across threads), one write lock.

    Threads come and go (a query's corpus fan-out runs on threads of its own), so the connection of a thread
    that has ended is closed when the next one opens: the open connections stay bounded by the live threads,
    not by the requests served (each is two file descriptors with WAL; a long-running server once ran out).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._local = threading.local()
        self.write_lock = threading.RLock()
        self._all: list[tuple[weakref.ref[threading.Thread], Any]] = []
        self._all_lock = threading.Lock()

    def get(self) -> Any:
        con = getattr(self._local, "con", None)
        if con is None:
            con = connect(self.path)
            self._local.con = con
            with self._all_lock:
                self._close_orphans()
                self._all.append((weakref.ref(threading.current_thread()), con))
        return con

    def open_connections(self) -> int:
        with self._all_lock:
            return len(self._all)

    def _close_orphans(self) -> None:
        live = []
        for ref, con in self._all:
            thread = ref()
            if thread is not None and thread.is_alive():
                live.append((ref, con))
                continue
            with contextlib.suppress(Exception):  # its thread is gone: nobody else uses it
                con.close()
        self._all = live

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
            for _, con in self._all:
                with contextlib.suppress(Exception):  # closing is best effort at shutdown
                    con.close()
            self._all.clear()
        self._local = threading.local()
