"""The in-process stand-in for Pub/Sub: messages go through JSON, handlers are the functions' handlers.

Delivery semantics follow the GCP setup: a handler that raises is retried (with backoff) up to
`max_attempts`, then the message goes to the dead-letter list, and is recorded with the failure recorder (the
stage, the document, the error: `failures.jsonl`); a handler that returns acknowledges. Permanent errors are
acknowledged by the handlers themselves (see regrag.entrypoints.events.run_event).

A StorageError (a full disk, a damaged index) is not retried: no handler can succeed until an operator acts, so
the queue is dropped and the error reaches the command that published, which stops its batch. Nothing is lost:
each document is written in one transaction, and the files stay in the bucket for the next run.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from regrag import logs
from regrag.domain.errors import StorageError
from regrag.ports import FailureRecorder, Handler

log = logs.get("bus")


@dataclass(frozen=True)
class Delivery:
    topic: str
    message_id: str
    data: bytes
    attributes: dict[str, str]


class InProcessBus:
    """Publisher + subscribe. Publishing from inside a handler queues; the outermost publish drains the queue."""

    def __init__(self, max_attempts: int = 5, backoff_s: float = 0.05, failures: FailureRecorder | None = None) -> None:
        self._subscribers: dict[str, list[tuple[str, Handler]]] = {}
        self.failures = failures
        self._queue: deque[Delivery] = deque()
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._draining = threading.local()
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.dead_letters: list[tuple[Delivery, str]] = []
        self.published: dict[str, int] = {}

    def subscribe(self, topic: str, handler: Handler, stage: str | None = None) -> None:
        """Deliver `topic` to `handler`; `stage` names it in dead-letter records (default: the topic)."""
        self._subscribers.setdefault(topic, []).append((stage or topic, handler))

    def publish(self, topic: str, payload: dict[str, Any], attributes: dict[str, str] | None = None) -> str:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")  # the same wire format as Pub/Sub
        message_id = str(next(self._ids))
        with self._lock:
            self._queue.append(Delivery(topic, message_id, data, dict(attributes or {})))
            self.published[topic] = self.published.get(topic, 0) + 1
        if not getattr(self._draining, "active", False):
            self.drain()
        return message_id

    def drain(self) -> None:
        self._draining.active = True
        try:
            while True:
                with self._lock:
                    if not self._queue:
                        return
                    delivery = self._queue.popleft()
                for stage, handler in self._subscribers.get(delivery.topic, []):
                    self._deliver(stage, handler, delivery)
        except StorageError:
            with self._lock:
                self._queue.clear()  # every message would meet the same disk: the command stops instead
            raise
        finally:
            self._draining.active = False

    def _deliver(self, stage: str, handler: Handler, delivery: Delivery) -> None:
        for attempt in range(1, self.max_attempts + 1):
            try:
                handler(json.loads(delivery.data), delivery.attributes)
                return
            except StorageError:
                raise
            except Exception as exc:  # noqa: BLE001 - any raise means "not acknowledged", as on Pub/Sub
                if attempt == self.max_attempts:
                    self._dead_letter(stage, delivery, attempt, exc)
                    return
                logs.event(
                    log,
                    logging.WARNING,
                    "delivery failed; retrying",
                    topic=delivery.topic,
                    message_id=delivery.message_id,
                    attempt=attempt,
                    error=repr(exc),
                )
                time.sleep(self.backoff_s * 2 ** (attempt - 1))

    def _dead_letter(self, stage: str, delivery: Delivery, attempts: int, exc: Exception) -> None:
        self.dead_letters.append((delivery, repr(exc)))
        logs.event(
            log,
            logging.ERROR,
            "message dead-lettered",
            topic=delivery.topic,
            message_id=delivery.message_id,
            attempts=attempts,
            error=repr(exc),
        )
        if self.failures is not None:
            doc_id = delivery.attributes.get("doc_id", "?")
            self.failures.record(
                stage,
                doc_id,
                "dead_lettered",
                {
                    "error": f"{type(exc).__name__}: {exc}",
                    "doc_id": doc_id,
                    "kind": delivery.attributes.get("kind"),
                    "topic": delivery.topic,
                    "message_id": delivery.message_id,
                    "attempts": attempts,
                },
            )
