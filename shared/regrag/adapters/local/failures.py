"""Permanent failures recorded as JSON lines, so a rejected upload or event is never lost silently."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any


class JsonlFailureRecorder:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def record(self, stage: str, key: str, reason: str, detail: dict[str, Any]) -> None:
        entry = {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "stage": stage,
            "key": key,
            "reason": reason,
            **detail,
        }
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def list(self, stage: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        rows = [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [r for r in rows if stage is None or r.get("stage") == stage]
