"""Each functions/<name>/main.py through functions-framework's own services, as Cloud Functions would run it."""

from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path

import pytest
from cloudevents.conversion import to_binary, to_structured
from cloudevents.http import CloudEvent
from functions_framework import create_app

from regrag.domain.messages import DocumentChunked
from regrag.ingest.ingest import build_document
from regrag.ports import Blob
from regrag.wiring import get_services

from conftest import FIXTURES, ROOT, SAMPLE, sample_manifest

FUNCTIONS = ROOT / "functions"


def client(name):
    return create_app(target=name, source=str(FUNCTIONS / name / "main.py")).test_client()


def fixture_event(fixture, **data_changes):
    raw = json.loads((FIXTURES / "events" / f"{fixture}.json").read_text(encoding="utf-8"))
    raw["data"].update(data_changes)
    return CloudEvent(raw["attributes"], raw["data"])


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REGRAG_BUCKET_DIR", str(tmp_path / "bucket"))
    return tmp_path


def put_object(env, name, data, sidecar=None):
    path = Path(env / "bucket" / name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if sidecar:
        Path(str(path) + ".meta.json").write_text(json.dumps(sidecar, ensure_ascii=False), encoding="utf-8")


def post_event(c, event, structured=False):
    headers, body = to_structured(event) if structured else to_binary(event)
    return c.post("/", headers=headers, data=body)


def test_ingest_then_query_through_the_functions(env):
    record = sample_manifest()["nat-reg-0088"]
    put_object(
        env,
        "docs/nat-reg-0088.md",
        (SAMPLE / record["file"]).read_bytes(),
        {k: v for k, v in record.items() if k not in ("file", "chars", "articles")},
    )
    response = post_event(client("ingest"), fixture_event("gcs_finalized"))
    assert response.status_code == 200
    stats = get_services().store.stats()
    assert stats["documents"] == 1 and stats["chunks"] == 45

    q = client("query").post(
        "/", json={"question": "计划检修停电要提前几天通知用户？", "filters": {"doc_class": "grid"}}
    )
    assert q.status_code == 200
    body = q.get_json()
    assert {"answer_zh", "title", "bullets", "citations", "candidates", "rerank_status", "timings_ms"} <= set(body)
    assert body["rerank_status"] == "skipped"
    assert body["candidates"][0]["doc_id"] == "nat-reg-0088"
    expected_keys = {"id", "doc_id", "article", "title", "score", "text", "corpus", "corpora", "metadata"}
    assert set(body["candidates"][0]) == expected_keys
    # every citation names its article: 〔《电力供应与使用条例》第二十八条第（一）项，生效：2019-03-02〕
    assert re.search(
        r"〔《电力供应与使用条例》第[一二三四五六七八九十百]+条[^，〕]*，生效：2019-03-02〕", body["answer_zh"]
    )

    ids = [{"id": c["id"]} for c in body["candidates"][:3]]
    r = client("rerank").post("/", json={"question": "计划检修停电", "candidates": ids})
    assert r.status_code == 200 and r.get_json()["rerank_status"] == "skipped"
    assert [c["id"] for c in r.get_json()["candidates"]] == [c["id"] for c in ids]
    comp = client("compose").post("/", json={"question": "计划检修停电要提前几天通知用户？", "candidates": ids})
    assert comp.status_code == 200 and comp.get_json()["bullets"]

    # A delete event for an older generation than the stored one is ignored (a newer upload replaced it) …
    stale = post_event(client("ingest"), fixture_event("gcs_deleted", generation="1"))
    assert stale.status_code == 200 and get_services().store.stats()["chunks"] == 45
    # … the delete of the stored generation removes every chunk.
    generation = get_services().store.get_document("nat-reg-0088")[0].generation
    deleted = post_event(client("ingest"), fixture_event("gcs_deleted", generation=str(generation)))
    assert deleted.status_code == 200
    assert get_services().store.stats()["chunks"] == 0


def test_structured_mode_keeps_chinese_object_names(env):
    put_object(env, "政策/上海市供用电条例.txt", (FIXTURES / "formats" / "sh-0001.txt").read_bytes())
    event = fixture_event("gcs_finalized", name="政策/上海市供用电条例.txt")
    assert post_event(client("ingest"), event, structured=True).status_code == 200
    docs = get_services().store.list_documents()
    assert len(docs) == 1 and docs[0].title == "上海市供用电条例" and docs[0].encoding == "gb18030"
    assert docs[0].doc_id.startswith("doc-") and docs[0].province == "sh"


def test_bad_object_is_acknowledged_and_recorded_without_losing_anything(env):
    record = sample_manifest()["nat-reg-0088"]
    put_object(env, "docs/nat-reg-0088.md", (SAMPLE / record["file"]).read_bytes())
    ingest = client("ingest")
    assert post_event(ingest, fixture_event("gcs_finalized")).status_code == 200
    before = get_services().store.stats()["chunks"]
    put_object(env, "docs/empty.md", b"")
    put_object(env, "docs/photo.md", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    for name in ("docs/empty.md", "docs/photo.md", "docs/missing.md"):
        response = post_event(ingest, fixture_event("gcs_finalized", name=name))
        assert response.status_code == 200  # acknowledged: redelivery could never succeed
    failures = get_services().failures.list("ingest")
    assert [f["key"] for f in failures] == ["docs/empty.md", "docs/photo.md", "docs/missing.md"]
    # a PNG is read as an image whatever its name (as PDFs and DOCX are); OCR is on, and this one does not decode
    assert "empty file" in failures[0]["error"] and "unreadable image" in failures[1]["error"]
    assert get_services().store.stats()["chunks"] == before


def test_malformed_cloudevents(env):
    ingest = client("ingest")
    # not a CloudEvent at all: functions-framework answers 400 before our code runs
    assert ingest.post("/", json={"hello": "world"}).status_code == 400
    # a CloudEvent of the wrong type, and one without a name: acknowledged and recorded
    wrong = CloudEvent({"type": "com.example.other", "source": "//x"}, {"bucket": "b", "name": "x"})
    assert post_event(ingest, wrong).status_code == 200
    nameless = fixture_event("gcs_finalized")
    nameless.data.pop("name")
    assert post_event(ingest, nameless).status_code == 200
    reasons = [f["error"] for f in get_services().failures.list("ingest")]
    assert "unexpected event type" in reasons[0] and "'name'" in reasons[1]


def pubsub_event(payload):
    event = fixture_event("pubsub_published")
    data = copy.deepcopy(event.data)
    data["message"]["data"] = base64.b64encode(json.dumps(payload, ensure_ascii=False).encode()).decode()
    return CloudEvent(event.get_attributes(), data)


def test_embed_and_upsert_functions_on_pubsub_events(env):
    text = (SAMPLE / "docs" / "sh-0001.md").read_bytes()
    doc = build_document("docs/sh-0001.md", Blob("docs/sh-0001.md", text, 11), None, 800)
    message = DocumentChunked(doc.meta, doc.text, doc.chunks)
    assert post_event(client("embed"), pubsub_event(message.to_json())).status_code == 200
    # in local mode the bus hands ChunksEmbedded to the upsert handler: the document is searchable now
    assert get_services().store.stats()["chunks"] == len(doc.chunks)
    redelivered = post_event(client("embed"), pubsub_event(message.to_json()))
    assert redelivered.status_code == 200 and get_services().store.stats()["chunks"] == len(doc.chunks)

    bad = post_event(client("upsert"), pubsub_event({"kind": "ChunksEmbedded", "schema_version": 1}))
    assert bad.status_code == 200
    assert "missing fields" in get_services().failures.list("upsert")[0]["error"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"", 400, "empty"),
        (b"{not json", 400, "not valid UTF-8 JSON"),
        (json.dumps({"question": ""}).encode(), 400, "question must be a non-empty string"),
        # punctuation alone asks nothing: refused as such, not answered with "please ask in Chinese"
        (json.dumps({"question": "？？？"}).encode(), 400, "not a valid question (it has no words or figures)"),
        (json.dumps({"question": "并网", "filters": {"province": "mars"}}).encode(), 400, "unknown value"),
        (json.dumps({"question": "并网", "top_k": 0}).encode(), 400, "top_k"),
        (json.dumps(["question"]).encode(), 400, "JSON object"),
    ],
)
def test_query_bad_requests_get_400_with_a_json_message(env, body, status, message):
    r = client("query").post("/", data=body, content_type="application/json")
    assert r.status_code == status
    assert message in r.get_json()["error"]["message"]


@pytest.mark.parametrize(("name", "path"), [("query", "/"), ("query", "/query"), ("query", "/feedback"),
                                           ("rerank", "/"), ("compose", "/")])  # fmt: skip
def test_a_20_mb_body_gets_the_json_413_from_every_http_function(env, name, path):
    r = client(name).post(path, data=b'{"question": "' + b"x" * 20_000_000 + b'"}', content_type="application/json")
    assert r.status_code == 413 and r.mimetype == "application/json"
    assert r.get_json() == {
        "error": {"code": "request_entity_too_large", "message": "request body larger than 1000000 bytes"}
    }


def test_query_function_serves_the_page_and_its_routes(env):
    record = sample_manifest()["sh-0001"]
    put_object(
        env,
        "docs/sh-0001.md",
        (SAMPLE / record["file"]).read_bytes(),
        {k: v for k, v in record.items() if k not in ("file", "chars", "articles")},
    )
    assert post_event(client("ingest"), fixture_event("gcs_finalized", name="docs/sh-0001.md")).status_code == 200
    query = client("query")
    page = query.get("/")
    assert page.status_code == 200 and "text/html" in page.content_type and 'lang="zh-CN"' in page.get_data(True)
    assert query.get("/assets/app.js").status_code == 200
    assert query.get("/corpora").get_json()["corpora"][0]["corpus"] == "shanghai"
    doc = query.get("/documents/sh-0001").get_json()
    assert doc["metadata"]["title"] == "上海市供用电条例" and doc["anchors"]
    answer = query.post("/query", json={"question": "计划检修停电要提前几天通知用户？"}).get_json()
    feedback = query.post("/feedback", json={"query_id": answer["query_id"], "helpful": True})
    assert feedback.status_code == 200 and feedback.get_json()["status"] == "recorded"
    assert query.delete("/").status_code == 405


def test_query_rejects_unknown_candidates(env):
    r = client("compose").post("/", json={"question": "并网", "candidates": [{"id": "nope"}]})
    assert r.status_code == 404 and "unknown candidate" in r.get_json()["error"]["message"]
