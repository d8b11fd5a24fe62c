"""The chunk map's concurrency and housekeeping, on an in-memory bucket with real compare-and-swap.

The storage emulator ignores preconditions, so lost races can only be staged here: two store instances (two
function instances) share one bucket, and `before_write` runs the second writer at the worst moment.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from contract.contracts import IndexContract, PartStagingContract, make_chunk, make_meta
from fakes.gcp_env import vertex_ports
from fakes.memory_objects import MemoryObjects
from regrag.adapters.gcp.chunk_layout import StaleWrite
from regrag.adapters.gcp.chunk_store import GcsChunkStore
from regrag.adapters.gcp.staging import GcsPartStaging


class TestMemoryChunkMapOnVectorSearch(IndexContract):
    @pytest.fixture
    def ports(self, vector_fake):
        return vertex_ports(MemoryObjects(), vector_fake)


class TestGcsPartStaging(PartStagingContract):
    @pytest.fixture
    def staging(self):
        return GcsPartStaging(MemoryObjects(), "state/")


def stores(n=2, **kw):
    objects = MemoryObjects()
    return objects, [GcsChunkStore(objects, dimension=16, model_id="m", **kw) for _ in range(n)]


def race(objects, when, other):
    """Run `other()` once, just before the first write whose name ends with `when`."""
    fired = []

    def hook(name):
        if name.endswith(when) and not fired:
            fired.append(name)
            objects.before_write = None
            other()
            objects.before_write = hook

    objects.before_write = hook
    return fired


def test_parts_written_concurrently_by_two_instances_are_both_kept():
    objects, (a, b) = stores()
    meta = make_meta(generation=7)
    chunks = [make_chunk(meta, i) for i in range(1, 5)]
    fired = race(objects, "head.json", lambda: b.put_part(meta, "全文", chunks[2:], 1, 2))
    a.put_part(meta, "全文", chunks[:2], 0, 2)
    assert fired and objects.conflicts >= 1  # a lost the race once and re-applied its change
    reader = GcsChunkStore(objects)
    assert [c.id for c in reader.document_chunks("doc-a")] == [c.id for c in chunks]
    assert reader.obsolete_chunk_ids("doc-a") == []  # both parts are recorded: the version is complete


def test_a_newer_generation_stored_meanwhile_makes_the_older_write_transient():
    objects, (a, b) = stores()
    old, new = make_meta(generation=5), make_meta(generation=6)
    race(objects, "head.json", lambda: b.put_part(new, "新", [make_chunk(new, 1, "第1条 新")], 0, 1))
    with pytest.raises(StaleWrite):
        a.put_part(old, "旧", [make_chunk(old, 1, "第1条 旧")], 0, 1)
    kept = GcsChunkStore(objects).get_document("doc-a")
    assert kept is not None and kept[0].generation == 6 and kept[1] == "新"


def test_links_to_an_older_version_survive_a_concurrent_write_of_that_version():
    objects, (a, b) = stores()
    old = make_meta("law-2007", effective_date="2007-08-30")
    new = make_meta("law-2024", effective_date="2024-06-28", supersedes="law-2007")
    a.put_part(old, "旧", [make_chunk(old, 1)], 0, 1)
    newer_old = replace(old, generation=2)
    # while b links law-2007, a writes a new generation of law-2007's head
    race(objects, "law-2007/head.json", lambda: a.put_part(newer_old, "旧2", [make_chunk(newer_old, 1)], 0, 1))
    result = b.put_part(new, "新", [make_chunk(new, 1)], 0, 1)
    # a's write found law-2024 already stored and linked itself, so b's retried link changes nothing and b
    # reports nothing to relink (a's chunks were written with the linked restricts)
    assert result.relinked == () and objects.conflicts >= 1
    stored = GcsChunkStore(objects).get_document("law-2007")
    assert stored is not None
    assert (stored[0].generation, stored[0].superseded_by, stored[0].effective_to) == (2, "law-2024", "2024-06-28")


def test_query_instances_see_new_documents_after_their_cache_time():
    now = [0.0]
    _, (writer, reader) = stores(cache_s=30.0, clock=lambda: now[0])
    meta = make_meta()
    assert reader.get_document("doc-a") is None
    writer.put_part(meta, "全文", [make_chunk(meta, 1)], 0, 1)
    assert reader.get_document("doc-a") is None  # cached "absent" for up to 30 s
    now[0] = 31.0
    assert reader.get_document("doc-a") is not None
    assert [c.id for c in reader.get_chunks(["doc-a-c1"])] == ["doc-a-c1"]


def test_old_generations_are_garbage_collected_and_deleted_documents_leave_nothing():
    objects, (store,) = stores(1)
    gen1 = make_meta(generation=1)
    store.put_part(gen1, "一", [make_chunk(gen1, 1), make_chunk(gen1, 2)], 0, 1)
    gen2 = replace(gen1, generation=2)
    store.put_part(gen2, "二", [make_chunk(gen2, 1)], 0, 1)
    obsolete = store.obsolete_chunk_ids("doc-a")
    assert obsolete == ["doc-a-c2"]
    store.delete_chunks(obsolete)
    assert not [n for n in objects.objects if n.startswith("docs/doc-a/1/")]  # generation 1 is gone
    assert store.get_document("doc-a")[1] == "二"
    other = make_meta("doc-b", supersedes="doc-a")
    store.put_part(other, "乙", [make_chunk(other, 1)], 0, 1)
    assert sorted(store.delete_document("doc-a")) == ["doc-a-c1"]
    patterns = [
        r"chunk-ids/doc-b-c1\.json",
        r"corpora/guangdong",  # the corpus marker stays while the corpus may hold documents (corpus_names)
        r"docs/doc-b/1/part-00000-of-00001-[0-9a-f]{16}\.json",  # content-addressed
        r"docs/doc-b/1/text-[0-9a-f]{16}\.txt",
        r"docs/doc-b/head\.json",
        r"keys/_source/source/[0-9a-f]{24}/doc-b",  # doc-b's object name → doc-b (deletes by object name)
    ]
    # nothing of doc-a is left: its source marker and successors/doc-a/doc-b included
    names = sorted(objects.objects)
    assert len(names) == len(patterns) and all(re.fullmatch(p, n) for p, n in zip(patterns, names, strict=True))


def test_stats_come_from_one_listing_without_reading_heads():
    objects, (store,) = stores(1)
    for doc_id, corpus in (("a", "gd"), ("b", "gd"), ("c", "national")):
        meta = make_meta(doc_id, corpus=corpus)
        store.put_part(meta, "全文", [make_chunk(meta, 1), make_chunk(meta, 2)], 0, 1)
    reads = objects.reads
    stats = GcsChunkStore(objects, dimension=16, model_id="m").stats()
    assert objects.reads == reads
    assert stats["documents"] == 3 and stats["chunks"] == 6
    assert stats["corpora"] == [
        {"corpus": "gd", "documents": 2, "chunks": 4},
        {"corpus": "national", "documents": 1, "chunks": 2},
    ]
    assert (stats["embedding_model"], stats["dimension"]) == ("m", 16)


def test_a_document_deleted_while_listing_is_left_out_not_an_error():
    objects, (lister, deleter) = stores()
    for doc_id in ("a", "b"):
        meta = make_meta(doc_id)
        deleter.put_part(meta, "全文", [make_chunk(meta, 1)], 0, 1)

    def delete_b(name):
        if name.endswith("docs/b/head.json"):
            objects.before_read = None
            deleter.delete_document("b")

    objects.before_read = delete_b
    assert [m.doc_id for m in lister.list_documents()] == ["a"]


def test_a_write_that_dies_before_its_mark_is_redone_and_a_switch_never_shows_both_versions(vector_fake):
    """No transaction on GCP: the older version leaves the search (its end date refreshed) before the newer
    one's datapoints go in, and the completion mark is written last. An instance that dies in between leaves a
    moment's gap, never both versions, and a head the reconcile job and `regrag ingest` redo."""
    from regrag.domain.errors import Unavailable
    from regrag.domain.messages import ChunksEmbedded
    from regrag.domain.models import Filters
    from regrag.ingest.ingest import INGEST_VERSION
    from regrag.ingest.reconcile import _to_ingest
    from regrag.ingest.upsert import upsert_chunks

    store, vectors, lexical, dim = vertex_ports(MemoryObjects(), vector_fake)
    vec = IndexContract.vec
    today = Filters(as_of="2025-06-01")
    older = make_meta("old-v", effective_date="2020-01-01", ingest_version=INGEST_VERSION)
    newer = make_meta("new-v", effective_date="2023-01-01", supersedes="old-v", ingest_version=INGEST_VERSION)

    def message(meta, seeds):
        chunks = tuple(make_chunk(meta, i) for i in seeds)
        return ChunksEmbedded(meta, "全文", chunks, tuple(vec(dim, s) for s in seeds), "test-model")

    def found() -> set[str]:
        return {h.chunk_id.rsplit("-", 1)[0] for h in vectors.search(vec(dim, 1), today, 10)}

    upsert_chunks(message(older, (1, 2)), store=store, vectors=vectors, lexical=lexical)
    assert found() == {"old-v"}
    seen: list[set[str]] = []
    real = vectors.upsert

    def dies(chunks, vectors_):  # the instance is lost just before the newer version's datapoints are written
        seen.append(found())
        raise Unavailable("instance lost")

    vectors.upsert = dies  # type: ignore[method-assign]
    with pytest.raises(Unavailable):
        upsert_chunks(message(newer, (1, 2)), store=store, vectors=vectors, lexical=lexical)
    assert seen == [set()]  # the older one already out, the newer not yet in: a gap, never both
    assert store.incomplete_documents() == ["new-v"]
    assert _to_ingest({"new-v.md": 1, "old-v.md": 1}, store.list_documents(), set(store.incomplete_documents())) == [
        "new-v.md"
    ]
    vectors.upsert = real  # type: ignore[method-assign]
    assert upsert_chunks(message(newer, (1, 2)), store=store, vectors=vectors, lexical=lexical).status == "upserted"
    assert store.incomplete_documents() == [] and found() == {"new-v"}
