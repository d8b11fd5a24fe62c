"""Local storage failures are one StorageError naming the file and what to do; a write block is one transaction,
nested blocks join it, and a failure inside rolls all of it back (never "cannot rollback")."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from regrag.adapters.local import storage
from regrag.adapters.local.blobstore import DiskBlobStore
from regrag.adapters.local.chunk_store import SqliteIndex
from regrag.adapters.local.sqlite_db import ConnectionPool
from regrag.domain.errors import StorageError, Unavailable


@pytest.mark.parametrize(
    ("code", "kind", "words"),
    [
        (errno.ENOSPC, "full", "no space left"),
        (errno.EFBIG, "full", "no space left"),
        (errno.EROFS, "read_only", "make"),
        (errno.EACCES, "read_only", "writable"),
    ],
)
def test_os_errors_name_the_file_and_what_to_do(tmp_path, code, kind, words):
    error = storage.from_os_error(OSError(code, "refused", str(tmp_path / "f")), tmp_path / "f")
    assert isinstance(error, StorageError) and error.kind == kind
    assert str(tmp_path / "f") in str(error) and words in str(error)
    assert storage.from_os_error(FileNotFoundError(errno.ENOENT, "missing"), tmp_path) is None


def test_a_file_that_is_not_a_database_is_damaged_and_says_repair(tmp_path):
    path = tmp_path / "index.sqlite"
    path.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(StorageError) as raised:
        SqliteIndex(path, 4, "m")
    assert raised.value.kind == "damaged" and str(path) in str(raised.value)
    assert "regrag repair" in str(raised.value)


def test_a_lock_held_too_long_is_transient_not_storage(tmp_path):
    error = sqlite3.OperationalError("database is locked")
    error.sqlite_errorname = "SQLITE_BUSY"  # type: ignore[attr-defined]
    assert isinstance(storage.from_sqlite_error(error, tmp_path / "x.sqlite"), Unavailable)
    other = sqlite3.OperationalError("no such table: t")
    other.sqlite_errorname = "SQLITE_ERROR"  # type: ignore[attr-defined]
    assert storage.from_sqlite_error(other, tmp_path / "x.sqlite") is None


def test_a_nested_block_joins_the_outer_transaction_and_a_failure_rolls_back_everything(tmp_path):
    pool = ConnectionPool(tmp_path / "x.sqlite")
    pool.get().execute("CREATE TABLE t(x)")
    with pytest.raises(RuntimeError), pool.transaction() as con:
        con.execute("INSERT INTO t VALUES (1)")
        with pool.transaction() as inner:
            inner.execute("INSERT INTO t VALUES (2)")
        raise RuntimeError("killed half-way")
    assert pool.get().execute("SELECT count(*) FROM t").fetchone() == (0,)
    with pool.transaction() as con:
        con.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), pool.transaction() as inner:  # a nested block fails alone
            inner.execute("INSERT INTO t VALUES (2)")
            raise ValueError("this part only")
    assert pool.get().execute("SELECT x FROM t").fetchall() == [(1,)]
    assert pool.depth() == 0
    pool.close()


def test_a_failure_that_ended_the_transaction_is_reported_as_itself(tmp_path):
    """SQLite ends a transaction itself on some errors (a full disk): the rollback must not hide the error."""
    pool = ConnectionPool(tmp_path / "x.sqlite")
    with pytest.raises(RuntimeError, match="the real error"), pool.transaction() as con:
        con.execute("ROLLBACK")  # as SQLite does after SQLITE_FULL
        raise RuntimeError("the real error")
    pool.close()


def test_two_writers_of_one_object_never_share_a_temporary_file(tmp_path, monkeypatch):
    """Two processes upload the same object at once: each writes its own temporary file and renames it."""
    import os

    first, second = DiskBlobStore(tmp_path / "bucket"), DiskBlobStore(tmp_path / "bucket")
    renamed: list[str] = []
    rename = os.replace

    def between_write_and_rename(src, dst):  # type: ignore[no-untyped-def]
        renamed.append(str(src))
        if len(renamed) == 1:  # the second writer runs while the first one's file waits to be renamed
            second.write("docs/x.md", b"second")
        rename(src, dst)

    monkeypatch.setattr(os, "replace", between_write_and_rename)
    first.write("docs/x.md", b"first")
    assert len(set(renamed)) == 2 and (tmp_path / "bucket" / "docs" / "x.md").read_bytes() == b"first"
    assert [p.name for p in (tmp_path / "bucket" / "docs").iterdir()] == ["x.md"]  # no temporary file left
