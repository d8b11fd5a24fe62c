"""The rerank and query Cloud Functions with Gemini configured from the environment, as deployed: the real
google-genai client talks to the HTTP fake of the Gemini API (tests/fakes/gemini_fake.py)."""

from __future__ import annotations

import pytest
from functions_framework import create_app

from fakes.gemini_fake import GeminiFake, Reply
from fakes.rerank_model import prefer_last, prompt_candidates
from regrag.api import endpoints
from regrag.api.endpoints import retrieve_relevant_chunks
from regrag.wiring import get_services

from conftest import ROOT, ingest_sample

FUNCTIONS = ROOT / "functions"
QUESTION = "计划检修停电要提前几天通知用户？"


def client(name):
    return create_app(target=name, source=str(FUNCTIONS / name / "main.py")).test_client()


@pytest.fixture
def fake():
    with GeminiFake() as server:
        yield server


@pytest.fixture
def env(monkeypatch, tmp_path, fake):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GEMINI_API_KEY", "function-test-key")
    monkeypatch.setenv("REGRAG_GEMINI_BASE_URL", fake.base_url)
    ingest_sample(get_services(), ["nat-reg-0088"])
    return tmp_path


def test_rerank_function_orders_by_gemini_scores(env, fake):
    assert endpoints.health(get_services())["rerank"] == "gemini"
    found = retrieve_relevant_chunks(get_services().retriever, QUESTION, top_k=8)
    assert len(found) == 8
    fake.push(Reply.computed(prefer_last))
    r = client("rerank").post(
        "/", json={"question": QUESTION, "candidates": [{"id": c["id"]} for c in found], "top_n": 3}
    )
    assert r.status_code == 200
    body = r.get_json()
    assert body["rerank_status"] == "ok"
    order = [c["id"] for c in found]
    # prefer_last scores index 8 → 10 and index 7 → 5, the rest 1: top 3 = 8, 7, 1; then 2–6 in retrieval order
    assert [c["id"] for c in body["candidates"]] == [order[7], order[6], order[0], *order[1:6]]
    scores = [c["metadata"]["rerank_score"] for c in body["candidates"]]
    assert scores == [10.0, 5.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert body["candidates"][0]["metadata"]["rerank_reason"] == "测试"
    (req,) = fake.requests
    assert req.headers["x-goog-api-key"] == "function-test-key"
    assert [c["text"] for c in prompt_candidates(req)] == [c["chunk_text"][:300] for c in found]


def test_query_function_carries_rerank_status_and_scores(env, fake):
    fake.push(Reply.computed(prefer_last))
    q = client("query").post("/", json={"question": QUESTION, "filters": {"doc_class": "grid"}})
    assert q.status_code == 200
    body = q.get_json()
    assert body["rerank_status"] == "ok"
    shown = prompt_candidates(fake.requests[0])
    n = len(shown)
    assert n > 5 and len(body["candidates"]) == n
    first, second = body["candidates"][:2]
    assert first["text"][:300] == shown[-1]["text"] and first["metadata"]["rerank_score"] == 10.0
    assert second["text"][:300] == shown[-2]["text"] and second["metadata"]["rerank_score"] == 5.0
    assert all(c["metadata"]["rerank_score"] == 1.0 for c in body["candidates"][2:])
    assert body["answer_zh"] and "rerank" in body["timings_ms"]


def test_query_function_falls_back_to_the_retrieval_order_when_gemini_fails(env, fake):
    fake.push(Reply.error(503, "The model is overloaded. Please try again later."))
    q = client("query").post("/", json={"question": QUESTION, "filters": {"doc_class": "grid"}})
    assert q.status_code == 200
    body = q.get_json()
    assert body["rerank_status"] == "fallback:server_error"
    shown = prompt_candidates(fake.requests[0])
    assert [c["text"][:300] for c in body["candidates"]] == [c["text"] for c in shown]
    assert all(c["metadata"]["rerank_score"] is None for c in body["candidates"])
    assert body["bullets"]  # the answer is still composed, from the retrieval order
