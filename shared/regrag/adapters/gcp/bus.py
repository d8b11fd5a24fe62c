"""Stage messages on Pub/Sub (google-cloud-pubsub): UTF-8 JSON with a `schema_version`, checked before publish.

Ordering is not assumed anywhere (no ordering keys): every message carries what its handler needs, and
handlers are idempotent. Limits are checked here, before the client sees the message, because a message the
service would refuse can never be published and must fail as a permanent error, not be retried: data plus
attributes at most 10 MB, at most 100 attributes, keys ≤ 256 bytes, values ≤ 1024 bytes.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from regrag.adapters.gcp.clients import api_retry, publisher_client
from regrag.adapters.gcp.errors import translated
from regrag.domain.errors import InvalidInput, Unavailable

MAX_REQUEST_BYTES = 10_000_000  # the Python client refuses a publish request from 10,000,000 bytes (decimal)
_ENVELOPE_BYTES = 1_000  # topic name and protobuf framing inside the same request
MAX_ATTRIBUTES = 100
MAX_KEY_BYTES = 256
MAX_VALUE_BYTES = 1024


def encode_message(payload: dict[str, Any], attributes: dict[str, str] | None) -> tuple[bytes, dict[str, str]]:
    """The wire form of a stage message, or InvalidInput naming the limit it breaks."""
    if not isinstance(payload, dict) or not isinstance(payload.get("schema_version"), int):
        raise InvalidInput("a stage message must be a JSON object with an integer schema_version")
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    attrs = {str(k): str(v) for k, v in (attributes or {}).items()}
    if len(attrs) > MAX_ATTRIBUTES:
        raise InvalidInput(f"{len(attrs)} attributes; Pub/Sub allows {MAX_ATTRIBUTES}")
    for key, value in attrs.items():
        if not key or len(key.encode()) > MAX_KEY_BYTES or key.startswith("goog"):
            raise InvalidInput(f"attribute key {key!r} is empty, longer than {MAX_KEY_BYTES} bytes or reserved")
        if len(value.encode()) > MAX_VALUE_BYTES:
            raise InvalidInput(f"attribute {key!r} is longer than {MAX_VALUE_BYTES} bytes")
    size = len(data) + sum(len(k.encode()) + len(v.encode()) for k, v in attrs.items())
    if size + _ENVELOPE_BYTES >= MAX_REQUEST_BYTES:
        raise InvalidInput(f"message of {size} bytes exceeds the Pub/Sub limit ({MAX_REQUEST_BYTES} per request)")
    return data, attrs


class PubSubPublisher:
    """Publisher on Pub/Sub topics of one project; `topic` is the short topic id (e.g. regrag-chunked)."""

    def __init__(self, project: str, *, timeout_s: float = 30.0) -> None:
        self.project = project
        self.timeout_s = timeout_s
        self._client: Any = None
        self._lock = threading.Lock()

    def _get_client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = publisher_client()
        return self._client

    def topic_path(self, topic: str) -> str:
        return f"projects/{self.project}/topics/{topic}"

    def publish(self, topic: str, payload: dict[str, Any], attributes: dict[str, str] | None = None) -> str:
        """Publish one message and wait until the service has it; return its message id."""
        data, attrs = encode_message(payload, attributes)
        path = self.topic_path(topic)
        with translated(f"publish to {path}"):
            future = self._get_client().publish(
                path, data, retry=api_retry(self.timeout_s), timeout=self.timeout_s, **attrs
            )
            try:
                return str(future.result(timeout=self.timeout_s))
            except TimeoutError as exc:
                raise Unavailable(f"publish to {path}: no answer within {self.timeout_s} s") from exc
