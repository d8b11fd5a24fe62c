"""A question not in Chinese on the wire: the read path → QuestionTranslator → GeminiGenerator → the real
google-genai client → an HTTP fake of the Gemini API (tests/fakes/gemini_fake.py). No Google class is mocked; the
index is the local SQLite one with the hashing embedder, reranking off, so every request the fake sees is a
translation's."""

from __future__ import annotations

import json

import pytest

from fakes.gemini_fake import GeminiFake, Reply
from regrag.api import endpoints
from regrag.api.routes import call
from regrag.query.render import NOT_CHINESE_NOTE
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings

KEY = "test-gemini-key"
ENGLISH = "How many days in advance must a power supply company notify users before a planned maintenance outage?"
CHINESE = "供电企业因计划检修需要停电，应当提前几天通知用户？"
DOCS = ["nat-reg-0088", "sh-0001"]


@pytest.fixture
def fake():
    with GeminiFake() as server:
        yield server


@pytest.fixture
def services(tmp_path, fake):
    built = build_services(
        make_settings(
            tmp_path, gemini_api_key=KEY, gemini_base_url=fake.base_url, rerank=False, translate_timeout_s=0.5
        )
    )
    ingest_sample(built, DOCS)
    yield built
    built.close()


def translated(text: str) -> Reply:
    return Reply.text(json.dumps({"question_zh": text}, ensure_ascii=False))


def test_an_english_question_is_searched_in_chinese_and_the_answer_says_what_was_searched(services, fake):
    fake.push(translated(CHINESE))
    status, body = call(endpoints.query, services, {"question": ENGLISH})
    assert status == 200 and body["translation_status"] == "ok" and body["question_zh"] == CHINESE
    # the same quotes as the Chinese question, verbatim from the regulation, cited with their article
    _, reference = call(endpoints.query, services, {"question": CHINESE})
    assert reference["translation_status"] == "skipped" and "question_zh" not in reference
    assert body["bullets"] and body["bullets"] == reference["bullets"]
    assert any("已由模型译为中文后检索：「" + CHINESE + "」" in note for note in body["notes"])
    assert NOT_CHINESE_NOTE not in body["notes"] and CHINESE in body["answer_zh"]
    assert "translate" in body["timings_ms"]
    # one request, with the translate prompt, the question as JSON data and the answer's schema
    (request,) = fake.requests
    assert json.dumps(ENGLISH) in request.prompt and "译成中文" in request.system
    config = request.generation_config
    assert (config.get("responseMimeType") or config.get("response_mime_type")) == "application/json"


def test_a_translation_is_asked_once_per_question(services, fake):
    fake.default = translated(CHINESE)
    call(endpoints.query, services, {"question": ENGLISH})
    call(endpoints.query, services, {"question": f"  {ENGLISH} "})  # the same question, other whitespace
    assert len(fake.requests) == 1
    stats = endpoints.health(services)["caches"]["translate"]
    assert (stats["hits"], stats["misses"]) == (1, 1)


FAILURES = [
    ("timeout", Reply.slow(2.0), "fallback:timeout"),
    ("http-429", Reply.error(429, "Resource has been exhausted (e.g. check quota)."), "fallback:rate_limited"),
    ("http-500", Reply.error(500, "Internal error encountered."), "fallback:server_error"),
    ("prompt-blocked", Reply.prompt_blocked("SAFETY"), "fallback:blocked"),
    ("not-json", Reply.text("好的：供电企业应当提前几天通知？"), "fallback:invalid_json"),
    ("echoed-in-english", translated(ENGLISH), "fallback:invalid_output"),
    ("no-field", Reply.text(json.dumps({"answer": CHINESE}, ensure_ascii=False)), "fallback:invalid_output"),
]


@pytest.mark.parametrize(("reply", "expected"), [(r, s) for _, r, s in FAILURES], ids=[n for n, _, _ in FAILURES])
def test_a_failed_translation_searches_the_question_as_asked_with_the_note_asking_for_chinese(
    services, fake, reply, expected
):
    fake.push(reply)
    status, body = call(endpoints.query, services, {"question": ENGLISH})
    assert status == 200 and body["translation_status"] == expected and "question_zh" not in body
    assert NOT_CHINESE_NOTE in body["notes"]
    assert len(fake.requests) == 1  # one attempt, within its deadline
    # a failure is not cached: the next identical question asks again
    fake.push(translated(CHINESE))
    assert call(endpoints.query, services, {"question": ENGLISH})[1]["translation_status"] == "ok"


def test_a_chinese_question_or_translation_off_sends_nothing(tmp_path, fake, services):
    status, body = call(endpoints.query, services, {"question": CHINESE})
    assert status == 200 and body["translation_status"] == "skipped"
    off = build_services(
        make_settings(tmp_path, gemini_api_key=KEY, gemini_base_url=fake.base_url, rerank=False, translate=False)
    )
    try:
        status, body = call(endpoints.query, off, {"question": ENGLISH})
        assert status == 200 and body["translation_status"] == "skipped" and NOT_CHINESE_NOTE in body["notes"]
    finally:
        off.close()
    assert fake.requests == []


def test_without_gemini_no_translator_is_built(tmp_path):
    local = build_services(make_settings(tmp_path, rerank=False))
    try:
        assert local.translator is None and "translate" not in endpoints.health(local)["caches"]
    finally:
        local.close()
