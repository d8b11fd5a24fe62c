"""The SQLite connection pool: one connection per live thread, never one per thread that ever ran (a query's
corpus fan-out starts threads per request; a server that kept their connections ran out of descriptors)."""

import sqlite3
import threading

from regrag.adapters.local.sqlite_db import ConnectionPool


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
