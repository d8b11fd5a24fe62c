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


# --- the real server: what waitress refuses before the routes see the request ---------------------------------


@pytest.fixture
def served(hash_services: Any) -> Any:
    """`regrag serve`'s waitress server on a free port, in a thread; yields its port."""
    import threading
    from dataclasses import replace

    from regrag.api.server import create_server

    settings = replace(hash_services.settings, cors_origins="https://regrag.example.com")
    server = create_server(replace(hash_services, settings=settings), "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield server.effective_port
    server.close()
    thread.join(5)


def raw_request(port: int, head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send a request's head (and the start of its body) on a socket; the status, headers and body answered."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode("latin-1") + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head_bytes, _, payload = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head_bytes.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in header_lines)}
    return int(status_line.split()[1]), headers, payload


def test_the_server_refuses_a_20_mb_body_with_the_json_error(served: int) -> None:
    """A client that sends the whole body before it reads (Python's http.client) reads the JSON answer: the
    server drains what it refused instead of resetting the connection."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", served, timeout=30)
    headers = {"Content-Type": JSON, "Origin": "https://regrag.example.com"}
    connection.request("POST", "/query", body=b'{"question": "' + b"x" * 20_000_000 + b'"}', headers=headers)
    response = connection.getresponse()
    assert response.status == 413 and response.getheader("Content-Type") == JSON
    assert json.loads(response.read()) == {
        "error": {"code": "request_entity_too_large", "message": "request body larger than 1000000 bytes"}
    }
    assert response.getheader("Access-Control-Allow-Origin") == "https://regrag.example.com"  # the page reads it
    assert response.getheader("Connection") == "close"


def test_the_body_is_refused_from_its_content_length_before_it_arrives(served: int) -> None:
    head = "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n"
    status, headers, body = raw_request(served, head, b'{"question": "' + b"x" * 1000)
    assert status == 413 and headers["content-type"] == JSON
    assert json.loads(body)["error"]["code"] == "request_entity_too_large"


def test_the_server_refuses_a_chunked_body_over_the_limit_in_json(served: int) -> None:
    chunk = b"x" * 400_000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(4)) + b"0\r\n\r\n"
    head = "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    status, headers, payload = raw_request(served, head, body)
    assert status == 413 and headers["content-type"] == JSON
    assert json.loads(payload)["error"]["code"] == "request_entity_too_large"


def test_the_server_answers_malformed_http_and_huge_headers_in_json(served: int) -> None:
    status, headers, payload = raw_request(served, "POST /query HTTP/1.1\r\nContent-Length: x\r\n\r\n")
    assert status == 400 and headers["content-type"] == JSON and json.loads(payload)["error"]["message"]
    huge = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + "a" * 300_000 + "\r\n\r\n"
    status, headers, payload = raw_request(served, huge)
    assert status == 431 and json.loads(payload)["error"]["code"] == "request_header_fields_too_large"
    # and the server still answers
    status, _, payload = raw_request(served, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status == 200 and json.loads(payload)


def test_a_document_for_the_citation_check_may_be_larger_than_a_question(served: int) -> None:
    """Each route has its own body limit, applied from the headers: 1 MB for a question, the check's own limit
    (REGRAG_CHECK_MAX_BYTES) for a document to check."""
    head = (
        "POST /check HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
        "Content-Length: {n}\r\n\r\n"
    )
    body = json.dumps({"text": "依《电力法》第一条。" + " " * 1_200_000}).encode()
    status, headers, payload = raw_request(served, head.format(n=len(body)), body)
    assert status != 413 and headers["content-type"] == JSON, payload[:200]
