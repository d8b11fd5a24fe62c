"""The port contract suites (tests/contract/contracts.py) against the GCP adapters.

Each suite is the one the local adapters pass: Cloud Storage on gcp-storage-emulator, Pub/Sub on the gcloud
emulator, Vertex AI embeddings and Vector Search on the in-process wire fakes (tests/fakes/), all through the
real Google client libraries.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from contract.contracts import (
    BlobStoreContract,
    EmbedderContract,
    FailureRecorderContract,
    FeedbackStoreContract,
    GeneratorContract,
    IndexContract,
    PublisherContract,
    SecretStoreContract,
    WatchStoreContract,
)
from fakes import gcp_env
from fakes.gcp_env import vertex_ports
from regrag.adapters.gcp.blobstore import GcsBlobStore
from regrag.adapters.gcp.bus import PubSubPublisher
from regrag.adapters.gcp.embedders import RetryPolicy, VertexEmbedder
from regrag.adapters.gcp.failures import GcsFailureRecorder
from regrag.adapters.gcp.feedback import GcsFeedbackStore
from regrag.adapters.gcp.watches import GcsWatchStore

pytestmark = pytest.mark.emulator


class TestGcsBlobStore(BlobStoreContract):
    @pytest.fixture
    def store(self, bucket):
        return GcsBlobStore(bucket, project=gcp_env.PROJECT, timeout_s=10)

    def test_chinese_metadata_is_kept_ascii_and_decodes_back(self, store):
        store.write("政策/上海市供用电条例.txt", "第一条".encode(), {"title": "上海市供用电条例", "province": "sh"})
        blob = store.read("政策/上海市供用电条例.txt")  # the emulator drops the connection on non-Latin-1 headers
        assert blob.metadata["title"] == "%E4%B8%8A%E6%B5%B7%E5%B8%82%E4%BE%9B%E7%94%A8%E7%94%B5%E6%9D%A1%E4%BE%8B"
        assert blob.metadata["province"] == "sh" and blob.data == "第一条".encode()

    def test_listing_with_a_glob_returns_metadata(self, store):
        store.write("docs/a/head.json", b"{}", {"corpus": "gd"})
        store.write("docs/a/1/text.txt", b"x")
        listed = store.scan("docs/", match_glob="docs/*/head.json")
        assert [(i.info.name, i.metadata) for i in listed] == [("docs/a/head.json", {"corpus": "gd"})]


class TestPubSubPublisher(PublisherContract):
    @pytest.fixture
    def publisher(self, pubsub):
        gcp_env.create_topic(pubsub, self.topic)
        self.subscription = gcp_env.create_pull_subscription(pubsub, self.topic)
        self.host = pubsub
        return PubSubPublisher(gcp_env.PROJECT, timeout_s=10)

    def received(self, publisher, topic):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            messages = gcp_env.pull(self.host, self.subscription)
            if messages:
                return [json.loads(m.data.decode("utf-8")) for m in messages]
            time.sleep(0.05)
        return []

    def test_attributes_and_utf8_json_on_the_wire(self, publisher):
        payload = {"schema_version": 1, "kind": "DocumentDeleted", "doc_id": "d", "source_name": "政策/条例.md"}
        publisher.publish(self.topic, payload, {"kind": "DocumentDeleted", "doc_id": "d"})
        [message] = gcp_env.pull(self.host, self.subscription)
        assert dict(message.attributes) == {"kind": "DocumentDeleted", "doc_id": "d"}
        assert "政策/条例.md".encode() in message.data  # UTF-8, not \\u escapes


class TestVertexEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, embeddings):
        return VertexEmbedder(
            gcp_env.PROJECT, gcp_env.REGION, base_url=embeddings.base_url, retry=RetryPolicy(2, 0.01), timeout_s=5
        )


class TestGcsFailureRecorder(FailureRecorderContract):
    @pytest.fixture
    def recorder(self, bucket):
        return GcsFailureRecorder(GcsBlobStore(bucket, timeout_s=10))


# Only the one-request-at-a-time part of the contract: the storage emulator ignores preconditions
# (`if_generation_match`), so concurrent appends would overwrite each other there instead of racing. The
# concurrent part, and staged lost races, run on the in-memory bucket with real compare-and-swap
# (tests/gcp/test_gcp_feedback.py).
class TestGcsFeedbackStore(FeedbackStoreContract):
    @pytest.fixture
    def feedback_store(self, bucket):
        return GcsFeedbackStore(GcsBlobStore(bucket, timeout_s=10), "regrag/")


# One request at a time on the emulator (which ignores preconditions); the races run on the in-memory bucket with
# real compare-and-swap (tests/gcp/test_gcp_watches.py).
class TestGcsWatchStore(WatchStoreContract):
    @pytest.fixture
    def watch_store(self, bucket):
        return GcsWatchStore(GcsBlobStore(bucket, timeout_s=10), "regrag/")

    def test_chinese_words_and_filters_travel_in_ascii_metadata(self, watch_store, bucket):
        from contract.contracts import make_watch

        question = make_watch(
            1, question="在山东，光伏电站并网？", filters={"province": ["sd"]}, terms=("山东", "光伏电站")
        )
        watch_store.put_watch(question)
        [listed] = GcsBlobStore(bucket, timeout_s=10).scan("regrag/watch-questions/")
        assert all(value.isascii() for value in listed.metadata.values())
        [saved] = watch_store.saved_questions()
        assert saved.terms == ("山东", "光伏电站") and saved.filters == {"province": ["sd"]}


class TestGcsChunkMapOnVectorSearch(IndexContract):
    @pytest.fixture
    def ports(self, bucket, vector_fake):
        return vertex_ports(GcsBlobStore(bucket, timeout_s=10), vector_fake)

    def test_chunk_texts_live_in_the_bucket_and_the_index_holds_ids_vectors_and_restricts(self, ports, vector_fake):
        from contract.contracts import make_chunk, make_meta

        store, vectors, _lexical, _dim = ports
        meta = make_meta()
        self.put(ports, meta, [make_chunk(meta, 1, "第1条 电网企业应当签订并网协议")], [1])
        [point] = vector_fake.indexes[vectors.index.config.index].datapoints.values()
        assert point.datapoint_id == "doc-a-c1" and not point.embedding_metadata
        assert "并网" not in str(point)  # no text in the index
        names = [i.name for i in store.objects.list("")]
        assert "docs/doc-a/head.json" in names and "chunk-ids/doc-a-c1.json" in names
        assert np.isclose(np.linalg.norm(point.feature_vector), 1.0, atol=1e-5)


class TestGeminiGenerator(GeneratorContract):
    @pytest.fixture
    def generator(self):
        from fakes.gemini_fake import GeminiFake, Reply
        from regrag.adapters.gcp.generator import GeminiGenerator
        from regrag.query.aids.hyde import RESPONSE_SCHEMA

        answer = json.dumps({"answer": "供电企业应当提前7日通知用户。"}, ensure_ascii=False)

        def respond(request):  # the service answers by content: the unusable prompt is refused as a bad request
            return Reply.error(400, "bad request") if "不可用" in request.prompt else Reply.text(answer)

        with GeminiFake(default=Reply.computed(respond)) as fake:
            model = GeminiGenerator("gemini-test", api_key="k", base_url=fake.base_url, timeout_s=5)
            yield model, ("计划检修停电要提前几天通知？", RESPONSE_SCHEMA, "system"), "不可用的请求"


class TestSecretManagerStore(SecretStoreContract):
    @pytest.fixture
    def secret_store(self, secrets_fake):
        from regrag.adapters.gcp.clients import Endpoint
        from regrag.adapters.gcp.secrets import SecretManagerStore

        store = SecretManagerStore(
            gcp_env.PROJECT, endpoint=Endpoint(secrets_fake.address, plaintext=True), timeout_s=2
        )
        return store, lambda name, value: secrets_fake.add(name, value.encode("utf-8"))
