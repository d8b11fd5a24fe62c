"""The local SQLite files as files: can each be opened and read at all, and setting a damaged one aside.

A truncated or overwritten database cannot even be opened by the adapters that use it, so `regrag doctor` and
`regrag repair` look at the files first, each on its own: one damaged file must not hide the state of the others.
A damaged file is never deleted: it is renamed `<name>.damaged-<UTC time>` (with its -wal and -shm) beside
itself, for whoever wants to look at it, and the store starts afresh (the index is rebuilt from the bucket, the
vector cache refills as documents are embedded).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

from regrag.adapters.local import sqlite_db, storage
from regrag.adapters.local.snapshot_files import folder_for
from regrag.domain.errors import StorageError

_SIDE_FILES = ("-wal", "-shm")


def problem(path: Path, hint: str = storage.REPAIR) -> StorageError | None:
    """Why the SQLite file at `path` cannot be used (None when it is absent or passes SQLite's quick check); `hint`
    says what `regrag repair` does about it."""
    if not path.exists():
        return None
    try:
        con = sqlite_db.connect(path, hint)
        try:
            rows = [r[0] for r in con.execute("PRAGMA quick_check(5)").fetchall()]
        finally:
            con.close()
    except StorageError as exc:
        return exc
    if rows != ["ok"]:
        return storage.damaged(path, "SQLite's quick check: " + "; ".join(rows[:3]), hint)
    return None


def set_aside(path: Path) -> Path:
    """Rename a damaged database (and its WAL files, and an index's saved search snapshot) out of the way."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    with storage.guarded(path):
        os.replace(path, target)
        for suffix in _SIDE_FILES:
            side = path.with_name(path.name + suffix)
            if side.exists():
                os.replace(side, target.with_name(target.name + suffix))
        shutil.rmtree(folder_for(path), ignore_errors=True)
    return target
