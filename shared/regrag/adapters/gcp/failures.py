"""Permanent failures of event handling, and dead letters, as JSON objects in the state bucket:
`failures/<stage>/<date>/<id>.json`.

One object per failure (never an append to a shared object, which GCS would throttle to one write per second
and which concurrent instances would race on). Names start with a microsecond UTC timestamp, so a listing
returns failures in the order they happened. If the write itself fails, the error propagates: the event is
then redelivered rather than acknowledged with its failure unrecorded.

Dead letters: Pub/Sub moves a message to the function's dead-letter topic after its last delivery attempt, but
tells the function neither which attempt a delivery is nor that it is the last (Eventarc's event carries no
delivery count). So each failed delivery is counted here, by message id (`failures/attempts/<stage>/<id>`, a
compare-and-swap counter; a lifecycle rule removes them after 7 days), and the one that reaches the subscription's
maximum records the dead letter with the stage, the document and the error: the record the dead-letter topic's
copy of the message lacks.
"""

from __future__ import annotations

import builtins
import datetime as dt
import json
import threading
import uuid
from typing import Any

from regrag.adapters.gcp.blobstore import GcsBlobStore, GenerationMismatch

_STAGE_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_CAS_ATTEMPTS = 8


def _safe(text: str) -> str:
    return "".join(c if c in _STAGE_OK else "_" for c in text.lower()) or "unknown"


class GcsFailureRecorder:
    """The `FailureRecorder` port on a bucket (the state bucket), under `prefix`."""

    def __init__(self, blobs: GcsBlobStore, prefix: str = "failures/") -> None:
        self.blobs = blobs
        self.prefix = prefix
        self.attempts_prefix = f"{prefix}attempts/"  # infra/storage.tf expires these after 7 days
        self._mine: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, stage: str, key: str, reason: str, detail: dict[str, Any]) -> None:
        """Write one failure object; raises if the bucket refuses (the event is then redelivered)."""
        now = dt.datetime.now(dt.UTC)
        entry = {"time": now.isoformat(timespec="seconds"), "stage": stage, "key": key, "reason": reason, **detail}
        name = f"{self.prefix}{_safe(stage)}/{now:%Y-%m-%d}/{now:%Y%m%dT%H%M%S.%f}Z-{uuid.uuid4().hex[:12]}.json"
        body = json.dumps(entry, ensure_ascii=False).encode("utf-8")
        self.blobs.write(name, body, content_type="application/json; charset=utf-8")
        with self._lock:
            self._mine.append(entry)

    def list(self, stage: str | None = None) -> list[dict[str, Any]]:
        """Recorded failures, oldest first (all stages, or one); the delivery counters are not failures."""
        prefix = self.prefix + (f"{stage}/" if stage else "")
        infos = sorted(
            (i for i in self.blobs.list(prefix) if not i.name.startswith(self.attempts_prefix)),
            key=lambda info: info.name.rsplit("/", 1)[-1],
        )
        out = []
        for info in infos:
            blob = self.blobs.read_optional(info.name)
            if blob is not None:
                out.append(json.loads(blob.data.decode("utf-8")))
        return out

    def recorded(self) -> builtins.list[dict[str, Any]]:
        with self._lock:
            return builtins.list(self._mine)

    def failed_delivery(self, stage: str, message_id: str) -> int:
        """Count one more failed delivery of a message; the count so far (this one included)."""
        name = f"{self.attempts_prefix}{_safe(stage)}/{_safe(message_id)}"
        for _ in range(_CAS_ATTEMPTS):
            blob = self.blobs.read_optional(name)
            count = (int(blob.data or b"0") if blob is not None else 0) + 1
            try:
                self.blobs.write(
                    name,
                    str(count).encode("ascii"),
                    content_type="text/plain",
                    if_generation_match=blob.generation if blob is not None else 0,
                )
            except GenerationMismatch:
                continue  # another delivery of the same message failed at the same moment: count again
            return count
        return count
