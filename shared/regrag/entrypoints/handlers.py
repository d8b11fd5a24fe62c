"""Event entry points: a trigger (CloudEvent, bus message or local file) → one pipeline stage over the ports.

The deployed `ingest`, `embed` and `upsert` functions call the `*_event` handlers; the in-process bus calls the
`*_message` handlers with the same payloads Pub/Sub would carry; `regrag ingest` calls `ingest_name`. All of
them follow one error policy (regrag.entrypoints.events.run_event): permanent failures are recorded and acknowledged,
transient ones raise so the platform (or the bus) retries.
"""

from __future__ import annotations

from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.messages import ChunksEmbedded, DocumentChunked, DocumentDeleted, Message
from regrag.entrypoints.events import (
    GCS_DELETED,
    StorageEvent,
    decode_message,
    decode_pubsub_payload,
    decode_storage_event,
    decode_storage_notification,
    event_key,
    message_id_of,
    message_key,
    run_event,
)
from regrag.ingest import embed as embed_stage
from regrag.ingest import ingest as ingest_stage
from regrag.ingest import upsert as upsert_stage
from regrag.ops.watches import watching
from regrag.services import Services


def ingest_event(services: Services, event: Any) -> ingest_stage.IngestResult | None:
    """GCS object event → DocumentChunked (finalized) or DocumentDeleted (deleted/archived)."""

    def handle() -> ingest_stage.IngestResult:
        ev = decode_storage_event(event)
        if ev.is_removal:
            return ingest_stage.delete_object(
                ev.name, ev.generation, publisher=services.publisher, topic=services.settings.topic_embedded
            )
        return _ingest(services, ev.name)

    return run_event("ingest", event_key(event), handle, services.failures, **_delivery(services, event))


def _delivery(services: Services, event: Any) -> dict[str, Any]:
    """What run_event needs to count an event's failed deliveries (GCP: Pub/Sub retries, then dead-letters)."""
    return {"message_id": message_id_of(event), "max_attempts": services.settings.max_delivery_attempts}


def ingest_name(services: Services, name: str) -> ingest_stage.IngestResult | None:
    """Ingest one object of the bucket by name (the local CLI, which has no bucket notifications)."""
    return run_event("ingest", name, lambda: _ingest(services, name), services.failures)


def _ingest(services: Services, name: str) -> ingest_stage.IngestResult:
    return ingest_stage.ingest_object(
        name,
        blobs=services.blobs,
        publisher=services.publisher,
        topic=services.settings.topic_chunked,
        max_chars=services.settings.chunk_max_chars,
        ocr=ocr_options(services),
    )


def ocr_options(services: Services) -> ingest_stage.OcrOptions:
    """The wired OCR engine with the limits and the low-confidence threshold of the settings."""
    return ingest_stage.OcrOptions.from_settings(services.settings, services.ocr)


def embed_event(services: Services, event: Any) -> Any:
    """Pub/Sub DocumentChunked → ChunksEmbedded."""
    return run_event(
        "embed",
        message_key(event),
        lambda: _embed(services, *decode_pubsub_payload(event)),
        services.failures,
        **_delivery(services, event),
    )


def embed_message(services: Services, payload: dict[str, Any], attributes: dict[str, str]) -> Any:
    """The in-process bus's delivery of a DocumentChunked (or a DocumentDeleted passing through)."""
    key = str(attributes.get("doc_id", "?"))
    return run_event("embed", key, lambda: _embed(services, payload, attributes), services.failures)


def _embed(services: Services, payload: dict[str, Any], attributes: dict[str, str]) -> Any:
    message = decode_message(payload)
    if isinstance(message, DocumentDeleted):  # deletes need no vectors: pass them on
        services.publisher.publish(services.settings.topic_embedded, payload, attributes)
        return None
    if not isinstance(message, DocumentChunked):
        raise InvalidInput(f"embed expects DocumentChunked, got {message.kind}")
    return embed_stage.embed_chunks(
        message,
        embedder=services.embedder,
        publisher=services.publisher,
        topic=services.settings.topic_embedded,
        batch_size=services.settings.embed_batch_size,
        questions=services.questions_indexer,
    )


def upsert_event(services: Services, event: Any) -> upsert_stage.UpsertResult | None:
    """Pub/Sub ChunksEmbedded / DocumentDeleted, or a Cloud Storage delete notification → the index."""

    def handle() -> upsert_stage.UpsertResult | None:
        payload, attributes = decode_pubsub_payload(event)
        notification = decode_storage_notification(payload, attributes)
        if notification is not None:  # GCP: the bucket's delete notifications share the embedded topic
            return _remove_object(services, notification)
        return _upsert(services, decode_message(payload))

    return run_event("upsert", message_key(event), handle, services.failures, **_delivery(services, event))


def upsert_message(services: Services, payload: dict[str, Any], attributes: dict[str, str]) -> Any:
    """The in-process bus's delivery of a ChunksEmbedded or DocumentDeleted."""
    key = str(attributes.get("doc_id", "?"))
    return run_event("upsert", key, lambda: _upsert(services, decode_message(payload)), services.failures)


def object_removed(services: Services, name: str, generation: int) -> upsert_stage.UpsertResult | None:
    """An object deleted from the local bucket (`regrag delete`, `regrag ingest --prune`): the same path as a
    Cloud Storage delete notification on GCP."""
    event = StorageEvent(GCS_DELETED, "local", name, generation)
    return run_event("upsert", name, lambda: _remove_object(services, event), services.failures)


def document_removed(services: Services, doc_id: str, generation: int) -> upsert_stage.UpsertResult | None:
    """Remove a document by id (`regrag delete` of a document stored without an object name)."""
    message = DocumentDeleted(doc_id, "", generation, "")
    return run_event("upsert", doc_id, lambda: _upsert(services, message), services.failures)


def _remove_object(services: Services, event: StorageEvent) -> upsert_stage.UpsertResult | None:
    """An object deleted or archived in the bucket (Cloud Storage notification, infra/storage.tf)."""
    if not event.is_removal:
        raise InvalidInput(f"upsert handles object removals only; got {event.type}")
    if event.overwritten_by is not None or ingest_stage.is_sidecar(event.name):
        return None  # an overwrite is re-ingested by its own finalize event; a sidecar is not a document
    return _upsert(services, DocumentDeleted(ingest_stage.derive_doc_id(event.name), event.name, event.generation, ""))


def _upsert(services: Services, message: Message) -> upsert_stage.UpsertResult:
    s = services
    s.catalog.invalidate()
    if isinstance(message, DocumentDeleted):
        return upsert_stage.delete_document(
            message, store=s.store, vectors=s.vectors, lexical=s.lexical, questions=s.question_index
        )
    if not isinstance(message, ChunksEmbedded):
        raise InvalidInput(f"upsert expects ChunksEmbedded or DocumentDeleted, got {message.kind}")
    if message.model != s.embedder.model_id:
        raise InvalidInput(f"vectors from model {message.model!r} cannot enter an index of {s.embedder.model_id!r}")
    return upsert_stage.upsert_chunks(
        message,
        store=s.store,
        vectors=s.vectors,
        lexical=s.lexical,
        questions=s.question_index,
        staging=s.staging,
        watching=watching(s),
    )
