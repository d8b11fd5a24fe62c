"""Feedback and the query log in the state bucket (the `FeedbackStore` port; SqliteFeedbackStore locally).

Layout (under an optional prefix):

    queries/<query_id>.json       what one query asked and returned (written once: query ids are random)
    feedback/YYYY-MM-DD.jsonl     the day's feedback, one JSON line per request, in the order they landed

A day's object is appended to by read-modify-write with compare-and-swap on its GCS generation
(`if_generation_match`, 0 while the object does not exist yet). A writer that loses the race reads the new
generation and appends again, after a jittered backoff, up to `max_attempts` times; then it raises
`Unavailable` (HTTP 503: the client retries). So two requests at once both land, and none is dropped
silently. Each line carries a random `feedback_id`: if a conditional upload succeeded but its response was
lost and the client library retried it into a 412, the next attempt finds its own line already there and
stops instead of appending it twice.

GCS sustains about one write per second on one object name, which is far above the rate at which people
click "helpful"; a load beyond that would need per-instance or per-hour objects.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from regrag.adapters.gcp.blobstore import GenerationMismatch
from regrag.adapters.gcp.chunk_layout import Objects
from regrag.adapters.gcp.clients import LostRace, until_written
from regrag.domain.errors import InvalidInput, Unavailable

_QUERY_ID_RE = re.compile(r"[0-9a-f]{32}")  # uuid4().hex, as query/answer.py issues them
_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_JSON = "application/json; charset=utf-8"
_JSONL = "application/x-ndjson; charset=utf-8"
_ID = "feedback_id"  # stored on each line, stripped on reading: the SQLite store returns no such key


class GcsFeedbackStore:
    """The `FeedbackStore` port on a bucket (the state bucket), under `prefix`; see the module docstring."""

    def __init__(
        self,
        objects: Objects,
        prefix: str = "",
        *,
        max_attempts: int = 8,
        backoff_s: float = 0.05,
        max_backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.objects = objects
        self.prefix = prefix
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._sleep = sleep

    def _query_name(self, query_id: str) -> str:
        return f"{self.prefix}queries/{query_id}.json"

    def _day_name(self, day: str) -> str:
        return f"{self.prefix}feedback/{day}.jsonl"

    # --- the query log ------------------------------------------------------------------------------------

    def log_query(self, query_id: str, record: dict[str, Any]) -> None:
        """One object per query: no shared object, so queries never contend (and never hit the per-object
        write limit)."""
        if not _QUERY_ID_RE.fullmatch(query_id):
            raise InvalidInput(f"query_id {query_id!r} is not a 32-hex-digit id")  # it becomes an object name
        body = json.dumps(record, ensure_ascii=False).encode("utf-8")
        self.objects.write(self._query_name(query_id), body, content_type=_JSON)

    def get_query(self, query_id: str) -> dict[str, Any] | None:
        if not _QUERY_ID_RE.fullmatch(query_id):
            return None  # never a name outside queries/
        blob = self.objects.read_optional(self._query_name(query_id))
        return json.loads(blob.data.decode("utf-8")) if blob is not None else None

    # --- feedback -----------------------------------------------------------------------------------------

    def add_feedback(self, record: dict[str, Any]) -> None:
        """Append one line to the object of the record's UTC day (its `time`), with compare-and-swap."""
        day = str(record.get("time") or dt.datetime.now(dt.UTC).isoformat())[:10]
        if not _DAY_RE.fullmatch(day):
            raise InvalidInput(f"feedback time {record.get('time')!r} does not start with a YYYY-MM-DD date")
        feedback_id = uuid.uuid4().hex
        line = (json.dumps({**record, _ID: feedback_id}, ensure_ascii=False) + "\n").encode("utf-8")
        marker = f'"{_ID}": "{feedback_id}"'.encode()
        name = self._day_name(day)

        def attempt() -> None:
            blob = self.objects.read_optional(name)
            if blob is not None and marker in blob.data:
                return  # an earlier attempt did land (its response was lost): never append twice
            current = blob.data if blob is not None else b""
            if current and not current.endswith(b"\n"):
                current += b"\n"  # an object edited by hand: keep our line on a line of its own
            try:
                self.objects.write(
                    name, current + line, content_type=_JSONL, if_generation_match=blob.generation if blob else 0
                )
            except GenerationMismatch as exc:
                raise LostRace(name) from exc  # another request appended first: re-read, append to its version

        until_written(
            attempt,
            attempts=self.max_attempts,
            initial_s=self.backoff_s,
            maximum_s=self.max_backoff_s,
            sleep=self._sleep,
            exhausted=Unavailable(
                f"feedback for {day} was not recorded: {name} kept changing during {self.max_attempts} attempts; "
                "send it again"
            ),
        )

    def list_feedback(self) -> list[dict[str, Any]]:
        """Every feedback line joined with its query record (key `query`, None if unknown), oldest first: days in
        order, and within a day in the order the lines were appended."""
        prefix = f"{self.prefix}feedback/"
        days = sorted(
            info.name
            for info in self.objects.list(prefix)
            if _DAY_RE.fullmatch(info.name[len(prefix) :].removesuffix(".jsonl")) and info.name.endswith(".jsonl")
        )
        queries: dict[str, dict[str, Any] | None] = {}
        out = []
        for name in days:
            blob = self.objects.read_optional(name)
            if blob is None:
                continue  # deleted since the listing
            for raw in blob.data.decode("utf-8").splitlines():
                if not raw.strip():
                    continue
                record = json.loads(raw)
                record.pop(_ID, None)
                query_id = record.get("query_id")
                if isinstance(query_id, str) and query_id not in queries:
                    queries[query_id] = self.get_query(query_id)
                out.append({**record, "query": queries.get(query_id) if isinstance(query_id, str) else None})
        return out
