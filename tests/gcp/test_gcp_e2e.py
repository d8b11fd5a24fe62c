"""The whole pipeline on emulators, served as Cloud Functions would serve it.

GCS emulator (uploads) → the finalize CloudEvent POSTed to `ingest` (functions-framework; GCS emulators raise
no events) → Pub/Sub emulator push subscriptions drive `embed` and `upsert` (raw push envelopes, converted to
CloudEvents by functions-framework, as Eventarc delivers them) → `query` over HTTP. Vertex AI embeddings and
Vector Search are the wire fakes. Push subscriptions have the production retry shape: backoff, and a
dead-letter topic after 5 attempts.

All functions run in one process behind werkzeug's DispatcherMiddleware, each created by
`functions_framework.create_app` from its own functions/<name>/main.py, building its services from env vars alone.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
import requests
from cloudevents.conversion import to_binary
from cloudevents.http import CloudEvent
from functions_framework import create_app
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.serving import make_server
from werkzeug.wrappers import Response

from fakes import gcp_env
from regrag.adapters.gcp.blobstore import GcsBlobStore
from regrag.adapters.gcp.chunk_store import GcsChunkStore
from regrag.adapters.gcp.failures import GcsFailureRecorder
from regrag.ops.feedback import export_questions
from regrag.wiring import get_services, reset_services

pytestmark = pytest.mark.emulator

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "shared" / "sample_corpus"

FUNCTIONS = ("ingest", "embed", "upsert", "query", "rerank", "compose", "reconcile")
POISON = "毒丸"  # the embeddings fake answers 503 to any text containing it, forever
DIM = 768


@dataclass
class Repeat:
    """WSGI middleware: hand every request to `services` `times` times (a redelivery storm), answer the last."""

    services: Any
    times: int = 1

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if self.times == 1:
            return self.services(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        result: list[bytes] = []
        captured: list[Any] = []
        for _ in range(self.times):
            env = dict(environ, **{"wsgi.input": io.BytesIO(body)})
            chunks = self.services(env, lambda status, headers, exc_info=None: captured.append((status, headers)))
            result = list(chunks)
            getattr(chunks, "close", lambda: None)()
        start_response(*captured[-1])
        return result


@dataclass
class Activity:
    """WSGI middleware counting requests in flight, so a test ends only when its deliveries have."""

    services: Any
    active: int = 0
    last: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        with self.lock:
            self.active += 1
        try:
            return list(self.services(environ, start_response))
        finally:
            with self.lock:
                self.active -= 1
                self.last = time.monotonic()

    def wait_quiet(self, idle_s: float = 1.0, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if self.active == 0 and time.monotonic() - self.last >= idle_s:
                    return
            time.sleep(0.05)
        raise AssertionError("deliveries still arriving after the test")


@dataclass
class Callers:
    """WSGI middleware keeping the bearer token of each call (Cloud Run checks it before the function runs)."""

    app: Any
    tokens: list[str] = field(default_factory=list)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        self.tokens.append(environ.get("HTTP_AUTHORIZATION", "").removeprefix("Bearer "))
        return self.app(environ, start_response)


@dataclass
class Stack:
    server_url: str
    pubsub: str
    gcs: str
    topic_chunked: str
    topic_embedded: str
    dead_embed: str  # pull subscription on embed's dead-letter topic
    dead_upsert: str
    repeat: dict[str, Repeat]
    activity: Activity
    callers: dict[str, Callers]


@pytest.fixture(scope="module")
def stack(gcs_host, pubsub_host, vector_fake, embeddings_fake) -> Iterator[Stack]:
    apps = {
        f"/{name}": create_app(target=name, source=str(ROOT / "functions" / name / "main.py")) for name in FUNCTIONS
    }
    repeat = {name: Repeat(apps[f"/{name}"]) for name in ("embed", "upsert")}
    apps.update({f"/{name}": wrapper for name, wrapper in repeat.items()})
    callers = {name: Callers(apps[f"/{name}"]) for name in ("rerank", "compose")}
    apps.update({f"/{name}": wrapper for name, wrapper in callers.items()})
    activity = Activity(DispatcherMiddleware(Response("no such function", 404), apps))
    server = make_server("127.0.0.1", 0, activity, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}"
    chunked, embedded = gcp_env.unique("chunked"), gcp_env.unique("embedded")
    dead_embed_topic, dead_upsert_topic = gcp_env.unique("embed-dead"), gcp_env.unique("upsert-dead")
    for topic in (chunked, embedded, dead_embed_topic, dead_upsert_topic):
        gcp_env.create_topic(pubsub_host, topic)
    dead_embed = gcp_env.create_pull_subscription(pubsub_host, dead_embed_topic)
    dead_upsert = gcp_env.create_pull_subscription(pubsub_host, dead_upsert_topic)
    pushes = [
        gcp_env.create_push_subscription(
            pubsub_host, chunked, f"{url}/embed/{gcp_env.topic_path(chunked)}", dead_letter_topic=dead_embed_topic
        ),
        gcp_env.create_push_subscription(
            pubsub_host, embedded, f"{url}/upsert/{gcp_env.topic_path(embedded)}", dead_letter_topic=dead_upsert_topic
        ),
    ]
    yield Stack(url, pubsub_host, gcs_host, chunked, embedded, dead_embed, dead_upsert, repeat, activity, callers)
    _, subscriber = gcp_env.pubsub_clients(pubsub_host)
    for name in pushes:  # the emulator would keep pushing to a server that is gone
        subscriber.delete_subscription(request={"subscription": gcp_env.subscription_path(name)})
    server.shutdown()
    server.server_close()


@dataclass
class World:
    """One deployment's resources: a documents bucket, a state bucket and a Vector Search index."""

    docs: str
    state: str
    vertex: gcp_env.VertexNames
    prefix: str = ""  # REGRAG_STATE_PREFIX

    def store(self) -> GcsChunkStore:
        return GcsChunkStore(GcsBlobStore(self.state, timeout_s=10), prefix=self.prefix)


@pytest.fixture
def make_world(stack, vector_fake, embeddings_fake, monkeypatch) -> Callable[..., World]:
    """Point the functions at fresh buckets and a fresh index (env vars only, as on GCP) and rebuild the services."""
    embeddings_fake.reset()

    def make(docs: str | None = None, **extra: str) -> World:
        world = World(
            docs or gcp_env.create_bucket(stack.gcs),
            gcp_env.create_bucket(stack.gcs),
            gcp_env.vertex_names(),
            extra.get("REGRAG_STATE_PREFIX", ""),
        )
        vector_fake.add_index(world.vertex.index, DIM, world.vertex.endpoint, world.vertex.deployed_index_id)
        env = gcp_env.gcp_environ(
            bucket=world.docs, state_bucket=world.state, vertex=world.vertex, vertex_host=vector_fake.address,
            embeddings_url=embeddings_fake.base_url, topic_chunked=stack.topic_chunked,
            topic_embedded=stack.topic_embedded, STORAGE_EMULATOR_HOST=stack.gcs, PUBSUB_EMULATOR_HOST=stack.pubsub,
            REGRAG_CHUNKMAP_CACHE_S="0", **extra,
        )  # fmt: skip
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        reset_services()
        return world

    yield make
    stack.activity.wait_quiet()  # no delivery may outlive this test's environment
    reset_services()


def upload(gcs: str, bucket: str, name: str, data: bytes, sidecar: dict[str, Any] | None = None) -> CloudEvent:
    return gcp_env.upload(gcs, bucket, name, data, sidecar)


def sample(doc_id: str) -> tuple[str, bytes, dict[str, Any]]:
    return gcp_env.sample(doc_id)


def post_event(stack: Stack, event: CloudEvent, times: int = 1) -> None:
    headers, body = to_binary(event)
    for _ in range(times):
        assert requests.post(f"{stack.server_url}/ingest/", headers=headers, data=body, timeout=30).status_code == 200


def eventually(check: Callable[[], Any], timeout_s: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.1)


def indexed(world: World, vector_fake, chunks: dict[str, int]) -> bool:
    """Every document has its chunks in the chunk map, and the index holds exactly those chunks."""
    store = world.store()
    stored = {m.doc_id: len(store.document_chunks(m.doc_id)) for m in store.list_documents()}
    points = vector_fake.indexes[world.vertex.index].datapoints
    return stored == chunks and len(points) == sum(chunks.values())


def ingest_samples(stack: Stack, world: World, doc_ids: list[str], times: int = 1) -> None:
    for doc_id in doc_ids:
        name, data, sidecar = sample(doc_id)
        post_event(stack, upload(stack.gcs, world.docs, name, data, sidecar), times)


def failures(world: World) -> list[str]:
    """The failure records (not the failed-delivery counters under failures/attempts/)."""
    names = [i.name for i in GcsBlobStore(world.state).list(f"{world.prefix}failures/")]
    return [n for n in names if not n.startswith(f"{world.prefix}failures/attempts/")]


def test_upload_to_cited_verbatim_answer_over_http(stack, make_world, vector_fake):
    world = make_world()
    ingest_samples(stack, world, ["nat-reg-0088", "zj-0004"])
    eventually(lambda: indexed(world, vector_fake, {"nat-reg-0088": 45, "zj-0004": 9}), what="both documents")

    response = requests.post(
        f"{stack.server_url}/query/", json={"question": "计划检修停电要提前几天通知用户？"}, timeout=30
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["candidates"][0]["doc_id"] == "nat-reg-0088"
    # every citation names its article: 〔《电力供应与使用条例》第二十八条第（一）项，生效：2019-03-02〕
    assert re.search(
        r"〔《电力供应与使用条例》第[一二三四五六七八九十百]+条[^，〕]*，生效：2019-03-02〕", body["answer_zh"]
    )
    source = (SAMPLE / "docs" / "nat-reg-0088.md").read_text(encoding="utf-8")
    assert body["bullets"] and all(p in source for b in body["bullets"] for p in b["pieces"])  # verbatim
    legs = {
        (c["metadata"]["dense_rank"] is not None, c["metadata"]["lexical_rank"] is not None) for c in body["candidates"]
    }
    assert (True, True) in legs  # both Vector Search legs (dense and sparse) contributed
    assert failures(world) == [] and gcp_env.pull(stack.pubsub, stack.dead_embed) == []


def test_a_poison_message_is_dead_lettered_after_5_attempts_and_nothing_else_is_disturbed(
    stack, make_world, vector_fake, embeddings_fake
):
    world = make_world()
    embeddings_fake.poison = POISON
    poison = "# 毒丸试验条例\n\n第一条 为了测试，制定本条例。\n\n第二条 本条含有毒丸，嵌入服务对它总是答 503。\n"
    post_event(stack, upload(stack.gcs, world.docs, "docs/poison-0001.md", poison.encode("utf-8")))
    ingest_samples(stack, world, ["zj-0004"])

    started = time.monotonic()
    [dead] = eventually(lambda: gcp_env.pull(stack.pubsub, stack.dead_embed), 60, "the dead-lettered message")
    assert dead.attributes["CloudPubSubDeadLetterSourceDeliveryCount"] == "5"
    assert dead.attributes["doc_id"] == "poison-0001" and dead.attributes["kind"] == "DocumentChunked"
    assert json.loads(dead.data)["document"]["doc_id"] == "poison-0001"  # the message itself, intact
    poisoned = [r for r in embeddings_fake.requests if any(POISON in t for t in r.texts)]
    assert len(poisoned) == 5 * 2  # 5 deliveries × REGRAG_EMBED_MAX_ATTEMPTS=2 requests each
    eventually(lambda: indexed(world, vector_fake, {"zj-0004": 9}), what="the good document")
    assert world.store().get_document("poison-0001") is None
    # recorded once, by the fifth delivery: the stage, the document and the error the dead-letter copy lacks
    [record] = GcsFailureRecorder(GcsBlobStore(world.state), f"{world.prefix}failures/").list()
    assert record["stage"] == "embed" and record["reason"] == "dead_lettered" and record["attempts"] == 5
    assert record["key"] == record["doc_id"] == "poison-0001" and "Unavailable" in record["error"]
    assert gcp_env.pull(stack.pubsub, stack.dead_upsert) == []
    assert time.monotonic() - started < 60


def snapshot(world: World, vector_fake) -> dict[str, Any]:
    store = world.store()
    documents = {}
    for meta in store.list_documents():
        found = store.get_document(meta.doc_id)
        assert found is not None
        documents[meta.doc_id] = (
            found[0].to_dict(),
            found[1],
            [c.to_dict() for c in store.document_chunks(meta.doc_id)],
        )
    return {"index": vector_fake.snapshot(world.vertex.index), "documents": documents}


def test_every_message_delivered_three_times_leaves_an_identical_index(stack, make_world, vector_fake):
    docs = gcp_env.create_bucket(stack.gcs)
    once = make_world(docs)
    ingest_samples(stack, once, ["nat-reg-0088", "zj-0004"])
    eventually(lambda: indexed(once, vector_fake, {"nat-reg-0088": 45, "zj-0004": 9}), what="single delivery")
    expected = snapshot(once, vector_fake)

    thrice = make_world(docs)
    for wrapper in stack.repeat.values():
        wrapper.times = 3
    try:
        for doc_id in ("nat-reg-0088", "zj-0004"):
            name, _, _ = sample(doc_id)
            blob = gcp_env.storage(stack.gcs).bucket(docs).get_blob(name)  # the same objects, same generations
            post_event(stack, gcp_env.finalize_event(docs, blob), times=3)
        eventually(lambda: indexed(thrice, vector_fake, {"nat-reg-0088": 45, "zj-0004": 9}), what="triple delivery")
        stack.activity.wait_quiet()  # every duplicate has landed before comparing
    finally:
        for wrapper in stack.repeat.values():
            wrapper.times = 1
    assert snapshot(thrice, vector_fake) == expected
    assert failures(thrice) == []


def notification(world: World, name: str, generation: int, event_type: str = "OBJECT_DELETE", **extra: str) -> dict:
    """What a Cloud Storage Pub/Sub notification (JSON_API_V1) carries (infra/storage.tf sends deletes)."""
    attributes = {
        "notificationConfig": f"projects/_/buckets/{world.docs}/notificationConfigs/1",
        "eventType": event_type,
        "payloadFormat": "JSON_API_V1",
        "bucketId": world.docs,
        "objectId": name,
        "objectGeneration": str(generation),
        "eventTime": "2026-11-22T10:00:00.000000Z",
        **extra,
    }
    payload = {"kind": "storage#object", "bucket": world.docs, "name": name, "generation": str(generation)}
    return {"data": json.dumps(payload).encode(), "attributes": attributes}


def test_a_bucket_delete_notification_removes_the_document_and_an_overwrite_does_not(stack, make_world, vector_fake):
    world = make_world()
    ingest_samples(stack, world, ["zj-0004", "nat-reg-0088"])
    eventually(lambda: indexed(world, vector_fake, {"nat-reg-0088": 45, "zj-0004": 9}), what="both documents")
    generation = world.store().get_document("zj-0004")[0].generation
    publisher, _ = gcp_env.pubsub_clients(stack.pubsub)
    overwrite = notification(world, "docs/zj-0004.md", generation, overwrittenByGeneration=str(generation + 1))
    publisher.publish(gcp_env.topic_path(stack.topic_embedded), overwrite["data"], **overwrite["attributes"]).result()
    deleted = notification(world, "docs/nat-reg-0088.md", world.store().get_document("nat-reg-0088")[0].generation)
    publisher.publish(gcp_env.topic_path(stack.topic_embedded), deleted["data"], **deleted["attributes"]).result()
    eventually(lambda: indexed(world, vector_fake, {"zj-0004": 9}), what="the deleted document gone")
    assert failures(world) == []


def test_reconcile_republishes_missing_documents_and_removes_orphans(stack, make_world, vector_fake):
    world = make_world()
    ingest_samples(stack, world, ["zj-0004", "nat-reg-0033"])
    eventually(lambda: indexed(world, vector_fake, {"zj-0004": 9, "nat-reg-0033": 5}), what="two documents")
    name, data, sidecar = sample("nat-reg-0088")
    upload(stack.gcs, world.docs, name, data, sidecar)  # uploaded while the trigger was down: no event
    gcp_env.storage(stack.gcs).bucket(world.docs).delete_blob("docs/nat-reg-0033.md")  # a delete nobody saw

    def reconcile(**body: Any) -> dict[str, Any]:
        response = requests.post(f"{stack.server_url}/reconcile/", json=body, timeout=60)
        assert response.status_code == 200, response.text
        return response.json()

    dry = reconcile(dry_run=True)
    assert (dry["republished"], dry["removed"], dry["dry_run"]) == (["docs/nat-reg-0088.md"], ["nat-reg-0033"], True)
    result = reconcile()
    assert result["republished"] == ["docs/nat-reg-0088.md"] and result["removed"] == ["nat-reg-0033"]
    assert result["statistics"]["chunks"] == 14 and result["statistics"]["terms"] > 100
    eventually(lambda: indexed(world, vector_fake, {"zj-0004": 9, "nat-reg-0088": 45}), what="the reconciled index")
    stack.activity.wait_quiet()  # the vectors are in before the upsert marks the document complete
    again = reconcile()
    assert (again["republished"], again["removed"], again["statistics"]["chunks"]) == ([], [], 54)
    lexicon = json.loads(GcsBlobStore(world.state).read("lexicon/df.json").data)
    assert lexicon["chunks"] == 54 and lexicon["df"]["供电"] > 0
    assert failures(world) == []


SCHEDULER = f"regrag-scheduler@{gcp_env.PROJECT}.iam.gserviceaccount.com"


def id_token(email: str) -> str:
    """A Google ID token as Cloud Run hands it to the function after IAM checked it: signature removed."""

    def b64url(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    claims = {
        "iss": "https://accounts.google.com",
        "aud": "https://query.run.services",
        "email": email,
        "email_verified": True,
    }
    return f"{b64url({'alg': 'RS256', 'typ': 'JWT'})}.{b64url(claims)}.SIGNATURE_REMOVED_BY_GOOGLE"


def test_feedback_and_the_scheduled_eval_live_in_the_state_bucket_and_admin_needs_a_listed_principal(
    stack, make_world, vector_fake
):
    world = make_world(REGRAG_STATE_PREFIX="regrag/", REGRAG_ADMIN_PRINCIPALS=f"{SCHEDULER},ops@example.com")
    ingest_samples(stack, world, ["nat-reg-0088"])
    eventually(lambda: indexed(world, vector_fake, {"nat-reg-0088": 45}), what="the document")
    query = f"{stack.server_url}/query"
    question = "计划检修停电要提前几天通知用户？"
    answer = requests.post(f"{query}/", json={"question": question}, timeout=30).json()
    cited = answer["bullets"][0]["citation"]

    # feedback through the query function: one JSONL object per day in the state bucket, under the prefix
    def feedback(**body: Any) -> int:
        return requests.post(f"{query}/feedback", json=body, timeout=30).status_code

    assert feedback(query_id=answer["query_id"], helpful=True, citation=cited, comment="准确") == 200
    assert feedback(query_id=answer["query_id"], helpful=False) == 200
    assert feedback(query_id="0" * 32, helpful=True) == 404 and feedback(query_id="x", helpful=True) == 400
    state = GcsBlobStore(world.state, timeout_s=10)
    [day] = [i.name for i in state.list("regrag/feedback/")]
    lines = [json.loads(line) for line in state.read(day).data.decode().splitlines()]
    assert [(r["helpful"], r["comment"]) for r in lines] == [(True, "准确"), (False, None)]
    assert day == f"regrag/feedback/{lines[0]['time'][:10]}.jsonl"
    assert state.read_optional(f"regrag/queries/{answer['query_id']}.json") is not None
    # `regrag feedback export` reads it back as a question to grade
    [exported] = export_questions(get_services().feedback)
    assert exported["question"] == question and exported["relevant"][0]["doc_id"] == cited["doc_id"]

    # the scheduled eval: the question file and its reports in the state bucket, nothing in the uploads bucket
    graded = {
        "id": "g1",
        "question": question,
        "relevant": [{"doc_id": "nat-reg-0088", "article": cited["article"], "grade": 3}],
    }
    state.write("regrag/evals/dev.jsonl", (json.dumps(graded, ensure_ascii=False) + "\n").encode())
    uploads_before = sorted(i.name for i in GcsBlobStore(world.docs).list())

    def admin_eval(**headers: str) -> requests.Response:
        return requests.post(f"{query}/admin/eval", json={"questions": "evals/dev.jsonl"}, headers=headers, timeout=60)

    response = admin_eval(Authorization=f"Bearer {id_token(SCHEDULER)}")
    assert response.status_code == 200, response.text
    report = response.json()["report"]
    assert report.startswith("evals/dev.report-") and response.json()["metrics"]["ndcg@10"] > 0
    assert {i.name for i in state.list("regrag/evals/")} == {
        "regrag/evals/dev.jsonl",
        f"regrag/{report}",
        f"regrag/{report[:-5]}.md",
    }
    assert sorted(i.name for i in GcsBlobStore(world.docs).list()) == uploads_before  # ingest saw nothing new

    denied = admin_eval(Authorization=f"Bearer {id_token('lawyer@example.com')}")  # may query, not administer
    assert denied.status_code == 403 and "lawyer@example.com" in denied.json()["error"]["message"]
    assert admin_eval().status_code == 401
    assert len(state.list("regrag/evals/")) == 3  # neither wrote a report
    assert failures(world) == []


class TokenEndpoint(BaseHTTPRequestHandler):
    """Google's OAuth token endpoint for a service-account key: a signed JWT assertion naming a target_audience
    in, {"id_token": …} for that audience out (what google-auth's IDTokenCredentials asks for)."""

    def do_POST(self) -> None:
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        assertion = form["assertion"][0].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(assertion + "=" * (-len(assertion) % 4)))
        payload = {
            "aud": claims["target_audience"], "email": claims["iss"], "email_verified": True,
            "iss": "https://accounts.google.com", "exp": int(time.time()) + 3600, "iat": int(time.time()),
        }  # fmt: skip
        token = ".".join(
            base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()
            for part in ({"alg": "RS256", "typ": "JWT"}, payload)
        )
        body = json.dumps({"id_token": token + ".c2ln"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_query_calls_the_rerank_and_compose_functions_with_an_id_token(
    stack, make_world, vector_fake, tmp_path, monkeypatch
):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from fakes.gemini_fake import GeminiFake, Reply
    from fakes.rerank_model import prefer_last

    token_server = ThreadingHTTPServer(("127.0.0.1", 0), TokenEndpoint)
    threading.Thread(target=token_server.serve_forever, daemon=True).start()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    account = {
        "type": "service_account", "project_id": gcp_env.PROJECT, "private_key_id": "k1", "private_key": pem.decode(),
        "client_email": f"regrag-query@{gcp_env.PROJECT}.iam.gserviceaccount.com", "client_id": "1",
        "token_uri": f"http://127.0.0.1:{token_server.server_address[1]}/token",
    }  # fmt: skip
    (tmp_path / "sa.json").write_text(json.dumps(account))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "sa.json"))  # query's identity
    rerank_url, compose_url = f"{stack.server_url}/rerank/", f"{stack.server_url}/compose/"
    with GeminiFake(default=Reply.computed(prefer_last)) as gemini:
        world = make_world(
            REGRAG_RERANK_URL=rerank_url, REGRAG_COMPOSE_URL=compose_url, RERANK="true", GEMINI_API_KEY="k",
            REGRAG_GEMINI_BASE_URL=gemini.base_url, REGRAG_GEMINI_VERTEX="false",
        )  # fmt: skip
        ingest_samples(stack, world, ["nat-reg-0088", "zj-0004"])
        eventually(lambda: indexed(world, vector_fake, {"nat-reg-0088": 45, "zj-0004": 9}), what="both documents")
        for caller in stack.callers.values():
            caller.tokens.clear()
        response = requests.post(
            f"{stack.server_url}/query/", json={"question": "计划检修停电要提前几天通知用户？"}, timeout=60
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert gemini.requests  # the rerank function asked Gemini
    token_server.shutdown()
    assert (body["rerank_status"], body["compose_status"]) == ("ok", "remote")
    source = (SAMPLE / "docs" / "nat-reg-0088.md").read_text(encoding="utf-8")
    assert body["bullets"] and all(p in source for b in body["bullets"] for p in b["pieces"])  # verbatim
    for name, url in (("rerank", rerank_url), ("compose", compose_url)):
        (token,) = stack.callers[name].tokens  # one call each, with an ID token for the function's URL
        claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
        assert claims["aud"] == url and claims["email"] == account["client_email"]


def test_an_article_watch_is_told_once_on_the_alerts_topic_however_often_upsert_runs(stack, make_world, vector_fake):
    """Watch 消耗臭氧层物质管理条例 第二条 through the query function, then ingest the next version with every
    upsert delivered three times: one alert in the state bucket, one AlertRecorded message on the alerts topic."""
    alerts_topic = gcp_env.create_topic(stack.pubsub, gcp_env.unique("alerts"))
    subscription = gcp_env.create_pull_subscription(stack.pubsub, alerts_topic)
    world = make_world(REGRAG_TOPIC_ALERTS=alerts_topic)
    ingest_samples(stack, world, ["nat-reg-0079"])
    eventually(lambda: world.store().document_chunks("nat-reg-0079"), what="the 2018 version")
    made = requests.post(
        f"{stack.server_url}/query/watches",
        json={"doc_id": "nat-reg-0079", "article": "第二条", "owner": "lawyer@example.com"},
        timeout=30,
    )
    assert made.status_code == 201, made.text
    watch_id = made.json()["watch_id"]

    stack.repeat["upsert"].times = 3
    try:
        ingest_samples(stack, world, ["nat-reg-0080"])
        messages = eventually(lambda: gcp_env.pull(stack.pubsub, subscription), 60, "the alert message")
        stack.activity.wait_quiet()
    finally:
        stack.repeat["upsert"].times = 1
    messages += gcp_env.pull(stack.pubsub, subscription)  # anything a duplicate delivery published late
    [message] = messages
    body = json.loads(message.data.decode("utf-8"))
    assert body["kind"] == "AlertRecorded" and body["schema_version"] == 1
    alert = body["alert"]
    assert (alert["watch_id"], alert["kind"], alert["doc_id"], alert["successor_id"]) == (
        watch_id,
        "article_changed",
        "nat-reg-0079",
        "nat-reg-0080",
    )
    assert alert["diff"]["old"]["article"] == "第二条" and "是指列入" in alert["diff"]["new"]["text"]
    assert dict(message.attributes) == {
        "kind": "article_changed",
        "alert_id": alert["alert_id"],
        "watch_id": watch_id,
        "doc_id": "nat-reg-0079",
        "owner": "lawyer@example.com",
    }
    listed = requests.get(f"{stack.server_url}/query/alerts", timeout=30).json()["alerts"]
    assert [a["alert_id"] for a in listed] == [alert["alert_id"]]
    names = [i.name for i in GcsBlobStore(world.state).list("alerts/")]
    assert names == [f"alerts/{alert['alert_id']}.json"]
    assert failures(world) == [] and gcp_env.pull(stack.pubsub, stack.dead_upsert) == []
