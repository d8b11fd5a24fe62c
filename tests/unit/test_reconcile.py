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


def test_documents_derived_by_older_rules_are_ingested_again(hash_services):
    import sqlite3

    manifest = sample_manifest()
    record = manifest["nat-law-0077"]
    sidecar = {k: v for k, v in record.items() if k not in ("file", "chars", "articles")}
    upload(hash_services, SAMPLE / record["file"], record["file"], sidecar)
    with sqlite3.connect(hash_services.settings.index_path) as con:  # as an older regrag stored it
        con.execute("UPDATE document SET meta_json = json_set(meta_json, '$.ingest_version', 1)")
    assert endpoints.reconcile(hash_services, {"dry_run": True})["republished"] == [record["file"]]
    assert endpoints.reconcile(hash_services, {})["republished"] == [record["file"]]
    meta = hash_services.store.get_document("nat-law-0077")[0]
    assert meta.ingest_version > 1 and meta.effective_date == "2024-11-01"
    assert endpoints.reconcile(hash_services, {})["republished"] == []
