"""SQLite connections (stdlib sqlite3: no extension is needed, searches run in numpy). Keep every connection
creation here.

Every statement and fetch on a connection made here translates a storage failure (full disk, read-only folder,
damaged file) into a StorageError that names the file (storage.py): callers above never see a bare
`sqlite3.DatabaseError`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from regrag.adapters.local import storage
from regrag.domain.errors import Unavailable

# how long a writer waits for another's lock before SQLite gives up: longer than the slowest write transaction
# (one document's chunks and vectors; 民法典's 1,260 articles take seconds), so writers queue instead of failing
BUSY_TIMEOUT_S = 30.0


class _Cursor(sqlite3.Cursor):
    """A cursor whose storage failures, at execute or at fetch (a damaged page is found while stepping), are
    StorageErrors naming the file."""

    def _raise(self, exc: sqlite3.Error) -> Any:
        con = self.connection
        translated = storage.from_sqlite_error(exc, getattr(con, "path", "?"), getattr(con, "damaged_hint", ""))
        if translated is None:
            raise exc
        raise translated from exc

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        try:
            super().execute(sql, parameters)
        except sqlite3.Error as exc:
            self._raise(exc)
        return self

    def executemany(self, sql: str, seq: Any, /) -> _Cursor:
        try:
            super().executemany(sql, seq)
        except sqlite3.Error as exc:
            self._raise(exc)
        return self

    def executescript(self, script: str, /) -> _Cursor:
        try:
            super().executescript(script)
        except sqlite3.Error as exc:
            self._raise(exc)
        return self

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as exc:
            return self._raise(exc)

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size) if size is not None else super().fetchmany()
        except sqlite3.Error as exc:
            return self._raise(exc)  # type: ignore[no-any-return]

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as exc:
            return self._raise(exc)  # type: ignore[no-any-return]

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as exc:
            return self._raise(exc)


class _Connection(sqlite3.Connection):
    """A connection whose statements run on _Cursor (Connection.execute would make a plain cursor)."""

    path = "?"
    damaged_hint = storage.REPAIR

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or _Cursor)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq: Any, /) -> Any:
        return self.cursor().executemany(sql, seq)

    def executescript(self, script: str, /) -> Any:
        return self.cursor().executescript(script)


def connect(path: Path | str, damaged_hint: str = storage.REPAIR) -> Any:
    """Open a connection in autocommit mode (transactions are explicit) with WAL journaling."""
    try:
        con = sqlite3.connect(
            str(path), timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None, factory=_Connection
        )
    except sqlite3.Error as exc:
        translated = storage.from_sqlite_error(exc, path, damaged_hint)
        raise (translated or exc) from exc
    con.path = str(path)
    con.damaged_hint = damaged_hint
    _journal_wal(con)
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("PRAGMA foreign_keys=ON")
    return con


def _journal_wal(con: Any) -> None:
    """Turn on WAL journaling, waiting out another process that holds the file meanwhile.

    Switching a new file to WAL needs the file to itself, and SQLite does not call its busy handler for that
    switch: two commands opening a fresh data folder at once got "database is locked" at once (CI saw it, with
    an empty summary). The switch is retried for as long as any other write would wait. A file already in WAL
    mode (every file after its first open) needs no lock for this and returns at once."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            con.execute("PRAGMA journal_mode=WAL")
            return
        except Unavailable:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


class ConnectionPool:
    """One connection per live thread (SQLite connections are not shared across threads), one write lock.

    Threads come and go (a query's corpus fan-out runs on threads of its own), so the connection of a thread
    that has ended is closed when the next one opens: the open connections stay bounded by the live threads,
    not by the requests served (each is two file descriptors with WAL; a long-running server once ran out).

    `damaged_hint`: what the StorageError of a damaged file tells the operator to do (it depends on what the
    file holds: the index is rebuilt from the bucket, the vector cache is set aside and refilled).
    """

    def __init__(self, path: Path | str, damaged_hint: str = storage.REPAIR) -> None:
        self.path = str(path)
        self.damaged_hint = damaged_hint
        self._local = threading.local()
        self.write_lock = threading.RLock()
        self._all: list[tuple[weakref.ref[threading.Thread], Any]] = []
        self._all_lock = threading.Lock()

    def get(self) -> Any:
        con = getattr(self._local, "con", None)
        if con is None:
            con = connect(self.path, self.damaged_hint)
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

    def depth(self) -> int:
        """How many transaction blocks this thread is inside (0: none)."""
        return int(getattr(self._local, "depth", 0))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """One write transaction on this thread's connection: committed when the block ends, rolled back if it
        raises. BEGIN IMMEDIATE takes SQLite's write lock up front, so a second writer (another process) waits
        out `timeout` instead of failing mid-transaction on a lock upgrade.

        A block inside another block of this thread joins it as a savepoint: it is rolled back alone if it
        raises, and committed only with the outermost block. That is how a document's upsert (chunks, vectors,
        terms, version links, obsolete chunks) is one transaction though each port writes in its own block."""
        with self.write_lock:
            con = self.get()
            depth = self.depth()
            if depth:
                yield from self._savepoint(con, depth)
                return
            con.execute("BEGIN IMMEDIATE")
            self._local.depth = 1
            try:
                yield con
                con.execute("COMMIT")
            except BaseException:
                # SQLite itself ends a transaction that hit a full disk: ROLLBACK then fails with "no transaction
                # is active" and would hide the real error
                if con.in_transaction:
                    with contextlib.suppress(Exception):
                        con.execute("ROLLBACK")
                raise
            finally:
                self._local.depth = 0

    def _savepoint(self, con: Any, depth: int) -> Iterator[Any]:
        name = f"nested_{depth}"
        con.execute(f"SAVEPOINT {name}")
        self._local.depth = depth + 1
        try:
            yield con
        except BaseException:
            if con.in_transaction:
                with contextlib.suppress(Exception):
                    con.execute(f"ROLLBACK TO {name}")
                    con.execute(f"RELEASE {name}")
            raise
        finally:
            self._local.depth = depth
        con.execute(f"RELEASE {name}")

    def close(self) -> None:
        with self._all_lock:
            for _, con in self._all:
                with contextlib.suppress(Exception):  # closing is best effort at shutdown
                    con.close()
            self._all.clear()
        self._local = threading.local()
