"""Requests a hostile or careless client sends: each gets a specific JSON 4xx (never a 500 or an HTML page), and
the index answers the same question identically before and after."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from werkzeug.test import Client

from regrag.api.openapi import document
from regrag.api.routes import URL_MAP
from regrag.api.server import wsgi_app
from regrag.inputs import schemas

from conftest import ingest_sample

QUESTION = "供电企业因计划检修需要停电，应当提前几天通知用户？"
JSON = "application/json"


@pytest.fixture
def client(hash_services: Any) -> Client:
    ingest_sample(hash_services, ["nat-reg-0088", "nat-law-0069"])
    return Client(wsgi_app(hash_services))


def answer_of(client: Client) -> list[tuple[str, str]]:
    body = client.post("/query", json={"question": QUESTION}).get_json()
    return [(b["citation"]["doc_id"], b["span"]) for b in body["bullets"]]


def post(client: Client, path: str, data: bytes | str, content_type: str = JSON) -> Any:
    return client.post(path, data=data, content_type=content_type)


def assert_json_error(response: Any, status: int, words: str = "") -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    assert response.mimetype == JSON
    body = response.get_json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"])
    assert words in body["error"]["message"], body["error"]["message"]
    return body  # type: ignore[no-any-return]


DEEP = "[" * 10_000 + "]" * 10_000


@pytest.mark.parametrize("path", ["/query", "/rerank", "/compose", "/feedback"])
def test_deeply_nested_json_is_a_400(client: Client, path: str) -> None:
    assert_json_error(post(client, path, DEEP), 400)


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("/query", '{"question": "\\ud800"}', "unpaired surrogate"),
        ("/query", '{"question": "并网", "filters": {"province": "\\udfff"}}', "unpaired surrogate"),
        ("/feedback", '{"query_id": "%s", "helpful": true, "comment": "\\ud800"}' % ("0" * 32), "unpaired surrogate"),
        ("/feedback", '{"query_id": "%s", "helpful": true, "citation": {"doc_id": "\\ud800"}}' % ("0" * 32), ""),
        ("/query", '{"\\ud800": 1, "question": "并网"}', "unpaired surrogate"),
    ],
)
def test_lone_surrogates_are_a_400(client: Client, path: str, body: str, words: str) -> None:
    assert_json_error(post(client, path, body), 400, words)


def test_a_huge_url_is_a_json_414(client: Client) -> None:
    assert_json_error(client.get("/documents/" + "a" * 100_000), 414)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"question": QUESTION, "filter": {"province": "gd"}}, "unknown field 'filter'; did you mean 'filters'?"),
        ({"question": QUESTION, "top-k": 3}, "did you mean 'top_k'?"),
        ({"question": QUESTION, "corpora": ["national"] * 21}, "at most 20"),
        ({"question": QUESTION, "corpus_weights": {f"c{i}": 1 for i in range(21)}}, "at most 20"),
        ({"question": "问" * 2001}, "longer than 2000"),
        ({"question": QUESTION, "filters": {"doc_id": ["x" * 129]}}, "longer than 128"),
        ({"question": QUESTION, "top_k": True}, "top_k must be an integer"),
        ({"question": QUESTION, "corpus_timeout_s": float("nan")}, "NaN is not JSON"),
        ({"question": QUESTION, "corpus_weights": {"national": float("inf")}}, "Infinity is not JSON"),
    ],
)
def test_misspelt_and_oversized_query_fields_are_named(client: Client, body: dict[str, Any], words: str) -> None:
    assert_json_error(post(client, "/query", json.dumps(body, ensure_ascii=False)), 400, words)


def test_candidate_lists_are_bounded_and_duplicates_count_once(client: Client) -> None:
    ids = [c["id"] for c in client.post("/query", json={"question": QUESTION}).get_json()["candidates"]]
    many = {"question": QUESTION, "candidates": [{"id": ids[0]}] * 25_000}
    assert_json_error(client.post("/rerank", json=many), 400, "at most 100")
    twice = client.post("/rerank", json={"question": QUESTION, "candidates": [ids[0], ids[0], ids[1]]})
    assert twice.status_code == 200 and [c["id"] for c in twice.get_json()["candidates"]] == ids[:2]


def test_feedback_fields_are_bounded(client: Client) -> None:
    qid = client.post("/query", json={"question": QUESTION}).get_json()["query_id"]
    long_id = {"query_id": qid, "helpful": True, "citation": {"doc_id": "x" * 900_000}}
    assert_json_error(client.post("/feedback", json=long_id), 400, "longer than 128")


def test_a_body_over_the_limit_is_refused_before_it_is_read(client: Client) -> None:
    response = post(client, "/query", b"{" + b" " * 2_000_000 + b"}")
    assert_json_error(response, 413)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_json_endpoints_require_a_json_content_type(client: Client, content_type: str) -> None:
    body = json.dumps({"question": QUESTION})
    assert_json_error(post(client, "/query", body, content_type), 415, "Content-Type: application/json")
    qid = "0" * 32
    assert_json_error(post(client, "/feedback", json.dumps({"query_id": qid, "helpful": True}), content_type), 415)


def test_other_origins_get_no_cors_headers_unless_allowed(hash_services: Any, tmp_path: Any) -> None:
    from dataclasses import replace

    ingest_sample(hash_services, ["nat-reg-0088"])
    closed = Client(wsgi_app(hash_services))
    evil = {"Origin": "https://evil.example"}
    assert "Access-Control-Allow-Origin" not in closed.options("/query", headers=evil).headers
    assert "Access-Control-Allow-Origin" not in closed.post("/query", json={"question": QUESTION}, headers=evil).headers
    settings = replace(hash_services.settings, cors_origins="https://regrag.example.com")
    opened = Client(wsgi_app(replace(hash_services, settings=settings)))
    good = {"Origin": "https://regrag.example.com"}
    preflight = opened.options("/query", headers=good)
    assert preflight.status_code == 204 and preflight.headers["Access-Control-Allow-Origin"] == good["Origin"]
    assert "Content-Type" in preflight.headers["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Origin" not in opened.options("/query", headers=evil).headers


def test_the_index_answers_the_same_after_every_hostile_request(client: Client) -> None:
    before = answer_of(client)
    for path in ("/query", "/rerank", "/compose", "/feedback"):
        post(client, path, DEEP)
        post(client, path, '{"question": "\\ud800"}')
        post(client, path, "{not json")
    client.get("/documents/" + "a" * 100_000)
    assert answer_of(client) == before and before


def test_openapi_document_is_served_and_covers_every_route(client: Client) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    doc = response.get_json()
    assert doc["openapi"] == "3.1.0" and doc == json.loads(json.dumps(document()))
    published = {path for path in doc["paths"]}
    routed = {re.sub(r"<(\w+)>", r"{\1}", rule.rule) for rule in URL_MAP.iter_rules()}
    # / is the query function's own root and the page; /assets are the page's files
    assert routed - published == {"/", "/assets/{name}"}
    assert doc["components"]["schemas"]["QueryRequest"] is not None
    assert doc["components"]["schemas"]["QueryRequest"]["properties"]["top_k"]["maximum"] == schemas.MAX_TOP_K
