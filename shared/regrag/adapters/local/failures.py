"""Permanent failures and dead letters recorded as JSON lines, so a rejected upload or event is never lost silently.

Several processes may append to the same file at once (two `regrag ingest` runs): each line is written with one
`write` in append mode, and each recorder keeps what it wrote itself, so a command reports its own failures only.
"""

from __future__ import annotations

import builtins
import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any

from regrag.adapters.local.storage import guarded


class JsonlFailureRecorder:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._mine: list[dict[str, Any]] = []

    def record(self, stage: str, key: str, reason: str, detail: dict[str, Any]) -> None:
        entry = {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "stage": stage,
            "key": key,
            "reason": reason,
            **detail,
        }
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock, guarded(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
            self._mine.append(entry)

    def list(self, stage: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        rows = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # a line cut short by a full disk or a kill: the others still count
        return [r for r in rows if isinstance(r, dict) and (stage is None or r.get("stage") == stage)]

    def recorded(self) -> builtins.list[dict[str, Any]]:
        with self._lock:
            return list(self._mine)
