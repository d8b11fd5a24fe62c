"""The contract suites against the local adapters."""

import threading
from dataclasses import replace

import numpy as np
import pytest

from regrag.adapters.local.blobstore import DiskBlobStore
from regrag.adapters.local.bus import InProcessBus
from regrag.adapters.local.chunk_store import SqliteIndex
from regrag.adapters.local.embedders import E5Embedder, HashEmbedder
from regrag.adapters.local.failures import JsonlFailureRecorder
from regrag.adapters.local.feedback import SqliteFeedbackStore
from regrag.adapters.local.search_index import SqliteLexicalIndex, SqliteQuestionIndex, SqliteVectorIndex
from regrag.adapters.local.vector_cache import CachingEmbedder, SqliteVectorCache
from regrag.adapters.local.watches import SqliteWatchStore
from regrag.domain.errors import InvalidInput

from contracts import (
    BlobStoreContract,
    ConcurrentFeedbackStoreContract,
    EmbedderContract,
    FailureRecorderContract,
    GeneratorContract,
    IndexContract,
    PartStagingContract,
    PublisherContract,
    QuestionIndexContract,
    WatchStoreContract,
)


class TestDiskBlobStore(BlobStoreContract):
    @pytest.fixture
    def store(self, tmp_path):
        return DiskBlobStore(tmp_path / "bucket")

    def test_names_cannot_escape_the_folder(self, store):
        with pytest.raises(InvalidInput):
            store.read("../../etc/passwd")


class TestInProcessBus(PublisherContract):
    @pytest.fixture
    def publisher(self):
        bus = InProcessBus(backoff_s=0)
        bus.inbox = []
        bus.subscribe(self.topic, lambda payload, attrs: bus.inbox.append(payload))
        return bus

    def received(self, publisher, topic):
        return publisher.inbox

    def test_failing_handler_is_retried_then_dead_lettered(self):
        bus = InProcessBus(max_attempts=3, backoff_s=0)
        calls = []

        def handler(payload, attrs):
            calls.append(payload)
            raise RuntimeError("boom")

        bus.subscribe("t", handler)
        bus.publish("t", {"n": 1})
        assert len(calls) == 3 and len(bus.dead_letters) == 1

    def test_a_dead_letter_is_recorded_with_the_stage_the_document_and_the_error(self, tmp_path):
        recorder = JsonlFailureRecorder(tmp_path / "failures.jsonl")
        bus = InProcessBus(max_attempts=2, backoff_s=0, failures=recorder)

        def handler(payload, attrs):
            raise TimeoutError("the index did not answer")

        bus.subscribe("regrag-embedded", handler, "upsert")
        bus.publish("regrag-embedded", {"n": 1}, {"doc_id": "nat-reg-0088", "kind": "ChunksEmbedded"})
        [record] = recorder.list()
        assert record["stage"] == "upsert" and record["key"] == record["doc_id"] == "nat-reg-0088"
        assert record["reason"] == "dead_lettered" and record["attempts"] == 2
        assert record["error"] == "TimeoutError: the index did not answer"

    def test_a_storage_error_is_not_retried_and_stops_the_drain(self):
        from regrag.domain.errors import StorageError

        bus = InProcessBus(backoff_s=0)
        calls = []

        def full(payload, attrs):
            calls.append(payload)
            raise StorageError("disk full", path="/x", kind="full")

        bus.subscribe("t", full)
        bus.subscribe("u", lambda p, a: calls.append(p))
        with pytest.raises(StorageError):
            bus.publish("t", {"n": 1})
        assert calls == [{"n": 1}] and bus.dead_letters == []

    def test_publish_inside_a_handler_is_queued_not_nested(self):
        bus = InProcessBus(backoff_s=0)
        order = []
        bus.subscribe("a", lambda p, _: (order.append("a-start"), bus.publish("b", {}), order.append("a-end")))
        bus.subscribe("b", lambda p, _: order.append("b"))
        bus.publish("a", {})
        assert order == ["a-start", "a-end", "b"]


class TestHashEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self):
        return HashEmbedder()


@pytest.fixture(scope="module")
def e5():
    return E5Embedder()


@pytest.mark.slow
class TestE5Embedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, e5):
        return e5

    def test_semantics(self, embedder):
        q = embedder.embed_query("光伏发电项目怎么接入电网？")
        docs = embedder.embed_documents(["电网企业应当为太阳能发电项目提供并网服务。", "禁止在风景名胜区内采石。"])
        assert float(docs[0] @ q) > float(docs[1] @ q)

    def test_a_short_question_does_not_wait_for_the_long_lane(self, embedder):
        """While a long job holds the long lane (a long question or a batch of passages), a short question is
        answered from the short lane: it never queues behind it."""
        short = "供电企业停电应当提前几天通知用户？"
        alone = embedder.embed_query(short)
        embedder._long.lock.acquire(10_000)  # a long job is running
        try:
            done = []
            worker = threading.Thread(target=lambda: done.append(embedder.embed_query(short)))
            worker.start()
            worker.join(timeout=60)
            assert done, "the short question waited for the long lane"
            np.testing.assert_array_equal(done[0], alone)
        finally:
            embedder._long.lock.release()
        long_question = "光伏发电项目并网需要满足哪些条件？" * 20  # over short_chars: the long lane
        assert len(long_question) > embedder.short_chars
        assert float(embedder.embed_query(long_question) @ alone) > 0


class TestCachingEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, tmp_path):
        return CachingEmbedder(HashEmbedder(), SqliteVectorCache(tmp_path / "cache.sqlite"))

    def test_second_call_is_served_from_the_cache(self, embedder):
        embedder.embed_documents(["甲", "乙"])
        embedder.cache.hits = embedder.cache.misses = 0
        again = embedder.embed_documents(["乙", "丙"])
        assert (embedder.cache.hits, embedder.cache.misses) == (1, 1)
        assert np.allclose(again[0], HashEmbedder().embed_documents(["乙"])[0])


class TestSqliteIndex(IndexContract):
    @pytest.fixture
    def ports(self, tmp_path):
        db = SqliteIndex(tmp_path / "index.sqlite", 16, "test-model")
        yield db, SqliteVectorIndex(db), SqliteLexicalIndex(db), 16
        db.close()

    def test_vectors_of_another_model_are_refused(self, tmp_path):
        SqliteIndex(tmp_path / "i.sqlite", 16, "model-a").close()
        with pytest.raises(InvalidInput, match="must not mix"):
            SqliteIndex(tmp_path / "i.sqlite", 384, "model-b")

    def test_wrong_dimension_and_non_finite_vectors(self, ports):
        from contracts import make_chunk, make_meta

        _store, vectors, *_ = ports
        chunk = make_chunk(make_meta(), 1)
        with pytest.raises(InvalidInput, match="dimensions"):
            vectors.upsert([chunk], [np.ones(8, np.float32)])
        with pytest.raises(InvalidInput, match="non-finite"):
            vectors.upsert([chunk], [np.full(16, np.nan, np.float32)])


class TestJsonlFailureRecorder(FailureRecorderContract):
    @pytest.fixture
    def recorder(self, tmp_path):
        return JsonlFailureRecorder(tmp_path / "failures.jsonl")

    @pytest.fixture
    def other_recorder(self, tmp_path):
        return JsonlFailureRecorder(tmp_path / "failures.jsonl")


class TestSqlitePartStaging(PartStagingContract):
    @pytest.fixture
    def staging(self, tmp_path):
        db = SqliteIndex(tmp_path / "index.sqlite", 4, "m")
        yield db
        db.close()


class TestSqliteFeedbackStore(ConcurrentFeedbackStoreContract):
    @pytest.fixture
    def feedback_store(self, tmp_path):
        store = SqliteFeedbackStore(tmp_path / "feedback.sqlite")
        yield store
        store.close()


class TestSqliteQuestionIndex(QuestionIndexContract):
    @pytest.fixture
    def question_index(self, tmp_path):
        db = SqliteIndex(tmp_path / "index.sqlite", 8, "test-model")
        yield SqliteQuestionIndex(db), 8
        db.close()


class TestExtractiveGenerator(GeneratorContract):
    @pytest.fixture
    def generator(self):
        from regrag.adapters.local.generator import ExtractiveGenerator
        from regrag.prompts import load_prompt
        from regrag.query.aids.hyde import RESPONSE_SCHEMA, Hyde

        hits = ["第三十条 因供电设施计划检修需要停电的，供电企业应当提前7日通知用户或者进行公告。"]
        hyde = Hyde(ExtractiveGenerator(lambda q: hits), "m", load_prompt("hyde_v1"), None, timeout_s=3.0, cache_size=0)
        prompt = hyde.build_prompt("计划检修停电要提前几天通知？")
        return ExtractiveGenerator(lambda q: hits), (prompt, RESPONSE_SCHEMA, hyde.system), "没有数据块的提示"


class TestSqliteWatchStore(WatchStoreContract):
    @pytest.fixture
    def watch_store(self, tmp_path):
        store = SqliteWatchStore(tmp_path / "watches.sqlite")
        yield store
        store.close()

    def test_concurrent_baseline_updates_and_alerts_lose_nothing(self, watch_store):
        from contracts import make_alert, make_watch

        watches = [make_watch(n, article=f"第{n}条") for n in range(1, 9)]
        for w in watches:
            watch_store.put_watch(w)
        start = threading.Barrier(len(watches))

        def work(n: int) -> None:
            start.wait()
            alert = make_alert(n, watches[n].watch_id, created=f"2026-11-0{1 + n}T00:00:00+00:00")
            watch_store.add_alert(alert)
            watch_store.add_alert(alert)
            watch_store.update_baseline(watches[n].watch_id, replace(watches[n].baseline, doc_id="nat-law-0073"))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(len(watches))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(watch_store.list_alerts()) == len(watches)
        assert len(watch_store.watches_following(["nat-law-0073"])) == len(watches)
