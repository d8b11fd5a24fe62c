"""Run the `regrag` command and SIGKILL it at a chosen point: a crash where the test says, with no hook in the
product code.

    python kill_at.py MODULE:OWNER.METHOD N before|after [--max-message-bytes B] -- regrag arguments…

The N-th call of OWNER.METHOD (a class's method, or a module's function when OWNER is omitted: MODULE:FUNC)
kills the process with SIGKILL just before or just after it runs: no cleanup, no rollback, no flush, as when
the machine loses power or an operator kills the process (N = 0: never). `--max-message-bytes` splits every
stage message over B bytes into parts, as a document too large for one Pub/Sub message is.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
from typing import Any


def arm(target: str, nth: int, when: str) -> None:
    module_name, attribute = target.split(":", 1)
    owner: Any = importlib.import_module(module_name)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    calls = 0

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == nth and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args, **kwargs)
        if calls == nth and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, name, wrapper)


def split_messages(max_bytes: int) -> None:
    from regrag.domain import messages
    from regrag.ingest import embed, ingest

    split = functools.partial(messages.split_for_publish, max_bytes=max_bytes)
    ingest.split_for_publish = split  # type: ignore[assignment]
    embed.split_for_publish = split  # type: ignore[assignment]


def main() -> int:
    split = sys.argv.index("--")
    target, nth, when = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    options = sys.argv[4:split]
    if options[:1] == ["--max-message-bytes"]:
        split_messages(int(options[1]))
    arm(target, nth, when)
    from regrag.entrypoints.cli import main as regrag

    return regrag(sys.argv[split + 1 :])


if __name__ == "__main__":
    sys.exit(main())
