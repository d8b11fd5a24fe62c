"""Cloud Storage Pub/Sub notifications (JSON_API_V1) as they reach upsert on GCP: decoded in
regrag.entrypoints.events."""

from __future__ import annotations

import pytest

from regrag.domain.errors import InvalidInput
from regrag.entrypoints.events import GCS_ARCHIVED, GCS_DELETED, decode_storage_notification

ATTRS = {
    "notificationConfig": "projects/_/buckets/docs/notificationConfigs/1",
    "eventType": "OBJECT_DELETE",
    "payloadFormat": "JSON_API_V1",
    "bucketId": "docs",
    "objectId": "政策/条例.md",
    "objectGeneration": "1763798400000001",
}


def test_a_delete_and_an_overwrite():
    event = decode_storage_notification({"name": "ignored"}, ATTRS)
    assert event is not None and event.is_removal and event.type == GCS_DELETED
    assert (event.bucket, event.name, event.generation, event.overwritten_by) == (
        "docs", "政策/条例.md", 1763798400000001, None,
    )  # fmt: skip
    overwrite = decode_storage_notification(
        {}, {**ATTRS, "eventType": "OBJECT_ARCHIVE", "overwrittenByGeneration": "7"}
    )
    assert overwrite is not None and overwrite.type == GCS_ARCHIVED and overwrite.overwritten_by == 7


def test_stage_messages_are_not_notifications():
    assert decode_storage_notification({"kind": "DocumentDeleted"}, {"kind": "DocumentDeleted", "doc_id": "d"}) is None


@pytest.mark.parametrize(
    "attributes",
    [{**ATTRS, "eventType": "OBJECT_EXPLODED"}, {**ATTRS, "objectId": ""}, {**ATTRS, "objectGeneration": "x"}],
)
def test_malformed_notifications_are_permanent_errors(attributes):
    with pytest.raises(InvalidInput):
        decode_storage_notification({}, attributes)
