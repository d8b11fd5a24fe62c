import base64
import json

import pytest
from cloudevents.http import CloudEvent

from regrag.domain.errors import InvalidInput, TransientError, UnsupportedDocument
from regrag.entrypoints.events import decode_pubsub_payload, decode_storage_event, run_event


class Recorder:
    def __init__(self):
        self.rows = []

    def record(self, stage, key, reason, detail):
        self.rows.append((stage, key, reason, detail))

    def list(self, stage=None):
        return self.rows


def gcs(data, etype="google.cloud.storage.object.v1.finalized"):
    return CloudEvent({"type": etype, "source": "//storage.googleapis.com/projects/_/buckets/b"}, data)


def test_storage_event_uses_data_name_not_headers():
    ev = gcs({"bucket": "b", "name": "政策/广东省条例.md", "generation": "1700000000000001"})
    decoded = decode_storage_event(ev)
    assert decoded.name == "政策/广东省条例.md" and decoded.generation == 1700000000000001
    assert not decoded.is_removal
    assert decode_storage_event(
        gcs({"bucket": "b", "name": "x", "generation": 1}, "google.cloud.storage.object.v1.deleted")
    ).is_removal


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (gcs({"bucket": "b"}), "needs non-empty 'bucket' and 'name'"),
        (gcs({"bucket": "b", "name": "x", "generation": "abc"}), "not an integer"),
        (gcs({"bucket": "b", "name": "x"}, "google.cloud.pubsub.topic.v1.messagePublished"), "unexpected event type"),
        ("not an event", "not a CloudEvent"),
    ],
)
def test_malformed_storage_events(event, message):
    with pytest.raises(InvalidInput, match=message):
        decode_storage_event(event)


def pubsub(data):
    return CloudEvent(
        {
            "type": "google.cloud.pubsub.topic.v1.messagePublished",
            "source": "//pubsub.googleapis.com/projects/p/topics/t",
        },
        data,
    )


def test_pubsub_payload():
    body = base64.b64encode(json.dumps({"kind": "X", "文": 1}, ensure_ascii=False).encode()).decode()
    payload, attrs = decode_pubsub_payload(pubsub({"message": {"data": body, "attributes": {"doc_id": "d"}}}))
    assert payload == {"kind": "X", "文": 1} and attrs == {"doc_id": "d"}


@pytest.mark.parametrize("data", [{}, {"message": {}}, {"message": {"data": "!!"}}, {"message": {"data": "W10="}}])
def test_malformed_pubsub(data):
    with pytest.raises(InvalidInput):
        decode_pubsub_payload(pubsub(data))


def test_permanent_errors_are_acknowledged_and_recorded_transient_ones_raise():
    rec = Recorder()

    def bad():
        raise UnsupportedDocument("x.md: empty file")

    assert run_event("ingest", "x.md", bad, rec) is None
    assert rec.rows[0][:3] == ("ingest", "x.md", "unsupported_document")

    def flaky():
        raise TransientError("503")

    with pytest.raises(TransientError):
        run_event("embed", "k", flaky, rec)
    assert len(rec.rows) == 1

    def surprise():
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError):  # unknown errors are retried, then dead-lettered by the platform
        run_event("embed", "k", surprise, rec)
