"""Local storage failures as StorageError: one line that names the file and says what to do.

A full disk, a folder that cannot be written and a damaged SQLite file each used to surface as whatever the
layer below raised (`OSError: [Errno 28]`, `cannot rollback - no transaction is active`, `database disk image is
malformed`), naming no file. Every local adapter that touches the disk translates here, in one place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from regrag.domain.errors import StorageError, Unavailable

# RLIMIT_FSIZE (a per-process file size limit) fails writes with EFBIG: for the operator, the same as a full disk
_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}
_SQLITE_FULL = ("SQLITE_FULL",)
_SQLITE_READ_ONLY = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")
_SQLITE_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
_SQLITE_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")
REPAIR = "run `regrag repair` (it sets the file aside and rebuilds what it held)"
# what cannot be rebuilt from the bucket (the query log and feedback, watches and alerts) starts empty: the damaged
# file is kept beside it, for whatever SQLite's recovery tools can still read
START_EMPTY = "run `regrag repair` (it sets the file aside, kept beside the new one, and starts an empty store)"


def full(path: Path | str, reason: str) -> StorageError:
    return StorageError(
        f"{path}: no space left ({reason}): free space on that disk (or set REGRAG_DATA_DIR to another one) and run "
        "the command again; what was written before is intact",
        path=str(path),
        kind="full",
    )


def read_only(path: Path | str, reason: str) -> StorageError:
    folder = Path(path).parent
    return StorageError(
        f"{path}: cannot write ({reason}): make {folder} writable, or set REGRAG_DATA_DIR to a writable folder",
        path=str(path),
        kind="read_only",
    )


def damaged(path: Path | str, reason: str, hint: str = REPAIR) -> StorageError:
    return StorageError(f"{path} is damaged ({reason}): {hint}", path=str(path), kind="damaged")


def from_os_error(exc: OSError, path: Path | str) -> StorageError | None:
    """The StorageError an OSError on `path` stands for, or None (e.g. a missing file: the caller's business)."""
    where = exc.filename or path
    if exc.errno in _FULL:
        return full(where, exc.strerror or "disk full")
    if exc.errno in _READ_ONLY:
        return read_only(where, exc.strerror or "permission denied")
    if exc.errno == errno.EIO:
        return StorageError(
            f"{where}: the disk failed a read or write ({exc.strerror}): check the disk, then run `regrag doctor`",
            path=str(where),
            kind="io",
        )
    return None


def from_sqlite_error(exc: sqlite3.Error, path: Path | str, hint: str = REPAIR) -> Exception | None:
    """The error a SQLite failure on `path` stands for (StorageError; Unavailable for a lock held too long), or
    None when it is a programming or constraint error the caller must see as it is."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(_SQLITE_FULL):
        return full(path, str(exc))
    if name.startswith(_SQLITE_READ_ONLY):
        return read_only(path, str(exc))
    if name.startswith(_SQLITE_DAMAGED):
        return damaged(path, str(exc), hint)
    if name.startswith("SQLITE_IOERR"):
        short = out_of_space(path)
        if short is not None:  # a write refused for want of space reaches SQLite as an I/O error (EFBIG, ENOSPC)
            return full(path, f"{exc}: {short}")
        return StorageError(
            f"{path}: the disk failed a read or write ({exc}; a full disk does this too): free space or check the "
            "disk, then run `regrag doctor`",
            path=str(path),
            kind="io",
        )
    if name.startswith(_SQLITE_BUSY):
        return Unavailable(f"{path} is locked by another process for too long ({exc}); run the command again")
    return None


def out_of_space(path: Path | str) -> str | None:
    """Why writing to `path` may have failed for want of space: the disk nearly full, or the file at the
    process's file size limit (RLIMIT_FSIZE); None when neither."""
    target = Path(path)
    with contextlib.suppress(OSError):
        stats = os.statvfs(target.parent)
        if stats.f_bavail * stats.f_frsize < 4 * 1024 * 1024:
            return "the disk is full"
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY:
        with contextlib.suppress(OSError):
            sizes = [p.stat().st_size for p in (target, target.with_name(target.name + "-wal")) if p.exists()]
            if sizes and max(sizes) + 1024 * 1024 >= limit:
                return f"a file reached the process's file size limit ({limit} bytes)"
    return None


@contextlib.contextmanager
def guarded(path: Path | str) -> Iterator[None]:
    """Run a block of file I/O on `path`: a full disk or a read-only folder becomes a StorageError naming it."""
    try:
        yield
    except OSError as exc:
        translated = from_os_error(exc, path)
        if translated is None:
            raise
        raise translated from exc
