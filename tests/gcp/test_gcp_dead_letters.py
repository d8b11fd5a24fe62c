"""GCP dead letters: Pub/Sub tells a function neither which delivery attempt it is running nor that it is the
last, so failed deliveries are counted in the state bucket by message id, and the one that reaches the
subscription's maximum is recorded with the stage, the document and the error (what the dead-letter topic's
copy of the message lacks). Counted with real compare-and-swap on the in-memory bucket."""

from __future__ import annotations

import base64
import json

import pytest

from fakes.memory_objects import MemoryObjects
from regrag.adapters.gcp.failures import GcsFailureRecorder
from regrag.domain.errors import InvalidInput, Unavailable
from regrag.entrypoints.events import PUBSUB_PUBLISHED, message_id_of, message_key, run_event


def pubsub_event(message_id: str, doc_id: str) -> dict:
    data = base64.b64encode(json.dumps({"kind": "ChunksEmbedded"}).encode()).decode()
    message = {"data": data, "messageId": message_id, "attributes": {"doc_id": doc_id}}
    return {"type": PUBSUB_PUBLISHED, "id": "ce-1", "data": {"message": message, "subscription": "s"}}


def test_the_fifth_failed_delivery_records_the_dead_letter_once():
    recorder = GcsFailureRecorder(MemoryObjects(), "failures/")  # type: ignore[arg-type]
    event = pubsub_event("m-42", "nat-reg-0088")
    assert message_id_of(event) == "m-42" and message_key(event) == "nat-reg-0088"

    def failing():
        raise Unavailable("Vector Search answered 503")

    for attempt in range(1, 6):
        with pytest.raises(Unavailable):  # raised every time: Pub/Sub retries, then dead-letters
            run_event("upsert", message_key(event), failing, recorder, message_id="m-42", max_attempts=5)
        if attempt < 5:
            assert recorder.list() == []  # a retry that may still succeed is no failure yet
    [record] = recorder.list()
    assert record["stage"] == "upsert" and record["reason"] == "dead_lettered" and record["attempts"] == 5
    assert record["doc_id"] == "nat-reg-0088" and record["error"] == "Unavailable: Vector Search answered 503"
    assert recorder.list("upsert") == [record]  # the delivery counters are not failures


def test_deliveries_of_other_messages_and_permanent_failures_count_apart():
    recorder = GcsFailureRecorder(MemoryObjects(), "failures/")  # type: ignore[arg-type]
    assert [recorder.failed_delivery("embed", "a") for _ in range(3)] == [1, 2, 3]
    assert recorder.failed_delivery("embed", "b") == 1 and recorder.failed_delivery("upsert", "a") == 1

    def invalid():
        raise InvalidInput("malformed")

    assert run_event("embed", "doc", invalid, recorder, message_id="c", max_attempts=5) is None
    assert [r["reason"] for r in recorder.list()] == ["invalid_input"]  # recorded at once, never counted
    assert recorder.failed_delivery("embed", "c") == 1
