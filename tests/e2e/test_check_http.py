"""POST /check over HTTP: JSON and uploads (.md, .txt, .docx, .pdf), and bad input: each a clear JSON answer."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from werkzeug.test import Client

from regrag.api.openapi import document
from regrag.api.server import wsgi_app

from conftest import FORMATS, ingest_sample

MEMO = "日期：2025年9月3日\n\n依《中华人民共和国电力法》第十条，规划应当纳入。《电力法》第九十九条另有规定。\n"


@pytest.fixture
def client(hash_services: Any) -> Client:
    ingest_sample(hash_services, ["nat-law-0069", "nat-reg-0088"])
    return Client(wsgi_app(hash_services))


def upload(client: Client, name: str, data: bytes, **form: str) -> Any:
    return client.post("/check", data={"file": (io.BytesIO(data), name), **form}, content_type="multipart/form-data")


def error(response: Any, status: int, words: str = "") -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    body = response.get_json()
    assert set(body) == {"error"} and words in body["error"]["message"], body
    return body["error"]  # type: ignore[no-any-return]


def test_json_text_is_checked_as_of_its_date(client):
    body = client.post("/check", json={"text": MEMO}).get_json()
    assert body["as_of"] == "2025-09-03" and body["as_of_source"] == "document"
    assert [(c["text"], c["status"]) for c in body["citations"]] == [
        ("《中华人民共和国电力法》第十条", "ok"),
        ("《电力法》第九十九条", "article_missing"),
    ]
    assert body["summary"]["problems"] == 1 and body["document"]["format"] == "text"
    body = client.post("/check", json={"text": MEMO, "as_of": "2020-01-01"}).get_json()
    assert body["as_of"] == "2020-01-01" and body["as_of_source"] == "request"


def test_uploads_return_their_text_and_offsets_into_it(client):
    for name in ("memo.md", "memo.txt"):
        body = upload(client, name, MEMO.encode("utf-8")).get_json()
        assert body["document"]["name"] == name and body["document"]["text"] == MEMO
        assert [c["status"] for c in body["citations"]] == ["ok", "article_missing"]
    gb = upload(client, "memo.txt", MEMO.encode("gb18030"), as_of="2024-01-01").get_json()
    assert gb["as_of"] == "2024-01-01" and len(gb["citations"]) == 2
    docx = upload(client, "nat-law-0015.docx", (FORMATS / "nat-law-0015.docx").read_bytes()).get_json()
    assert docx["document"]["format"] == "docx" and docx["document"]["chars"] > 1000
    pdf = upload(client, "nat-law-0069.pdf", (FORMATS / "nat-law-0069.pdf").read_bytes()).get_json()
    assert pdf["document"]["format"] == "pdf"
    for c in pdf["citations"]:
        assert pdf["document"]["text"][c["start"] : c["end"]] == c["text"]


def test_a_document_with_no_citation_is_an_empty_list(client):
    body = client.post("/check", json={"text": "本合同第三条约定的价款，应于十日内付清。"}).get_json()
    assert body["citations"] == [] and body["summary"]["citations"] == 0
    assert upload(client, "empty-of-citations.md", "没有引用。".encode()).get_json()["citations"] == []


def test_a_50_mb_upload_is_refused_before_it_is_read(client):
    response = upload(client, "huge.pdf", b"%PDF-1.7\n" + b"0" * 50_000_000)
    assert error(response, 413, "REGRAG_CHECK_MAX_BYTES")["code"] == "request_entity_too_large"
    big_json = json.dumps({"text": "法" * 7_000_000})  # 21 MB of UTF-8
    assert client.post("/check", data=big_json, content_type="application/json").status_code == 413


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("memo.txt", bytes(range(256)) * 40, "binary"),
        ("memo.pdf", b"not a pdf at all", "not a PDF"),
        ("memo.exe", b"MZ\x90\x00", "unsupported file type"),
        ("scan.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "PNG"),
        ("memo.md", b"", "empty"),
    ],
)
def test_unreadable_uploads_are_400s_that_say_why(client, name, data, words):
    error(upload(client, name, data), 400, words)


def test_malformed_requests(client):
    error(client.post("/check", json={}), 400, "text")
    error(client.post("/check", json={"text": "x", "as_of": "2024-13-01"}), 400, "as_of")
    error(client.post("/check", json={"text": "x", "extra": 1}), 400, "extra")
    error(client.post("/check", data={"other": "x"}, content_type="multipart/form-data"), 400, "file")
    error(upload(client, "memo.md", b"x", as_of="yesterday"), 400, "as_of")
    error(client.post("/check", data="text", content_type="text/plain"), 415)


def test_openapi_describes_check():
    post = document()["paths"]["/check"]["post"]
    content = post["requestBody"]["content"]
    assert set(content) == {"application/json", "multipart/form-data"}
    statuses = document()["components"]["schemas"]["CheckResponse"]["properties"]["citations"]["items"]
    assert "quote_mismatch" in statuses["properties"]["status"]["enum"]
    assert {"400", "413", "415"} <= set(post["responses"])
