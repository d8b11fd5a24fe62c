"""The staged bundles (build/<fn>/ from deploy.sh) run the pipeline with nothing but what they ship.

Each function runs in its own `python -S` process (tests/fakes/bundle_probe.py): `regrag` can only come from
the bundle, and importing a module of any distribution outside the closure of the bundle's requirements.txt
fails. The functions are chained as on GCP: ingest's message feeds embed, embed's feeds upsert, then query,
rerank, compose and reconcile read what upsert wrote, on the emulators and fakes.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from fakes import gcp_env

pytestmark = pytest.mark.emulator

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "fakes" / "bundle_probe.py"
DIM = 768
# Imports that libraries attempt and survive without (so they are not in their requirements): api-core tries
# grpc where a client needs only REST (compose: Cloud Storage alone); something under google-genai probes
# pygments for pretty output; google-genai's _transformers tries `import PIL.Image` (image parts), which
# succeeds wherever Pillow is installed (the OCR path needs it).
OPTIONAL = {"grpc", "pygments", "PIL"}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("build")
    env = {
        "PATH": os.environ["PATH"],
        "REGRAG_BUILD_DIR": str(build),
        "REGRAG_GCP_PROJECT": gcp_env.PROJECT,
        "REGRAG_GCP_REGION": gcp_env.REGION,
        "REGRAG_BUCKET": "b",
        "REGRAG_STATE_BUCKET": "s",
        "REGRAG_VERTEX_INDEX": "projects/p/locations/l/indexes/1",
        "REGRAG_VERTEX_INDEX_ENDPOINT": "projects/123/locations/l/indexEndpoints/2",
        "REGRAG_VERTEX_DEPLOYED_INDEX_ID": "d",
        "REGRAG_VERTEX_PUBLIC_HOST": "h",
    }
    subprocess.run([str(ROOT / "deploy.sh"), "--dry-run"], env=env, check=True, capture_output=True, timeout=120)
    return build


def probe(bundles: Path, fn: str, request: dict[str, Any], env: dict[str, str], tmp: Path) -> dict[str, Any]:
    request_path = tmp / f"{fn}-request.json"
    request_path.write_text(json.dumps(request, ensure_ascii=False), encoding="utf-8")
    site = sysconfig.get_paths()["purelib"]
    result = subprocess.run(
        [sys.executable, "-S", str(PROBE), site, str(bundles / fn), fn, str(request_path)],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp), **env},
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, f"{fn}: {result.stderr[-3000:]}"
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["status"] == 200, f"{fn}: {out['body'][:1000]}\n{result.stderr[-3000:]}"
    refused = {r.split(" ", 1)[0] for r in out["refused"]}
    assert refused <= OPTIONAL, f"{fn} imported outside its requirements.txt: {out['refused']}"
    return out


def pubsub_event(topic: str, message: Any) -> dict[str, Any]:
    return {
        "cloudevent": {
            "attributes": {
                "type": "google.cloud.pubsub.topic.v1.messagePublished",
                "source": f"//pubsub.googleapis.com/{gcp_env.topic_path(topic)}",
            },
            "data": {
                "message": {
                    "data": base64.b64encode(message.data).decode(),
                    "attributes": dict(message.attributes),
                    "messageId": message.message_id,
                }
            },
        }
    }


def saved_question(gcs_host: str, state: str, embeddings_fake: Any, question: str) -> None:
    """A saved question that cites nothing yet (the index is empty), with its vector as the watch keeps it."""
    from regrag.adapters.gcp.blobstore import GcsBlobStore
    from regrag.adapters.gcp.embedders import VertexEmbedder
    from regrag.adapters.gcp.watches import GcsWatchStore
    from regrag.domain.messages import encode_vector
    from regrag.domain.watches import QUESTION, Watch, watch_id_for
    from regrag.text.terms import question_words

    embedder = VertexEmbedder(gcp_env.PROJECT, gcp_env.REGION, base_url=embeddings_fake.base_url, timeout_s=5)
    watch = Watch(
        watch_id=watch_id_for(QUESTION, None, None, question, {}, None),
        kind=QUESTION,
        created="2026-11-01T00:00:00+00:00",
        question=question,
        terms=tuple(question_words(question)),
        vector=encode_vector(embedder.embed_query(question)),
        model=embedder.model_id,
    )
    assert GcsWatchStore(GcsBlobStore(state, timeout_s=10)).put_watch(watch)


def test_each_bundle_runs_its_stage_with_only_its_requirements(
    bundles, gcs_host, pubsub_host, vector_fake, embeddings_fake, tmp_path
):
    embeddings_fake.reset()
    docs, state = gcp_env.create_bucket(gcs_host), gcp_env.create_bucket(gcs_host)
    chunked, embedded, alerts = gcp_env.unique("chunked"), gcp_env.unique("embedded"), gcp_env.unique("alerts")
    for topic in (chunked, embedded, alerts):
        gcp_env.create_topic(pubsub_host, topic)
    chunked_sub = gcp_env.create_pull_subscription(pubsub_host, chunked)
    embedded_sub = gcp_env.create_pull_subscription(pubsub_host, embedded)
    alerts_sub = gcp_env.create_pull_subscription(pubsub_host, alerts)
    names = gcp_env.vertex_names()
    vector_fake.add_index(names.index, DIM, names.endpoint, names.deployed_index_id)
    env = gcp_env.gcp_environ(
        bucket=docs, state_bucket=state, vertex=names, vertex_host=vector_fake.address,
        embeddings_url=embeddings_fake.base_url, topic_chunked=chunked, topic_embedded=embedded,
        STORAGE_EMULATOR_HOST=gcs_host, PUBSUB_EMULATOR_HOST=pubsub_host, REGRAG_TOPIC_ALERTS=alerts,
    )  # fmt: skip
    name, data, sidecar = gcp_env.sample("nat-reg-0088")
    event = gcp_env.upload(gcs_host, docs, name, data, sidecar)

    request = {"cloudevent": {"attributes": dict(event.get_attributes()), "data": event.data}}
    ingest = probe(bundles, "ingest", request, env, tmp_path)
    assert "google.cloud.aiplatform_v1" not in ingest["loaded"] and "google.genai" not in ingest["loaded"]
    [message] = gcp_env.pull(pubsub_host, chunked_sub)
    assert json.loads(message.data)["kind"] == "DocumentChunked"

    probe(bundles, "embed", pubsub_event(chunked, message), env, tmp_path)
    [message] = gcp_env.pull(pubsub_host, embedded_sub)
    assert json.loads(message.data)["kind"] == "ChunksEmbedded"

    question = "计划检修停电要提前几天通知用户？"
    saved_question(gcs_host, state, embeddings_fake, question)  # asked again by upsert, with its stored vector
    upsert = probe(bundles, "upsert", pubsub_event(embedded, message), env, tmp_path)
    assert "google.genai" not in upsert["loaded"]
    assert len(vector_fake.indexes[names.index].datapoints) == 45
    [alert] = gcp_env.pull(pubsub_host, alerts_sub)  # the upsert bundle published it (google-cloud-pubsub ships)
    assert alert.attributes["kind"] == "question_changed"
    assert {c["doc_id"] for c in json.loads(alert.data)["alert"]["diff"]["added"]} == {"nat-reg-0088"}

    query = probe(bundles, "query", {"json": {"question": question}}, env, tmp_path)
    body = json.loads(query["body"])
    # the answer as a .docx and the alerts as Atom, from the query bundle (python-docx ships with it)
    export = probe(bundles, "query", {"get": f"/query/{body['query_id']}/export?format=docx"}, env, tmp_path)
    assert export["content_type"].startswith("application/vnd.openxmlformats-officedocument.wordprocessingml")
    feed = probe(bundles, "query", {"get": "/alerts?format=atom"}, env, tmp_path)
    assert feed["content_type"].startswith("application/atom+xml") and "question_changed" in feed["body"]
    # every citation names its article: 〔《电力供应与使用条例》第二十八条第（一）项，生效：2019-03-02〕
    assert re.search(
        r"〔《电力供应与使用条例》第[一二三四五六七八九十百]+条[^，〕]*，生效：2019-03-02〕", body["answer_zh"]
    )
    # the citation check on the query function: its own dependencies (rapidfuzz, python-docx) are in the bundle
    memo = {
        "text": "日期：2024年1月1日\n依《电力供应与使用条例》第二十八条，“供电企业应当提前3天通知用户”。"
        "《条例》第九十九条。"
    }
    check = json.loads(probe(bundles, "query", {"path": "/check", "json": memo}, env, tmp_path)["body"])
    assert [c["status"] for c in check["citations"]] == ["quote_mismatch", "article_missing"], check
    docx = {"field": "file", "name": "memo.docx", "file": str(ROOT / "tests" / "fixtures" / "formats" / "sd-0090.docx")}
    uploaded = probe(bundles, "query", {"path": "/check", "upload": docx}, env, tmp_path)
    assert uploaded["status"] == 200 and json.loads(uploaded["body"])["document"]["format"] == "docx", uploaded
    assert not uploaded["refused"], uploaded["refused"]
    candidates = [{"id": c["id"]} for c in body["candidates"][:3]]
    requests = {
        "rerank": {"json": {"question": question, "candidates": candidates}},
        "compose": {"json": {"question": question, "candidates": candidates}},
        "reconcile": {"json": {"dry_run": True}},
    }
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {fn: pool.submit(probe, bundles, fn, r, env, tmp_path) for fn, r in requests.items()}
        outs = {fn: f.result() for fn, f in futures.items()}
    assert json.loads(outs["compose"]["body"])["bullets"]
    assert not [
        m
        for m in outs["compose"]["loaded"]
        if m.startswith(("google.cloud.aiplatform", "google.genai", "google.cloud.pubsub"))
    ]
    assert json.loads(outs["reconcile"]["body"])["documents"] == 1
