"""Versions linked by what their texts say: a repeal clause links two versions of one corpus even when no
sidecar says `supersedes`, whichever arrives first; a claim that breaks the rules is refused or withdrawn."""

from __future__ import annotations

import pytest

from regrag.api import endpoints

from conftest import SAMPLE, sample_manifest, upload

OLD, NEW = (
    "nat-law-0067",
    "nat-law-0018",
)  # 环境噪声污染防治法 → 噪声污染防治法 (……《中华人民共和国环境噪声污染防治法》同时废止)


def ingest(services, doc_id, **changes):
    record = sample_manifest()[doc_id]
    sidecar = {k: v for k, v in record.items() if k not in ("file", "chars", "articles", "supersedes")}
    sidecar.update(changes)
    return upload(services, SAMPLE / record["file"], record["file"], {k: v for k, v in sidecar.items() if v})


@pytest.mark.parametrize("order", [(OLD, NEW), (NEW, OLD)], ids=["older-first", "newer-first"])
def test_a_repeal_clause_links_the_versions_in_either_order(hash_services, order):
    for doc_id in order:
        assert ingest(hash_services, doc_id).status == "chunked"
    old, new = (hash_services.store.get_document(d)[0] for d in (OLD, NEW))
    assert new.supersedes == OLD and old.superseded_by == NEW
    assert old.effective_to == new.effective_date == "2022-06-05"  # 自2022年6月5日起施行
    chain = endpoints.versions(hash_services, NEW)["versions"]
    assert [v["doc_id"] for v in chain] == [OLD, NEW]
    links = endpoints.document(hash_services, NEW)["links"]
    assert [(r["title"], r["doc_id"]) for r in links["repeals"]] == [("中华人民共和国环境噪声污染防治法", OLD)]


def test_a_repeal_clause_never_links_across_corpora(hash_services):
    ingest(hash_services, OLD, corpus="archive")
    ingest(hash_services, NEW)
    assert hash_services.store.get_document(NEW)[0].supersedes is None
    assert hash_services.store.get_document(OLD)[0].superseded_by is None


def test_a_claim_on_a_later_version_is_refused_and_recorded(hash_services):
    ingest(hash_services, NEW)
    ingest(hash_services, OLD, supersedes=NEW)  # the 2018 text cannot replace the 2022 one: upsert refuses it
    [failure] = hash_services.failures.list("upsert")
    assert "supersedes names 'nat-law-0018', which took effect on 2022-06-05" in failure["error"]
    assert hash_services.store.get_document(NEW)[0].superseded_by is None
    assert hash_services.store.get_document(OLD) is None  # refused whole, never half-stored
