"""reconcile on the local twin: the same stage the scheduled GCP function runs (tests/gcp has it on emulators)."""

from __future__ import annotations

import pytest

from regrag.api import endpoints
from regrag.domain.errors import InvalidInput

from conftest import SAMPLE, sample_manifest, upload


def test_missing_objects_are_ingested_and_orphans_removed(hash_services):
    manifest = sample_manifest()
    for doc_id in ("zj-0004", "nat-reg-0033"):
        upload(hash_services, SAMPLE / manifest[doc_id]["file"], manifest[doc_id]["file"])
    hash_services.blobs.write("docs/nat-reg-0088.md", (SAMPLE / "docs" / "nat-reg-0088.md").read_bytes())  # no event
    hash_services.blobs.write("docs/nat-reg-0088.md.meta.json", b"{}")  # sidecars are not documents
    hash_services.blobs.delete("docs/nat-reg-0033.md")  # a delete nobody saw

    dry = endpoints.reconcile(hash_services, {"dry_run": True})
    assert (dry["republished"], dry["removed"]) == (["docs/nat-reg-0088.md"], ["nat-reg-0033"])
    assert sorted(m.doc_id for m in hash_services.store.list_documents()) == ["nat-reg-0033", "zj-0004"]

    result = endpoints.reconcile(hash_services, {})
    assert result["republished"] == ["docs/nat-reg-0088.md"] and result["removed"] == ["nat-reg-0033"]
    assert result["statistics"] is None  # the local index counts its own document frequencies
    assert sorted(m.doc_id for m in hash_services.store.list_documents()) == ["nat-reg-0088", "zj-0004"]
    again = endpoints.reconcile(hash_services, {})
    assert (again["republished"], again["removed"], again["objects"], again["documents"]) == ([], [], 2, 2)


def test_unreadable_objects_are_reported_not_retried_forever(hash_services):
    hash_services.blobs.write("docs/empty.md", b"")
    result = endpoints.reconcile(hash_services, {"max_republish": 5})
    assert result["republished"] == [] and result["rejected"][0]["name"] == "docs/empty.md"
    assert endpoints.reconcile(hash_services, {"max_republish": 0})["deferred"] == 1


@pytest.mark.parametrize("body", [[], {"dry_run": "yes"}, {"max_republish": -1}, {"max_republish": True}])
def test_bad_requests(hash_services, body):
    with pytest.raises(InvalidInput):
        endpoints.reconcile(hash_services, body)
