"""Reusable contract suites: each port's behaviour, run against every implementation (local and GCP).

A concrete test class inherits a suite and provides the fixture that builds the implementation.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import numpy as np
import pytest

from regrag.domain.errors import NotFound
from regrag.domain.models import Chunk, DocumentMeta, Filters, TitleReference
from regrag.text.terms import chunk_tokens, query_tokens


class BlobStoreContract:
    @pytest.fixture
    def store(self):
        raise NotImplementedError

    def test_write_then_read_with_metadata(self, store):
        info = store.write("inbox/电力法.md", "第一条 内容".encode(), {"title": "%E7%94%B5%E5%8A%9B%E6%B3%95"})
        blob = store.read("inbox/电力法.md")
        assert blob.data == "第一条 内容".encode() and blob.generation == info.generation > 0
        assert blob.metadata.get("title") == "%E7%94%B5%E5%8A%9B%E6%B3%95"

    def test_overwrite_gets_a_newer_generation(self, store):
        first = store.write("a.md", b"one")
        second = store.write("a.md", b"two")
        assert second.generation > first.generation
        assert store.read("a.md").data == b"two"

    def test_missing_objects(self, store):
        assert store.read_optional("nope.md") is None
        with pytest.raises(NotFound):
            store.read("nope.md")

    def test_list_by_prefix_and_delete(self, store):
        for name in ("corpora/gd/a.md", "corpora/gd/b.md", "corpora/sd/c.md"):
            store.write(name, b"x")
        assert [b.name for b in store.list("corpora/gd/")] == ["corpora/gd/a.md", "corpora/gd/b.md"]
        store.delete("corpora/gd/a.md")
        assert store.read_optional("corpora/gd/a.md") is None
        assert [b.name for b in store.list("corpora/")] == ["corpora/gd/b.md", "corpora/sd/c.md"]


class PublisherContract:
    """`received(topic)` must return the payloads delivered on `topic`, in any order."""

    @pytest.fixture
    def publisher(self):
        raise NotImplementedError

    def received(self, publisher, topic):
        raise NotImplementedError

    def test_publish_delivers_json_with_chinese_intact(self, publisher):
        payload = {
            "schema_version": 1,
            "kind": "DocumentDeleted",
            "doc_id": "d",
            "source_name": "政策/条例.md",
            "generation": 3,
            "corpus": "gd",
        }
        message_id = publisher.publish(self.topic, payload, {"doc_id": "d"})
        assert isinstance(message_id, str) and message_id
        assert payload in self.received(publisher, self.topic)

    topic = "regrag-contract"


class EmbedderContract:
    @pytest.fixture
    def embedder(self):
        raise NotImplementedError

    def test_shapes_norms_and_determinism(self, embedder):
        texts = ["第一条 电网企业应当与可再生能源发电企业签订并网协议。", "第二条 禁止窃电。"]
        a = embedder.embed_documents(texts)
        b = embedder.embed_documents(texts)
        assert a.shape == (2, embedder.dimension) and a.dtype == np.float32
        assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)
        assert np.allclose(a, b, atol=1e-5)
        q = embedder.embed_query("并网协议")
        assert q.shape == (embedder.dimension,) and abs(float(np.linalg.norm(q)) - 1.0) < 1e-4
        assert embedder.embed_documents([]).shape == (0, embedder.dimension)
        assert isinstance(embedder.model_id, str) and embedder.model_id


def make_meta(doc_id="doc-a", **kw):
    base = dict(
        doc_id=doc_id,
        title="某某条例",
        effective_date="2020-01-01",
        province="gd",
        asset="solar",
        doc_class="grid",
        regulation_level="local_regulation",
        corpus="guangdong",
        source_name=f"{doc_id}.md",
        generation=1,
    )
    base.update(kw)
    return DocumentMeta(**base)


def make_chunk(meta, i, text=None):
    text = text or f"第{i}条 内容{i}"
    return Chunk(
        id=f"{meta.doc_id}-c{i}",
        doc_id=meta.doc_id,
        kind="article",
        article=f"第{i}条",
        part=0,
        parts=1,
        ordinal=i,
        heading_path=("第一章 总则",),
        start=0,
        end=len(text),
        text=text,
        search_text=text,
        meta=meta,
    )


class IndexContract:
    """ChunkStore + VectorIndex + LexicalIndex behaving together, as the upsert and query stages use them.

    Fixture `ports` returns (store, vectors, lexical, dimension).
    """

    @pytest.fixture
    def ports(self):
        raise NotImplementedError

    @staticmethod
    def vec(dim, seed):
        v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def put(self, ports, meta, chunks, seeds, part=0, parts=1):
        store, vectors, lexical, dim = ports
        put = store.put_part(meta, "全文", chunks, part, parts)
        chunks = [replace(c, meta=put.meta) for c in chunks]
        vectors.upsert(chunks, [self.vec(dim, s) for s in seeds])
        toks = [chunk_tokens(c) for c in chunks]
        lexical.upsert(chunks, [b for b, _ in toks], [t for _, t in toks])
        for doc_id in put.relinked:
            related = store.document_chunks(doc_id)
            vectors.refresh_metadata(related)
            lexical.refresh_metadata(related)
        return put

    def test_dense_search_finds_the_nearest_and_upsert_replaces_by_id(self, ports):
        _store, vectors, _lexical, dim = ports
        meta = make_meta()
        chunks = [make_chunk(meta, i) for i in range(1, 4)]
        self.put(ports, meta, chunks, [1, 2, 3])
        hits = vectors.search(self.vec(dim, 2), Filters(), 3)
        assert hits[0].chunk_id == "doc-a-c2" and hits[0].rank == 1 and hits[0].score > 0.99
        self.put(ports, meta, chunks[1:2], [9])  # same id, new vector
        assert vectors.search(self.vec(dim, 9), Filters(), 1)[0].chunk_id == "doc-a-c2"
        assert len(vectors.search(self.vec(dim, 9), Filters(), 10)) == 3

    def test_filters_apply_inside_the_search_not_after_top_k(self, ports):
        _store, vectors, lexical, dim = ports
        gd, sd = make_meta("gd-1"), make_meta("sd-1", province="sd", asset="coal", corpus="shandong")
        self.put(ports, gd, [make_chunk(gd, i, f"第{i}条 电网企业并网协议") for i in range(1, 30)], range(1, 30))
        self.put(ports, sd, [make_chunk(sd, 1, "第1条 煤矿 并网协议")], [100])
        # the sd chunk is far from the query vector: a post-filter over top-5 would return nothing
        hits = vectors.search(self.vec(dim, 1), Filters(province=("sd",)), 5)
        assert [h.chunk_id for h in hits] == ["sd-1-c1"]
        assert [h.chunk_id for h in lexical.search(query_tokens("并网协议"), Filters(asset=("coal",)), 5)] == [
            "sd-1-c1"
        ]
        assert vectors.search(self.vec(dim, 1), Filters(corpus=("nowhere",)), 5) == []
        both = vectors.search(self.vec(dim, 1), Filters(province=("gd", "sd"), doc_class=("grid",)), 50)
        assert len(both) == 30

    def test_date_range_and_as_of(self, ports):
        store, vectors, lexical, dim = ports
        old = make_meta("law-2007", effective_date="2007-08-30", title="突发事件应对法")
        new = make_meta("law-2024", effective_date="2024-06-28", title="突发事件应对法", supersedes="law-2007")
        self.put(ports, old, [make_chunk(old, 1, "第1条 突发事件 预防")], [1])
        put_new = self.put(ports, new, [make_chunk(new, 1, "第1条 突发事件 预防 应对")], [2])
        assert put_new.relinked == ("law-2007",)
        stored_old = store.get_document("law-2007")[0]
        assert stored_old.superseded_by == "law-2024" and stored_old.effective_to == "2024-06-28"

        def ids(filters):
            dense = {h.chunk_id for h in vectors.search(self.vec(dim, 1), filters, 10)}
            lex = {h.chunk_id for h in lexical.search(query_tokens("突发事件预防"), filters, 10)}
            assert dense == lex
            return dense

        assert ids(Filters(as_of="2015-06-01")) == {"law-2007-c1"}
        assert ids(Filters(as_of="2025-01-01")) == {"law-2024-c1"}
        assert ids(Filters(as_of="2000-01-01")) == set()
        assert ids(Filters(as_of="2025-01-01", include_superseded=True)) == {"law-2007-c1", "law-2024-c1"}
        assert ids(Filters(date_from="2010-01-01")) == {"law-2024-c1"}
        assert ids(Filters(date_to="2010-01-01")) == {"law-2007-c1"}

    def test_newer_version_arriving_first_still_links(self, ports):
        _store, *_ = ports
        new = make_meta("v2", effective_date="2024-01-01", supersedes="v1")
        old = make_meta("v1", effective_date="2010-01-01")
        self.put(ports, new, [make_chunk(new, 1)], [1])
        put_old = self.put(ports, old, [make_chunk(old, 1)], [2])
        assert put_old.meta.superseded_by == "v2" and put_old.meta.effective_to == "2024-01-01"

    def test_a_successor_whose_entry_into_force_was_corrected_moves_the_end_of_the_older(self, ports):
        """Re-ingested with the date its text states (promulgated 2024-06-28, in force 2024-11-01), the newer
        version moves the older one's end; an end the older one's own metadata states is kept when earlier."""
        store, *_ = ports
        old = make_meta("v1", effective_date="2007-11-01")
        self.put(ports, old, [make_chunk(old, 1)], [1])
        first = make_meta("v2", effective_date="2024-06-28", supersedes="v1")
        self.put(ports, first, [make_chunk(first, 1)], [2])
        assert store.get_document("v1")[0].effective_to == "2024-06-28"
        corrected = replace(first, effective_date="2024-11-01", promulgated="2024-06-28", generation=2)
        self.put(ports, corrected, [make_chunk(corrected, 1)], [2])
        assert store.get_document("v1")[0].effective_to == "2024-11-01"
        # the older version re-ingested meanwhile, with its own (earlier) end from a sidecar: that one stands
        ended = replace(old, effective_to="2020-01-01", generation=2, provenance={"effective_to": "sidecar"})
        self.put(ports, ended, [make_chunk(ended, 1)], [1])
        assert store.get_document("v1")[0].effective_to == "2020-01-01"

    def test_a_link_found_later_and_a_withdrawn_claim(self, ports):
        store, *_ = ports
        old, new = make_meta("v1", effective_date="2010-01-01"), make_meta("v2", effective_date="2024-01-01")
        self.put(ports, old, [make_chunk(old, 1)], [1])
        self.put(ports, new, [make_chunk(new, 1)], [2])
        linked = store.set_supersedes("v2", "v1")
        assert linked.meta.supersedes == "v1" and "v1" in linked.relinked
        assert store.get_document("v1")[0].superseded_by == "v2"
        assert store.get_document("v1")[0].effective_to == "2024-01-01"
        withdrawn = store.set_supersedes("v2", None)
        assert withdrawn.meta.supersedes is None and "v1" in withdrawn.relinked
        assert store.get_document("v1")[0].superseded_by is None and store.get_document("v1")[0].effective_to is None
        with pytest.raises(NotFound):
            store.set_supersedes("nope", "v1")

    def test_documents_are_found_by_title_and_by_repealed_title_within_a_corpus(self, ports):
        store, *_ = ports
        repeal = TitleReference("repeals", "某某旧条例", "……《某某旧条例》同时废止", key="某某旧条例")
        new = make_meta("new", title="某某新条例", title_key="某某新条例", references=(repeal,))
        old = make_meta("old", title="某某旧条例", title_key="某某旧条例")
        elsewhere = make_meta("other", title="某某旧条例", title_key="某某旧条例", corpus="shandong")
        for meta, seed in ((new, 1), (old, 2), (elsewhere, 3)):
            self.put(ports, meta, [make_chunk(meta, 1)], [seed])
        assert [m.doc_id for m in store.find_documents("guangdong", "title", "某某旧条例")] == ["old"]
        assert [m.doc_id for m in store.find_documents("guangdong", "repeals", "某某旧条例")] == ["new"]
        assert store.find_documents("guangdong", "repeals", "某某新条例") == []
        store.delete_document("new")
        assert store.find_documents("guangdong", "repeals", "某某旧条例") == []

    def test_lexical_scores_chinese_and_ranks_best_first(self, ports):
        _store, _vectors, lexical, _dim = ports
        meta = make_meta()
        texts = ["第1条 电网企业应当与可再生能源发电企业签订并网协议", "第2条 禁止窃电", "第3条 并网 并网 并网 运行"]
        self.put(ports, meta, [make_chunk(meta, i + 1, t) for i, t in enumerate(texts)], [1, 2, 3])
        hits = lexical.search(query_tokens("可再生能源并网协议"), Filters(), 10)
        assert hits[0].chunk_id == "doc-a-c1" and hits[0].score > 0
        assert "doc-a-c2" not in {h.chunk_id for h in hits}
        assert lexical.search([], Filters(), 10) == []
        assert lexical.search(['"引号"', "并网"], Filters(), 10)  # quotes in tokens cannot break the query

    def test_store_round_trip_and_obsolete_chunks(self, ports):
        store, _vectors, _lexical, _dim = ports
        meta = make_meta(generation=5)
        chunks = [make_chunk(meta, i) for i in range(1, 4)]
        self.put(ports, meta, chunks[:2], [1, 2], part=0, parts=2)
        assert store.obsolete_chunk_ids("doc-a") == []  # incomplete version: nothing is obsolete yet
        self.put(ports, meta, chunks[2:], [3], part=1, parts=2)
        assert store.obsolete_chunk_ids("doc-a") == []
        got = store.get_chunks(["doc-a-c3", "missing", "doc-a-c1"])
        assert [c.id for c in got] == ["doc-a-c3", "doc-a-c1"] and got[0].meta.title == "某某条例"
        assert [c.id for c in store.document_chunks("doc-a")] == ["doc-a-c1", "doc-a-c2", "doc-a-c3"]
        # a new generation without article 3: everything of generation 5 is obsolete once the new chunks exist
        newer = replace(meta, generation=6)
        self.put(ports, newer, [make_chunk(newer, 1), make_chunk(newer, 2)], [1, 2])
        assert store.obsolete_chunk_ids("doc-a") == ["doc-a-c3"]

    def test_delete_document_and_chunks(self, ports):
        store, vectors, lexical, dim = ports
        meta = make_meta()
        self.put(ports, meta, [make_chunk(meta, 1), make_chunk(meta, 2)], [1, 2])
        ids = store.delete_document("doc-a")
        vectors.delete(ids)
        lexical.delete(ids)
        assert sorted(ids) == ["doc-a-c1", "doc-a-c2"]
        assert store.get_document("doc-a") is None and store.get_chunks(ids) == []
        assert vectors.search(self.vec(dim, 1), Filters(), 5) == []
        assert lexical.search(["内容"], Filters(), 5) == []
        assert store.list_documents() == []

    def test_a_version_is_incomplete_until_marked_complete(self, ports):
        store, vectors, lexical, _dim = ports
        meta = make_meta(generation=5)
        self.put(ports, meta, [make_chunk(meta, 1), make_chunk(meta, 2)], [1, 2])
        assert store.incomplete_documents(["doc-a", "unknown"]) == ["doc-a"]
        assert store.incomplete_documents() == ["doc-a"]
        store.mark_complete("doc-a", 5)
        assert store.incomplete_documents(["doc-a"]) == [] and store.incomplete_documents() == []
        newer = replace(meta, generation=6)
        self.put(ports, newer, [make_chunk(newer, 1)], [1])
        assert store.incomplete_documents(["doc-a"]) == ["doc-a"]  # the new version's write has not finished
        store.mark_complete("doc-a", 5)  # a late mark of the older version changes nothing
        assert store.incomplete_documents(["doc-a"]) == ["doc-a"]
        obsolete = store.obsolete_chunk_ids("doc-a")  # the upsert stage's last writes, before the mark
        vectors.delete(obsolete)
        lexical.delete(obsolete)
        store.delete_chunks(obsolete)
        store.mark_complete("doc-a", 6)
        assert store.incomplete_documents() == []

    def test_the_upsert_stage_writes_a_document_whole_and_marks_it(self, ports):
        from regrag.domain.messages import ChunksEmbedded
        from regrag.ingest.upsert import upsert_chunks

        store, vectors, lexical, dim = ports
        meta = make_meta(generation=3)
        chunks = tuple(make_chunk(meta, i) for i in (1, 2, 3))
        message = ChunksEmbedded(meta, "全文", chunks, tuple(self.vec(dim, i) for i in (1, 2, 3)), "m")
        assert upsert_chunks(message, store=store, vectors=vectors, lexical=lexical).status == "upserted"
        assert store.incomplete_documents() == []
        assert {h.chunk_id for h in vectors.search(self.vec(dim, 2), Filters(), 3)} == {c.id for c in chunks}

    def test_stats_count_documents_chunks_and_corpora(self, ports):
        store, *_ = ports
        a, b = make_meta("a"), make_meta("b", corpus="national")
        self.put(ports, a, [make_chunk(a, 1)], [1])
        self.put(ports, b, [make_chunk(b, 1), make_chunk(b, 2)], [2, 3])
        stats = store.stats()
        assert stats["documents"] == 2 and stats["chunks"] == 3
        assert {c["corpus"]: c["chunks"] for c in stats["corpora"]} == {"guangdong": 1, "national": 2}
        assert dt.date.fromisoformat(stats["last_ingest"][:10])


class PartStagingContract:
    """Parts of a document kept until the last arrives (ports.PartStaging). Fixture `staging`."""

    @pytest.fixture
    def staging(self):
        raise NotImplementedError

    @staticmethod
    def part(meta, part, parts, i):
        from regrag.domain.messages import ChunksEmbedded

        vector = np.zeros(4, dtype=np.float32)
        vector[i % 4] = 1.0
        return ChunksEmbedded(meta, "全文", (make_chunk(meta, i),), (vector,), "m", part, parts)

    def test_parts_of_one_generation_are_kept_together_whatever_their_numbering(self, staging):
        meta = make_meta(generation=9)
        # part 0 of 2 split again downstream into 0 and 1 of 4; part 1 of 2 not
        assert [p.part for p in staging.stage(self.part(meta, 1, 2, 3))] == [1]
        staging.stage(self.part(meta, 0, 4, 1))
        kept = staging.stage(self.part(meta, 1, 4, 2))
        assert sorted((p.part, p.parts) for p in kept) == [(0, 4), (1, 2), (1, 4)]
        assert {c.id for p in kept for c in p.chunks} == {"doc-a-c1", "doc-a-c2", "doc-a-c3"}
        again = staging.stage(self.part(meta, 1, 4, 2))  # redelivered: kept once
        assert len(again) == 3 and again[0].vectors[0].dtype == np.float32

    def test_clear_forgets_the_generation_and_older_ones_only(self, staging):
        old, new, newer = make_meta(generation=1), make_meta(generation=2), make_meta(generation=3)
        staging.stage(self.part(old, 0, 2, 1))
        staging.stage(self.part(new, 0, 2, 1))
        staging.stage(self.part(newer, 0, 2, 1))
        staging.clear("doc-a", 2)
        assert staging.stage(self.part(old, 1, 2, 2))[0].meta.generation == 1  # only the part just kept
        assert len(staging.stage(self.part(newer, 1, 2, 2))) == 2


class FailureRecorderContract:
    @pytest.fixture
    def recorder(self):
        raise NotImplementedError

    @pytest.fixture
    def other_recorder(self, recorder):
        """A second recorder on the same place (another process): by default none."""
        return None

    def test_each_recorder_reports_what_it_recorded_itself(self, recorder, other_recorder):
        recorder.record("ingest", "a.md", "unsupported_document", {"error": "empty"})
        if other_recorder is not None:
            other_recorder.record("ingest", "b.md", "unsupported_document", {"error": "binary"})
        recorder.record("upsert", "doc-c", "dead_lettered", {"error": "Unavailable", "doc_id": "doc-c"})
        assert [r["key"] for r in recorder.recorded()] == ["a.md", "doc-c"]
        assert len(recorder.list()) == (3 if other_recorder is not None else 2)

    def test_records_are_listed_oldest_first_and_by_stage(self, recorder):
        recorder.record("ingest", "政策/空文件.md", "unsupported_document", {"error": "empty file"})
        recorder.record("upsert", "doc-a", "invalid_input", {"error": "missing fields ['chunks']"})
        recorder.record("ingest", "docs/photo.md", "unsupported_document", {"error": "binary"})
        ingest = recorder.list("ingest")
        assert [r["key"] for r in ingest] == ["政策/空文件.md", "docs/photo.md"]
        assert ingest[0]["reason"] == "unsupported_document" and ingest[0]["error"] == "empty file"
        assert ingest[0]["stage"] == "ingest" and dt.datetime.fromisoformat(ingest[0]["time"])
        assert [r["stage"] for r in recorder.list()] == ["ingest", "upsert", "ingest"]
        assert recorder.list("embed") == []


def query_id(n: int) -> str:
    """A query id as query/answer.py issues them (32 hex digits)."""
    return f"{n:032x}"


def feedback(n: int, *, time: str, helpful: bool = True, comment: str | None = None, citation=None) -> dict:
    """A feedback record as pipeline/feedback.record_feedback hands it to the store."""
    return {"query_id": query_id(n), "helpful": helpful, "citation": citation, "comment": comment, "time": time}


class FeedbackStoreContract:
    """What every FeedbackStore does one request at a time (ConcurrentFeedbackStoreContract adds the races)."""

    @pytest.fixture
    def feedback_store(self):
        raise NotImplementedError

    def test_query_records_round_trip_and_unknown_ids_are_none(self, feedback_store):
        record = {"time": "2026-03-01T08:00:00+00:00", "question": "计划检修停电要提前几天通知用户？", "cited": []}
        feedback_store.log_query(query_id(1), record)
        assert feedback_store.get_query(query_id(1)) == record
        assert feedback_store.get_query(query_id(2)) is None
        assert feedback_store.list_feedback() == []

    def test_feedback_is_listed_oldest_first_joined_with_its_query(self, feedback_store):
        first = {"time": "2026-03-01T08:00:00+00:00", "question": "窃电如何处罚？"}
        second = {"time": "2026-03-01T09:00:00+00:00", "question": "光伏项目如何并网？"}
        feedback_store.log_query(query_id(1), first)
        feedback_store.log_query(query_id(2), second)
        cited = {"doc_id": "nat-reg-0088", "article": "第二十八条"}
        records = [
            feedback(1, time="2026-03-01T23:59:59+00:00", citation=cited, comment="准确"),
            feedback(2, time="2026-03-02T00:00:01+00:00", helpful=False),  # the next UTC day
            feedback(1, time="2026-03-02T10:00:00+00:00", helpful=False, comment="第二条意见"),
            feedback(3, time="2026-03-02T11:00:00+00:00"),  # a query the log does not know
        ]
        for record in records:
            feedback_store.add_feedback(dict(record))
        listed = feedback_store.list_feedback()
        assert listed == [
            {**records[0], "query": first},
            {**records[1], "query": second},
            {**records[2], "query": first},
            {**records[3], "query": None},
        ]


class ConcurrentFeedbackStoreContract(FeedbackStoreContract):
    """Requests at once: none of them may be lost (a backend that really serialises or compares-and-swaps)."""

    def test_concurrent_feedback_on_one_day_all_lands_once(self, feedback_store):
        import threading

        feedback_store.log_query(query_id(1), {"time": "2026-03-01T08:00:00+00:00", "question": "窃电如何处罚？"})
        n = 12
        start = threading.Barrier(n)
        errors: list[BaseException] = []

        def send(i: int) -> None:
            start.wait()  # all at once
            try:
                feedback_store.add_feedback(feedback(1, time="2026-03-01T12:00:00+00:00", comment=f"#{i}"))
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        comments = [f["comment"] for f in feedback_store.list_feedback()]
        assert sorted(comments) == sorted(f"#{i}" for i in range(n))  # every one, exactly once


class QuestionIndexContract:
    """QuestionIndex: chunks ranked by their best generated question, filtered through the chunk's restricts
    before top-k, replaced per chunk (never by an older generation), removed on delete.

    Fixture `question_index` returns (index, dimension)."""

    @pytest.fixture
    def question_index(self):
        raise NotImplementedError

    @staticmethod
    def unit(dim, *head):
        v = np.zeros(dim, dtype=np.float32)
        v[: len(head)] = head
        return v / np.linalg.norm(v)

    @staticmethod
    def chunk(cid, province="gd", generation=1, effective_to=None):
        meta = make_meta(f"doc-{cid}", province=province, generation=generation, effective_to=effective_to)
        return replace(make_chunk(meta, 1), id=cid)

    def test_a_chunk_ranks_by_its_best_question(self, question_index):
        index, dim = question_index
        q = self.unit(dim, 1)
        index.upsert(
            [self.chunk("a"), self.chunk("b")], [[self.unit(dim, 0, 1), self.unit(dim, 1, 1)], [self.unit(dim, 1, 0.2)]]
        )
        hits = index.search(q, Filters(), 5)
        assert [h.chunk_id for h in hits] == ["b", "a"] and [h.rank for h in hits] == [1, 2]
        assert hits[1].score == pytest.approx(float(self.unit(dim, 1, 1) @ q))  # a's better question

    def test_filters_apply_before_top_k(self, question_index):
        index, dim = question_index
        q = self.unit(dim, 1)
        index.upsert(
            [self.chunk("sd", "sd"), self.chunk("gd-weak"), self.chunk("old", effective_to="2021-01-01")],
            [[self.unit(dim, 1)], [self.unit(dim, 1, 3)], [self.unit(dim, 1, 0, 0.01)]],
        )
        assert [h.chunk_id for h in index.search(q, Filters(province=("gd",), as_of="2024-01-01"), 1)] == ["gd-weak"]
        assert index.search(q, Filters(province=("xz",)), 3) == []

    def test_replaced_per_chunk_never_by_an_older_generation_and_deleted(self, question_index):
        index, dim = question_index
        q = self.unit(dim, 1)
        index.upsert([self.chunk("a", generation=5)], [[self.unit(dim, 1), self.unit(dim, 0, 1)]])
        index.upsert([self.chunk("a", generation=4)], [[self.unit(dim, 0, 1)]])  # a redelivered older message
        assert index.search(q, Filters(), 1)[0].score == pytest.approx(1.0)
        index.upsert([self.chunk("a", generation=6)], [[self.unit(dim, 0, 1)]])
        assert index.search(q, Filters(), 1)[0].score == pytest.approx(0.0, abs=1e-6)
        index.upsert([self.chunk("a", generation=7)], [[]])  # no questions any more
        assert index.search(q, Filters(), 1) == []
        index.upsert([self.chunk("b")], [[self.unit(dim, 1)]])
        index.delete(["b", "never-stored"])
        assert index.search(q, Filters(), 5) == []


class GeneratorContract:
    """Generator: JSON that matches the schema asked for; every failure a GenerationError with a reason.

    Fixture `generator` returns (generator, (prompt, schema, system) it can answer, a prompt it cannot)."""

    @pytest.fixture
    def generator(self):
        raise NotImplementedError

    def test_the_answer_matches_the_schema_asked_for(self, generator):
        from regrag.inputs import schemas

        model, (prompt, schema, system), _ = generator
        answer = model.generate_json(prompt, schema, system=system, timeout_s=5)
        schemas.check(schema, answer)

    def test_an_unusable_request_is_a_generation_error_with_a_reason(self, generator):
        from regrag.domain.generation import GenerationError

        model, (_, schema, system), unusable = generator
        with pytest.raises(GenerationError) as err:
            model.generate_json(unusable, schema, system=system, timeout_s=5)
        assert err.value.reason in {"client_error", "invalid_json", "empty", "blocked"}


class SecretStoreContract:
    """SecretStore: the latest value of a secret, whitespace trimmed; None for a secret that does not exist.

    Fixture `secret_store` returns (store, put) where put(name, value) stores a secret for it to read."""

    @pytest.fixture
    def secret_store(self):
        raise NotImplementedError

    def test_reads_the_latest_value_and_none_when_missing(self, secret_store):
        store, put = secret_store
        put("contract-key", "first")
        put("contract-key", "  密钥-latest\n")
        assert store.get("contract-key") == "密钥-latest"
        assert store.get("contract-missing") is None


def make_watch(n: int, *, doc_id: str | None = "nat-law-0072", article: str | None = None, question=None, **kw):
    """A watch as ops.watches makes them (ids from domain.watches.watch_id_for)."""
    from regrag.domain.watches import ARTICLE, DOCUMENT, QUESTION, Baseline, Cited, Watch, watch_id_for

    kind = QUESTION if question else (ARTICLE if article else DOCUMENT)
    owner = kw.pop("owner", f"owner-{n}")
    if question:
        cited = kw.pop("cited", (Cited("nat-reg-0088", "第二十八条", "电力供应与使用条例", "〔…〕"),))
        baseline = Baseline(cited=tuple(cited), checked="2026-11-01T00:00:00+00:00")
        doc_id = None
    else:
        baseline = Baseline(doc_id=doc_id, article=article, article_text="第三条 …" if article else None)
    filters = kw.pop("filters", {})
    return Watch(
        watch_id=watch_id_for(kind, doc_id, article, question, filters, owner),
        kind=kind,
        created=kw.pop("created", f"2026-11-0{1 + n % 9}T00:00:0{n % 10}+00:00"),
        doc_id=doc_id,
        article=article,
        question=question,
        filters=filters,
        owner=owner,
        title="中华人民共和国矿产资源法" if doc_id else "",
        terms=tuple(kw.pop("terms", ("矿产", "资源") if question else ())),
        baseline=baseline,
    )


def make_alert(n: int, watch_id: str, *, created: str, kind: str = "new_version"):
    from regrag.domain.watches import Alert, alert_id_for

    return Alert(
        alert_id=alert_id_for(watch_id, kind, n, n + 1),
        watch_id=watch_id,
        kind=kind,
        doc_id="nat-law-0072",
        created=created,
        successor_id="nat-law-0073",
        dates={"entry_into_force": "2025-07-01"},
        diff={"article": "第三条", "change": "changed", "old": {"article": "第三条", "text": "旧"}, "new": None},
        title="中华人民共和国矿产资源法",
        message="《中华人民共和国矿产资源法》有新版本。",
    )


class WatchStoreContract:
    """WatchStore: watches by id (made once), found by the documents they follow (the index follows the baseline),
    saved questions listed with their words and filters, alerts recorded once and listed newest first."""

    @pytest.fixture
    def watch_store(self):
        raise NotImplementedError

    def test_a_watch_is_stored_once_and_read_back_whole(self, watch_store):
        watch = make_watch(1, article="第三条")
        assert watch_store.put_watch(watch) is True
        assert watch_store.put_watch(watch) is False  # the same watch asked for again
        assert watch_store.get_watch(watch.watch_id) == watch
        assert watch_store.get_watch("w" + "0" * 23) is None
        assert watch_store.list_watches() == [watch]

    def test_watches_are_listed_oldest_first_and_removed_with_their_index(self, watch_store):
        first, second = make_watch(1), make_watch(2, article="第五条")
        question = make_watch(3, question="矿产资源属于谁所有？", filters={"province": ["national"]})
        for w in (second, question, first):
            watch_store.put_watch(w)
        assert [w.watch_id for w in watch_store.list_watches()] == [first.watch_id, second.watch_id, question.watch_id]
        assert watch_store.remove_watch(second.watch_id) is True
        assert watch_store.remove_watch(second.watch_id) is False
        assert [w.watch_id for w in watch_store.watches_following(["nat-law-0072"])] == [first.watch_id]
        assert watch_store.remove_watch(question.watch_id) is True
        assert watch_store.saved_questions() == [] and watch_store.watches_following(["nat-reg-0088"]) == []

    def test_watches_are_found_by_the_documents_they_follow(self, watch_store):
        doc = make_watch(1)
        article = make_watch(2, doc_id="nat-reg-0088", article="第二十八条")
        question = make_watch(3, question="计划检修停电要提前几天通知用户？")  # cites nat-reg-0088
        for w in (doc, article, question):
            watch_store.put_watch(w)
        found = watch_store.watches_following(["nat-reg-0088", "nat-reg-0091"])
        assert sorted(w.watch_id for w in found) == sorted([article.watch_id, question.watch_id])
        assert [w.watch_id for w in watch_store.watches_following(["nat-law-0072", "nat-law-0072"])] == [doc.watch_id]
        assert watch_store.watches_following([]) == []

    def test_a_new_baseline_moves_what_the_watch_follows(self, watch_store):
        from regrag.domain.watches import Baseline, Cited

        doc, question = make_watch(1), make_watch(2, question="矿产资源属于谁所有？")
        watch_store.put_watch(doc)
        watch_store.put_watch(question)
        moved = Baseline(doc_id="nat-law-0073", content_hash="h", checked="2026-11-02T00:00:00+00:00")
        watch_store.update_baseline(doc.watch_id, moved)
        watch_store.update_baseline(question.watch_id, Baseline(cited=(Cited("nat-law-0073", "第四条"),)))
        assert watch_store.get_watch(doc.watch_id).baseline == moved
        assert watch_store.watches_following(["nat-law-0072"]) == []
        found = watch_store.watches_following(["nat-law-0073"])
        assert sorted(w.watch_id for w in found) == sorted([doc.watch_id, question.watch_id])
        assert watch_store.watches_following(["nat-reg-0088"]) == []  # the question no longer cites it
        watch_store.update_baseline("w" + "1" * 23, moved)  # removed meanwhile: nothing happens

    def test_saved_questions_carry_their_words_and_filters(self, watch_store):
        filters = {"province": ["sd", "national"], "as_of": "2024-01-01"}
        question = make_watch(
            1,
            question="在山东，供电企业计划检修停电要提前几天通知？",
            filters=filters,
            terms=("山东", "供电企业", "检修"),
        )
        watch_store.put_watch(question)
        watch_store.put_watch(make_watch(2, article="第三条"))
        [saved] = watch_store.saved_questions()
        assert (saved.watch_id, saved.terms, saved.filters) == (
            question.watch_id,
            ("山东", "供电企业", "检修"),
            filters,
        )

    def test_an_alert_is_recorded_once_and_listed_newest_first(self, watch_store):
        a, b = make_watch(1), make_watch(2, article="第三条")
        old = make_alert(1, a.watch_id, created="2026-11-01T08:00:00+00:00")
        new = make_alert(2, b.watch_id, created="2026-11-03T08:00:00+00:00", kind="article_changed")
        mid = make_alert(3, a.watch_id, created="2026-11-02T08:00:00+00:00", kind="repealed")
        assert watch_store.add_alert(old) is True
        assert watch_store.add_alert(new) is True and watch_store.add_alert(mid) is True
        assert watch_store.add_alert(old) is False  # redelivered: nothing new
        assert watch_store.list_alerts() == [new, mid, old]
        assert watch_store.list_alerts(limit=2) == [new, mid]
        assert watch_store.list_alerts(since="2026-11-02") == [new, mid]
        assert watch_store.list_alerts(since="2026-11-02T08:00:01+00:00") == [new]
        assert watch_store.list_alerts(watch_id=a.watch_id) == [mid, old]
        assert watch_store.list_alerts(watch_id=a.watch_id, since="2026-11-03") == []
