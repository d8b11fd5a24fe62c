"""CloudEvent and Pub/Sub envelopes → domain values, decoded in one place; and the error policy of events.

Object names come from `event.data["name"]`, never from `ce-subject`: non-ASCII names arrive percent-encoded
or as Latin-1 mojibake in headers.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from regrag import logs
from regrag.domain.errors import InvalidInput, PermanentError, TransientError
from regrag.domain.messages import Message, message_from_json
from regrag.ports import DeliveryCounter, FailureRecorder

log = logs.get("events")

GCS_FINALIZED = "google.cloud.storage.object.v1.finalized"
GCS_DELETED = "google.cloud.storage.object.v1.deleted"
GCS_ARCHIVED = "google.cloud.storage.object.v1.archived"
GCS_METADATA_UPDATED = "google.cloud.storage.object.v1.metadataUpdated"
PUBSUB_PUBLISHED = "google.cloud.pubsub.topic.v1.messagePublished"

T = TypeVar("T")


# Cloud Storage Pub/Sub notifications (attribute eventType) → the CloudEvent types above
_NOTIFICATION_TYPES = {
    "OBJECT_FINALIZE": GCS_FINALIZED,
    "OBJECT_DELETE": GCS_DELETED,
    "OBJECT_ARCHIVE": GCS_ARCHIVED,
    "OBJECT_METADATA_UPDATE": GCS_METADATA_UPDATED,
}


@dataclass(frozen=True)
class StorageEvent:
    type: str
    bucket: str
    name: str
    generation: int
    overwritten_by: int | None = None  # a removal caused by an overwrite: the generation that replaced it

    @property
    def is_removal(self) -> bool:
        return self.type in (GCS_DELETED, GCS_ARCHIVED)


def _attrs(event: Any) -> dict[str, Any]:
    if hasattr(event, "get_attributes"):
        return dict(event.get_attributes())
    if isinstance(event, dict):
        return {k: v for k, v in event.items() if k != "data"}
    raise InvalidInput(f"not a CloudEvent: {type(event).__name__}")


def _data(event: Any) -> Any:
    if hasattr(event, "get_data"):
        return event.get_data()
    if isinstance(event, dict):
        return event.get("data")
    raise InvalidInput(f"not a CloudEvent: {type(event).__name__}")


def decode_storage_event(event: Any) -> StorageEvent:
    """A GCS object CloudEvent → StorageEvent; InvalidInput for anything else."""
    attrs = _attrs(event)
    etype = attrs.get("type")
    if etype not in (GCS_FINALIZED, GCS_DELETED, GCS_ARCHIVED, GCS_METADATA_UPDATED):
        raise InvalidInput(f"unexpected event type {etype!r}; ingest handles Cloud Storage object events")
    data = _data(event)
    if isinstance(data, bytes | str):
        try:
            data = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"storage event data is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidInput("storage event data must be a JSON object")
    name, bucket = data.get("name"), data.get("bucket")
    if not isinstance(name, str) or not name or not isinstance(bucket, str) or not bucket:
        raise InvalidInput("storage event data needs non-empty 'bucket' and 'name'")
    try:
        generation = int(data.get("generation") or 0)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"storage event generation {data.get('generation')!r} is not an integer") from exc
    return StorageEvent(etype, bucket, name, generation)


def decode_pubsub_payload(event: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """A messagePublished CloudEvent → (JSON payload, attributes)."""
    attrs = _attrs(event)
    if attrs.get("type") != PUBSUB_PUBLISHED:
        raise InvalidInput(f"unexpected event type {attrs.get('type')!r}; expected {PUBSUB_PUBLISHED}")
    data = _data(event)
    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(message, dict) or "data" not in message:
        raise InvalidInput("Pub/Sub event has no message.data")
    try:
        raw = base64.b64decode(message["data"], validate=True)
        payload = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError, TypeError) as exc:
        raise InvalidInput(f"Pub/Sub message data is not base64-encoded UTF-8 JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise InvalidInput("Pub/Sub message payload must be a JSON object")
    attributes = message.get("attributes") or {}
    return payload, {str(k): str(v) for k, v in attributes.items()}


def decode_storage_notification(payload: dict[str, Any], attributes: dict[str, str]) -> StorageEvent | None:
    """A Cloud Storage Pub/Sub notification (payload format JSON_API_V1) → StorageEvent; None for any other
    message. Names come from the `objectId` attribute or the object resource, never from a header."""
    kind = attributes.get("eventType")
    if kind is None:
        return None
    if kind not in _NOTIFICATION_TYPES:
        raise InvalidInput(f"unexpected Cloud Storage notification eventType {kind!r}")
    name = attributes.get("objectId") or payload.get("name")
    bucket = attributes.get("bucketId") or payload.get("bucket")
    if not isinstance(name, str) or not name or not isinstance(bucket, str) or not bucket:
        raise InvalidInput("Cloud Storage notification needs bucketId and objectId")
    try:
        generation = int(attributes.get("objectGeneration") or payload.get("generation") or 0)
        overwritten = attributes.get("overwrittenByGeneration")
        overwritten_by = int(overwritten) if overwritten else None
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"Cloud Storage notification has a non-integer generation: {exc}") from exc
    return StorageEvent(_NOTIFICATION_TYPES[kind], bucket, name, generation, overwritten_by)


def decode_message(payload: dict[str, Any]) -> Message:
    return message_from_json(payload)


def run_event(
    stage: str,
    key: str,
    handler: Callable[[], T],
    recorder: FailureRecorder,
    *,
    message_id: str | None = None,
    max_attempts: int = 5,
) -> T | None:
    """Run an event handler with the platform's error policy.

    PermanentError → log, record, acknowledge (return None): redelivery could never succeed.
    TransientError and anything unexpected → raise, so the platform retries and finally dead-letters. Where the
    recorder counts deliveries (ports.DeliveryCounter: GCP) and the event names its message, the failure that
    reaches `max_attempts` (the subscription's dead-letter setting) is recorded as a dead letter first: the
    stage, the document, the error. (The local bus records its dead letters itself.)
    """
    try:
        return handler()
    except PermanentError as exc:
        logs.event(
            log,
            logging.ERROR,
            f"{stage}: permanent failure, acknowledged",
            stage=stage,
            key=key,
            reason=exc.code,
            error=str(exc),
        )
        recorder.record(stage, key, exc.code, {"error": str(exc)})
        return None
    except Exception as exc:
        if isinstance(exc, TransientError):
            logs.event(
                log,
                logging.WARNING,
                f"{stage}: transient failure, will be retried",
                stage=stage,
                key=key,
                error=str(exc),
            )
        if message_id and isinstance(recorder, DeliveryCounter):
            _count_failure(stage, key, exc, recorder, recorder, message_id, max_attempts)
        raise


def _count_failure(
    stage: str,
    key: str,
    exc: Exception,
    recorder: FailureRecorder,
    counter: DeliveryCounter,
    message_id: str,
    max_attempts: int,
) -> None:
    try:
        attempts = counter.failed_delivery(stage, message_id)
        if attempts >= max_attempts:
            logs.event(log, logging.ERROR, f"{stage}: last delivery failed, dead-lettered", stage=stage, key=key,
                       message_id=message_id, attempts=attempts, error=str(exc))  # fmt: skip
            detail = {"error": f"{type(exc).__name__}: {exc}", "doc_id": key, "message_id": message_id}
            recorder.record(stage, key, "dead_lettered", {**detail, "attempts": attempts})
    except Exception as count_exc:  # noqa: BLE001 - counting must never hide the failure being retried
        logs.event(log, logging.WARNING, "failed delivery not counted", stage=stage, error=repr(count_exc))


def message_id_of(event: Any) -> str | None:
    """The id a Pub/Sub-borne event keeps across redeliveries: the message's id, or the CloudEvent id (a storage
    event reaches its function through Pub/Sub too); None when there is neither (never raises)."""
    try:
        data = _data(event)
        message = data.get("message") if isinstance(data, dict) else None
        if isinstance(message, dict):
            found = message.get("messageId") or message.get("message_id")
            if found:
                return str(found)
        found = _attrs(event).get("id")
        return str(found) if found else None
    except Exception:  # noqa: BLE001 - only used to count deliveries; must never raise
        return None


def message_key(event: Any) -> str:
    """What a Pub/Sub-borne stage message is about: its `doc_id` attribute, else event_key (never raises)."""
    try:
        data = _data(event)
        message = data.get("message") if isinstance(data, dict) else None
        doc_id = (message.get("attributes") or {}).get("doc_id") if isinstance(message, dict) else None
        return str(doc_id) if doc_id else event_key(event)
    except Exception:  # noqa: BLE001 - only used to label logs and records; must never raise
        return event_key(event)


def event_key(event: Any) -> str:
    """A short description of an event for logs and failure records (never raises)."""
    try:
        attrs = _attrs(event)
        data = _data(event)
        name = data.get("name") if isinstance(data, dict) else None
        return str(name or attrs.get("id") or "?")
    except Exception:  # noqa: BLE001 - only used to label logs; must never raise
        return "?"
