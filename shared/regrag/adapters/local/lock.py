"""One writer at a time on a data folder: `regrag ingest`, `delete` and `repair` hold an exclusive lock on
`<data dir>/write.lock` while they write; a second one waits for the first to finish (saying so once).

SQLite alone would keep two writers' transactions apart, but not their batches: `repair` setting a damaged index
aside while an ingest writes to it, or two `--prune` runs each removing the other's documents. The lock is an
`flock`, so the kernel releases it when its holder dies, even by SIGKILL: a crash never leaves a stale lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from regrag import logs
from regrag.adapters.local.storage import guarded

log = logs.get("lock")


@contextlib.contextmanager
def exclusive(data_dir: Path, command: str) -> Iterator[None]:
    """Hold the data folder's write lock for the block; wait (logging who holds it) if another process does."""
    path = data_dir / "write.lock"
    with guarded(path):
        data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            logs.event(
                log,
                logging.WARNING,
                f"waiting for another regrag command writing to {data_dir} ({holder}) to finish",
                data_dir=str(data_dir),
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
        with guarded(path):
            os.ftruncate(fd, 0)
            record = {"pid": os.getpid(), "command": command, "since": time.strftime("%Y-%m-%dT%H:%M:%S")}
            os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        record = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return f"pid {record['pid']}: regrag {record['command']} since {record['since']}"
    return "another process"
