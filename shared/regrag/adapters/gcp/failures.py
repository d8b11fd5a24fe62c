"""Permanent failures of event handling as JSON objects in the state bucket: `failures/<stage>/<date>/<id>.json`.

One object per failure (never an append to a shared object, which GCS would throttle to one write per second
and which concurrent instances would race on). Names start with a microsecond UTC timestamp, so a listing
returns failures in the order they happened. If the write itself fails, the error propagates: the event is
then redelivered rather than acknowledged with its failure unrecorded.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from regrag.adapters.gcp.blobstore import GcsBlobStore

_STAGE_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


class GcsFailureRecorder:
    """The `FailureRecorder` port on a bucket (the state bucket), under `prefix`."""

    def __init__(self, blobs: GcsBlobStore, prefix: str = "failures/") -> None:
        self.blobs = blobs
        self.prefix = prefix

    def record(self, stage: str, key: str, reason: str, detail: dict[str, Any]) -> None:
        """Write one failure object; raises if the bucket refuses (the event is then redelivered)."""
        now = dt.datetime.now(dt.UTC)
        entry = {"time": now.isoformat(timespec="seconds"), "stage": stage, "key": key, "reason": reason, **detail}
        safe_stage = "".join(c if c in _STAGE_OK else "_" for c in stage.lower()) or "unknown"
        name = f"{self.prefix}{safe_stage}/{now:%Y-%m-%d}/{now:%Y%m%dT%H%M%S.%f}Z-{uuid.uuid4().hex[:12]}.json"
        body = json.dumps(entry, ensure_ascii=False).encode("utf-8")
        self.blobs.write(name, body, content_type="application/json; charset=utf-8")

    def list(self, stage: str | None = None) -> list[dict[str, Any]]:
        """Recorded failures, oldest first (all stages, or one)."""
        prefix = self.prefix + (f"{stage}/" if stage else "")
        infos = sorted(self.blobs.list(prefix), key=lambda info: info.name.rsplit("/", 1)[-1])
        out = []
        for info in infos:
            blob = self.blobs.read_optional(info.name)
            if blob is not None:
                out.append(json.loads(blob.data.decode("utf-8")))
        return out
