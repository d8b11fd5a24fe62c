"""The in-process stand-in for Pub/Sub: messages go through JSON, handlers are the functions' handlers.

Delivery semantics follow the GCP setup: a handler that raises is retried (with backoff) up to
`max_attempts`, then the message goes to the dead-letter list; a handler that returns acknowledges.
Permanent errors are acknowledged by the handlers themselves (see regrag.entrypoints.events.run_event).
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
from regrag.ports import Handler

log = logs.get("bus")


@dataclass(frozen=True)
class Delivery:
    topic: str
    message_id: str
    data: bytes
    attributes: dict[str, str]


class InProcessBus:
    """Publisher + subscribe. Publishing from inside a handler queues; the outermost publish drains the queue."""

    def __init__(self, max_attempts: int = 5, backoff_s: float = 0.05) -> None:
        self._subscribers: dict[str, list[Handler]] = {}
        self._queue: deque[Delivery] = deque()
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._draining = threading.local()
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.dead_letters: list[tuple[Delivery, str]] = []
        self.published: dict[str, int] = {}

    def subscribe(self, topic: str, handler: Handler) -> None:
        self._subscribers.setdefault(topic, []).append(handler)

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
                for handler in self._subscribers.get(delivery.topic, []):
                    self._deliver(handler, delivery)
        finally:
            self._draining.active = False

    def _deliver(self, handler: Handler, delivery: Delivery) -> None:
        for attempt in range(1, self.max_attempts + 1):
            try:
                handler(json.loads(delivery.data), delivery.attributes)
                return
            except Exception as exc:  # noqa: BLE001 - any raise means "not acknowledged", as on Pub/Sub
                if attempt == self.max_attempts:
                    self.dead_letters.append((delivery, repr(exc)))
                    logs.event(
                        log,
                        logging.ERROR,
                        "message dead-lettered",
                        topic=delivery.topic,
                        message_id=delivery.message_id,
                        attempts=attempt,
                        error=repr(exc),
                    )
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
