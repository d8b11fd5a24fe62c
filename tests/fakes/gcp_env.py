"""Helpers for tests on the emulators and fakes: unique names, buckets, topics, subscriptions, GCP settings.

Clients are built here with the emulator hosts passed explicitly, so nothing depends on the order in which
tests set STORAGE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass
from typing import Any

PROJECT = "test-project"
PROJECT_NUMBER = "123456789012"  # the canonical resource names use it (index endpoints: FindNeighbors)
REGION = "europe-west4"


def unique(prefix: str) -> str:
    """A name no other test uses (the Pub/Sub emulator keeps its state for the whole session)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def storage(host: str) -> Any:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud.storage import Client

    os.environ["STORAGE_EMULATOR_HOST"] = host  # read by the client at construction
    return Client(project=PROJECT, credentials=AnonymousCredentials())


def create_bucket(host: str, name: str | None = None) -> str:
    name = name or unique("bucket")
    storage(host).create_bucket(name)
    return name


def upload(host: str, bucket: str, name: str, data: bytes, sidecar: dict[str, Any] | None = None) -> Any:
    """Put an object (and its JSON sidecar) in the emulator; return the finalize CloudEvent GCS would raise
    (the emulator raises none), with the object resource the emulator returns as its data."""
    import json

    b = storage(host).bucket(bucket)
    if sidecar is not None:
        b.blob(name + ".meta.json").upload_from_string(json.dumps(sidecar, ensure_ascii=False).encode())
    blob = b.blob(name)
    blob.upload_from_string(data, content_type="text/markdown")
    blob.reload()
    return finalize_event(bucket, blob)


def finalize_event(bucket: str, blob: Any) -> Any:
    from cloudevents.http import CloudEvent

    attributes = {
        "type": "google.cloud.storage.object.v1.finalized",
        "source": f"//storage.googleapis.com/projects/_/buckets/{bucket}",
        "subject": f"objects/{blob.name}",
        "id": f"{bucket}/{blob.name}/{blob.generation}",
    }
    return CloudEvent(attributes, dict(blob._properties))


def sample(doc_id: str) -> tuple[str, bytes, dict[str, Any]]:
    """(object name, bytes, sidecar) of a sample-corpus document."""
    import json
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[2] / "shared" / "sample_corpus"
    lines = (corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    record = next(r for r in map(json.loads, filter(None, lines)) if r["doc_id"] == doc_id)
    sidecar = {k: v for k, v in record.items() if k not in ("file", "chars", "articles")}
    return record["file"], (corpus / record["file"]).read_bytes(), sidecar


def pubsub_clients(host: str) -> tuple[Any, Any]:
    os.environ["PUBSUB_EMULATOR_HOST"] = host
    from google.cloud.pubsub_v1 import PublisherClient, SubscriberClient

    return PublisherClient(), SubscriberClient()


def topic_path(topic: str) -> str:
    return f"projects/{PROJECT}/topics/{topic}"


def subscription_path(subscription: str) -> str:
    return f"projects/{PROJECT}/subscriptions/{subscription}"


def create_topic(host: str, topic: str) -> str:
    from google.api_core.exceptions import AlreadyExists

    publisher, _ = pubsub_clients(host)
    with contextlib.suppress(AlreadyExists):  # a topic shared by a test class
        publisher.create_topic(name=topic_path(topic))
    return topic


def create_pull_subscription(host: str, topic: str, subscription: str | None = None) -> str:
    _, subscriber = pubsub_clients(host)
    subscription = subscription or unique("pull")
    subscriber.create_subscription(request={"name": subscription_path(subscription), "topic": topic_path(topic)})
    return subscription


def create_push_subscription(
    host: str, topic: str, endpoint: str, *, dead_letter_topic: str | None = None, max_attempts: int = 5
) -> str:
    """A push subscription with the production retry shape: backoff, and a dead-letter topic after N attempts."""
    from google.protobuf import duration_pb2

    _, subscriber = pubsub_clients(host)
    name = unique("push")
    request: dict[str, Any] = {
        "name": subscription_path(name),
        "topic": topic_path(topic),
        "push_config": {"push_endpoint": endpoint},
        "ack_deadline_seconds": 30,
        "retry_policy": {
            "minimum_backoff": duration_pb2.Duration(nanos=100_000_000),
            "maximum_backoff": duration_pb2.Duration(seconds=1),
        },
    }
    if dead_letter_topic:
        request["dead_letter_policy"] = {
            "dead_letter_topic": topic_path(dead_letter_topic),
            "max_delivery_attempts": max_attempts,
        }
    subscriber.create_subscription(request=request)
    return name


def pull(host: str, subscription: str, max_messages: int = 100, timeout_s: float = 5.0) -> list[Any]:
    """Pull and acknowledge what is there now (the emulator answers at once when the queue is empty)."""
    _, subscriber = pubsub_clients(host)
    response = subscriber.pull(
        request={"subscription": subscription_path(subscription), "max_messages": max_messages}, timeout=timeout_s
    )
    messages = [r.message for r in response.received_messages]
    if response.received_messages:
        subscriber.acknowledge(
            request={
                "subscription": subscription_path(subscription),
                "ack_ids": [r.ack_id for r in response.received_messages],
            }
        )
    return messages


@dataclass(frozen=True)
class VertexNames:
    index: str
    endpoint: str
    deployed_index_id: str


def vertex_names() -> VertexNames:
    suffix = uuid.uuid4().hex[:10]
    return VertexNames(
        f"projects/{PROJECT}/locations/{REGION}/indexes/{suffix}",
        f"projects/{PROJECT_NUMBER}/locations/{REGION}/indexEndpoints/{suffix}",
        f"regrag_{suffix}",
    )


def gcp_environ(
    *,
    bucket: str,
    state_bucket: str,
    vertex: VertexNames,
    vertex_host: str,
    embeddings_url: str,
    topic_chunked: str,
    topic_embedded: str,
    **extra: str,
) -> dict[str, str]:
    """A complete REGRAG_MODE=gcp environment pointing at the emulators and fakes."""
    env = {
        "REGRAG_MODE": "gcp",
        "REGRAG_GCP_PROJECT": PROJECT,
        "REGRAG_GCP_REGION": REGION,
        "REGRAG_BUCKET": bucket,
        "REGRAG_STATE_BUCKET": state_bucket,
        "REGRAG_VERTEX_INDEX": vertex.index,
        "REGRAG_VERTEX_INDEX_ENDPOINT": vertex.endpoint,
        "REGRAG_VERTEX_DEPLOYED_INDEX_ID": vertex.deployed_index_id,
        "REGRAG_VERTEX_PUBLIC_HOST": "1234567890.europe-west4-000000000000.vdb.vertexai.goog",
        "REGRAG_VERTEX_EMULATOR_HOST": vertex_host,
        "REGRAG_EMBEDDINGS_EMULATOR_URL": embeddings_url,
        "REGRAG_TOPIC_CHUNKED": topic_chunked,
        "REGRAG_TOPIC_EMBEDDED": topic_embedded,
        "REGRAG_EMBED_BACKOFF_S": "0.01",
        "REGRAG_EMBED_MAX_ATTEMPTS": "2",
        "REGRAG_GCS_TIMEOUT_S": "10",
        "RERANK": "false",
        "LOG_LEVEL": "WARNING",
    }
    env.update(extra)
    return env


class NoLexicon:
    """No document frequencies yet (what a deployment has before the first reconcile run)."""

    def current(self) -> Any:
        from regrag.adapters.gcp.sparse import Lexicon

        return Lexicon()

    def save(self, lexicon: Any) -> None:
        raise AssertionError("this test does not expect statistics to be saved")


def vertex_ports(objects: Any, vector_fake: Any, dim: int = 16, timeout_s: float = 5.0, **config: Any) -> Any:
    """(store, vectors, lexical, dim) on a fresh fake index, the shape IndexContract expects."""
    from regrag.adapters.gcp.blobstore import GcsBlobStore
    from regrag.adapters.gcp.chunk_store import GcsChunkStore
    from regrag.adapters.gcp.clients import Endpoint
    from regrag.adapters.gcp.index_metadata import IndexMetadata
    from regrag.adapters.gcp.lexicon import GcsLexicon
    from regrag.adapters.gcp.search_index import VertexLexicalIndex, VertexVectorIndex
    from regrag.adapters.gcp.search_store import VertexIndex, VertexIndexConfig
    from regrag.text.terms import chunk_tokens

    names = vertex_names()
    vector_fake.add_index(names.index, dim, names.endpoint, names.deployed_index_id)
    endpoint = Endpoint(vector_fake.address, plaintext=True)
    index = VertexIndex(
        VertexIndexConfig(
            names.index, names.endpoint, names.deployed_index_id, endpoint, endpoint, dim, timeout_s=timeout_s, **config
        ),
        tokens_of=chunk_tokens,
    )
    store = GcsChunkStore(objects, dimension=dim, model_id="test-model")
    lexicon = GcsLexicon(objects) if isinstance(objects, GcsBlobStore) else NoLexicon()
    metadata = IndexMetadata(objects, "", "test-model", dim)
    return store, VertexVectorIndex(index, metadata), VertexLexicalIndex(index, lexicon), dim
