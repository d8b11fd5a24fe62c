"""The SQLite connection pool: one connection per live thread, never one per thread that ever ran (a query's
corpus fan-out starts threads per request; a server that kept their connections ran out of descriptors)."""

import sqlite3
import threading
import time

from regrag.adapters.local.sqlite_db import ConnectionPool, connect


def test_connections_of_ended_threads_are_closed_when_the_next_opens(tmp_path):
    pool = ConnectionPool(tmp_path / "x.sqlite")
    ended = []

    def work():
        con = pool.get()
        con.execute("SELECT 1").fetchone()
        ended.append(con)

    for _ in range(50):
        t = threading.Thread(target=work)
        t.start()
        t.join()
    assert pool.get().execute("SELECT 1").fetchone() == (1,)
    assert pool.open_connections() <= 2  # this thread's, and at most the last worker's
    closed = 0
    for con in ended[:-1]:
        try:
            con.execute("SELECT 1")
        except sqlite3.ProgrammingError:  # Cannot operate on a closed database
            closed += 1
    assert closed == 49
    pool.close()


def test_a_live_threads_connection_is_kept(tmp_path):
    pool = ConnectionPool(tmp_path / "x.sqlite")
    ready, release = threading.Event(), threading.Event()
    seen = {}

    def hold():
        seen["con"] = pool.get()
        ready.set()
        release.wait(5)
        seen["after"] = seen["con"].execute("SELECT 2").fetchone()

    t = threading.Thread(target=hold)
    t.start()
    ready.wait(5)
    pool.get()  # opening another connection must not close the live thread's
    release.set()
    t.join()
    assert seen["after"] == (2,)
    pool.close()


def test_a_new_file_held_by_another_connection_is_waited_for_not_refused(tmp_path):
    """Two commands opening a fresh data folder at once: the WAL switch needs the file to itself and SQLite
    answers it "database is locked" at once, without its busy wait (CI saw a command fail so). The opener waits
    for the holder to let go, as any other write does."""
    path = tmp_path / "fresh.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the other command creating its tables, before its own switch to WAL
    holder.execute("CREATE TABLE t(x)")
    opened: list[object] = []
    failed: list[BaseException] = []

    def open_it() -> None:
        try:
            opened.append(connect(path).execute("PRAGMA journal_mode").fetchone()[0])
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)

    opener = threading.Thread(target=open_it)
    opener.start()
    time.sleep(0.3)
    assert opener.is_alive() and not failed  # still waiting while the other holds the file
    holder.execute("COMMIT")
    opener.join(timeout=10)
    assert failed == [] and opened == ["wal"]
