"""Watches and alerts in the state bucket (the `WatchStore` port; SqliteWatchStore locally).

Why Cloud Storage and not Firestore: the project already keeps its other mutable state there (chunk map, query
log, feedback, failures) under one prefix, with one IAM grant per function, one retention story and emulator
tests; watches and alerts are few, small, written rarely and read by key or by prefix, which objects do well.
Firestore would add a database, an API, IAM roles and an emulator (a Java download at run time, which this
project's machines cannot fetch) for no query objects cannot answer.

Layout (under an optional prefix):

    watches/<watch_id>.json                  the watch and its baseline (compare-and-swap on update)
    watch-follows/<doc_id>/<watch_id>        empty: the watch follows this document (a listing finds a
                                             document's watches: the upsert stage's lookup per document)
    watch-questions/<watch_id>               empty, its custom metadata the saved question's words and filters
                                             (one listing reads every saved question, no object per question)
    alerts/<alert_id>.json                   an alert, created once (its metadata: created, watch_id)

An index entry is written before the watch points at it and removed after the watch stops: a reader that meets
an entry whose watch does not (or no longer) follows the document skips it, so a crash between the two writes
leaves nothing wrong, only an entry to skip.
"""

from __future__ import annotations

import contextlib
import json
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

from regrag.adapters.gcp.blobstore import GenerationMismatch
from regrag.adapters.gcp.chunk_layout import Objects
from regrag.adapters.gcp.clients import LostRace, until_written
from regrag.domain.errors import InvalidInput, NotFound, Unavailable
from regrag.domain.ids import DOC_ID_RE
from regrag.domain.watches import QUESTION, Alert, Baseline, SavedQuestion, Watch

_JSON = "application/json; charset=utf-8"
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _checked_id(value: str, first: str) -> str:
    """Watch and alert ids become object names: exactly the shape this package issues."""
    if not (value.startswith(first) and len(value) == 24 and set(value[1:]) <= _ID_CHARS):
        raise InvalidInput(f"{value[:40]!r} is not a {'watch' if first == 'w' else 'alert'} id")
    return value


class GcsWatchStore:
    """The `WatchStore` port on a bucket (the state bucket), under `prefix`; see the module docstring."""

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

    # --- names ------------------------------------------------------------------------------------------------

    def _watch(self, watch_id: str) -> str:
        return f"{self.prefix}watches/{_checked_id(watch_id, 'w')}.json"

    def _follow(self, doc_id: str, watch_id: str = "") -> str:
        if not DOC_ID_RE.match(doc_id):
            raise InvalidInput(f"{doc_id[:40]!r} is not a document id")
        return f"{self.prefix}watch-follows/{doc_id}/{watch_id}"

    def _question(self, watch_id: str = "") -> str:
        return f"{self.prefix}watch-questions/{watch_id}"

    def _alert(self, alert_id: str) -> str:
        return f"{self.prefix}alerts/{_checked_id(alert_id, 'a')}.json"

    # --- watches ----------------------------------------------------------------------------------------------

    def put_watch(self, watch: Watch) -> bool:
        """Create the watch; when it exists already, only make sure its index entries are there (a crash after
        the first write of an earlier attempt left them out)."""
        name = self._watch(watch.watch_id)
        existing = self.objects.read_optional(name)
        created = False
        if existing is None:
            try:
                self._index(watch, ())
                self.objects.write(name, _dumps(watch.to_dict()), content_type=_JSON, if_generation_match=0)
                created = True
            except GenerationMismatch:
                existing = self.objects.read_optional(name)  # created at the same moment by another request
        if existing is not None:
            self._index(_load_watch(existing.data), ())
        return created

    def _index(self, watch: Watch, previous: Sequence[str]) -> None:
        """Index entries for what the watch follows now, then removal of those for what it no longer follows."""
        for doc_id in watch.followed:
            if doc_id not in previous:
                self.objects.write(self._follow(doc_id, watch.watch_id), b"")
        if watch.kind == QUESTION:
            metadata = {
                "terms": json.dumps(list(watch.terms), ensure_ascii=False),
                "filters": json.dumps(watch.filters, ensure_ascii=False, sort_keys=True),
            }
            self.objects.write(self._question(watch.watch_id), b"", metadata)
        for doc_id in previous:
            if doc_id not in watch.followed:
                self._delete(self._follow(doc_id, watch.watch_id))

    def _delete(self, name: str) -> None:
        with contextlib.suppress(NotFound):  # removed already (a retried removal)
            self.objects.delete(name)

    def get_watch(self, watch_id: str) -> Watch | None:
        blob = self.objects.read_optional(self._watch(watch_id))
        return _load_watch(blob.data) if blob is not None else None

    def list_watches(self) -> list[Watch]:
        watches = []
        for info in self.objects.list(f"{self.prefix}watches/"):
            blob = self.objects.read_optional(info.name)
            if blob is not None:
                watches.append(_load_watch(blob.data))
        return sorted(watches, key=lambda w: (w.created, w.watch_id))

    def remove_watch(self, watch_id: str) -> bool:
        name = self._watch(watch_id)
        blob = self.objects.read_optional(name)
        if blob is None:
            return False
        watch = _load_watch(blob.data)
        self._delete(name)  # first the watch: an index entry without its watch is skipped by readers
        for doc_id in watch.followed:
            self._delete(self._follow(doc_id, watch_id))
        if watch.kind == QUESTION:
            self._delete(self._question(watch_id))
        return True

    def watches_following(self, doc_ids: Sequence[str]) -> list[Watch]:
        found: dict[str, Watch] = {}
        for doc_id in dict.fromkeys(doc_ids):
            prefix = self._follow(doc_id)
            for info in self.objects.list(prefix):
                watch_id = info.name[len(prefix) :]
                if watch_id in found:
                    continue
                watch = self.get_watch(watch_id) if _is_id(watch_id, "w") else None
                if watch is not None and doc_id in watch.followed:  # else an entry left behind: skip it
                    found[watch_id] = watch
        return [found[k] for k in sorted(found)]

    def saved_questions(self) -> list[SavedQuestion]:
        prefix = self._question()
        out = []
        for item in self.objects.scan(prefix):
            watch_id = item.info.name[len(prefix) :]
            if not _is_id(watch_id, "w"):
                continue
            terms = json.loads(urllib.parse.unquote(item.metadata.get("terms", "[]")))
            filters = json.loads(urllib.parse.unquote(item.metadata.get("filters", "{}")))
            out.append(SavedQuestion(watch_id, tuple(terms), filters))
        return out

    def update_baseline(self, watch_id: str, baseline: Baseline) -> None:
        """Compare-and-swap on the watch's object: a concurrent update (another document's upsert) is re-read and
        the new baseline written over it; the index entries follow."""
        name = self._watch(watch_id)

        def attempt() -> None:
            blob = self.objects.read_optional(name)
            if blob is None:
                return  # removed meanwhile
            watch = _load_watch(blob.data)
            moved = watch.with_baseline(baseline)
            for doc_id in moved.followed:
                if doc_id not in watch.followed:
                    self.objects.write(self._follow(doc_id, watch_id), b"")
            try:
                self.objects.write(
                    name, _dumps(moved.to_dict()), content_type=_JSON, if_generation_match=blob.generation
                )
            except GenerationMismatch as exc:
                raise LostRace(name) from exc
            for doc_id in watch.followed:
                if doc_id not in moved.followed:
                    self._delete(self._follow(doc_id, watch_id))

        until_written(
            attempt,
            attempts=self.max_attempts,
            initial_s=self.backoff_s,
            maximum_s=self.max_backoff_s,
            sleep=self._sleep,
            exhausted=Unavailable(f"watch {watch_id} kept changing during {self.max_attempts} attempts; retry"),
        )

    # --- alerts -----------------------------------------------------------------------------------------------

    def add_alert(self, alert: Alert) -> bool:
        name = self._alert(alert.alert_id)
        if self.objects.read_optional(name) is not None:
            return False  # recorded by an earlier delivery (the storage emulator ignores the precondition below)
        metadata = {"created": alert.created, "watch_id": alert.watch_id}
        try:
            self.objects.write(name, _dumps(alert.to_dict()), metadata, content_type=_JSON, if_generation_match=0)
        except GenerationMismatch:
            return False  # recorded at the same moment by a concurrent delivery
        return True

    def list_alerts(self, *, since: str | None = None, watch_id: str | None = None, limit: int = 100) -> list[Alert]:
        """The listing carries each alert's time and watch (custom metadata): only the alerts returned are read."""
        prefix = f"{self.prefix}alerts/"
        listed = [
            (item.metadata.get("created", ""), item.info.name)
            for item in self.objects.scan(prefix)
            if (not since or item.metadata.get("created", "") >= since)
            and (not watch_id or item.metadata.get("watch_id") == watch_id)
        ]
        listed.sort(reverse=True)
        alerts = []
        for _, name in listed[:limit]:
            blob = self.objects.read_optional(name)
            if blob is not None:
                alerts.append(Alert.from_dict(json.loads(blob.data.decode("utf-8"))))
        return alerts


def _is_id(value: str, first: str) -> bool:
    try:
        _checked_id(value, first)
    except InvalidInput:
        return False
    return True


def _dumps(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _load_watch(data: bytes) -> Watch:
    return Watch.from_dict(json.loads(data.decode("utf-8")))
