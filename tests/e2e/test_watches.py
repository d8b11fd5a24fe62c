"""Watches end to end on the local adapters (hash embedder): a watch made through the API, a version of the sample
corpus's chains ingested through ingest → embed → upsert, the alert read back through GET /alerts (JSON and Atom)
and seen on the alerts topic; redelivered messages add nothing; bad input gets a clear 4xx."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from typing import Any

import pytest
from werkzeug.test import Client

from regrag.api.server import wsgi_app
from regrag.domain.messages import ChunksEmbedded, split_for_publish
from regrag.entrypoints import handlers
from regrag.ingest import upsert as upsert_stage
from regrag.ops import watches as watch_stage
from regrag.services import Services
from regrag.views.version_diff import articles_of
from regrag.wiring import build_services

from conftest import SAMPLE, ingest_sample, make_settings, sample_manifest, upload

MINING_2009, MINING_2024 = "nat-law-0072", "nat-law-0073"  # 矿产资源法: 第三条 split, its first lines now 第四条
OZONE_2018, OZONE_2023 = "nat-reg-0079", "nat-reg-0080"  # 消耗臭氧层物质管理条例: 第二条 rewritten in place
NOISE_2018, NOISE_2022 = "nat-law-0067", "nat-law-0018"  # 环境噪声污染防治法 repealed by 噪声污染防治法
ATOM = "{http://www.w3.org/2005/Atom}"


class Recorder:
    """Subscribes to a topic of the in-process bus and keeps what it carries."""

    def __init__(self, services: Services, topic: str) -> None:
        self.messages: list[tuple[dict[str, Any], dict[str, str]]] = []
        assert services.bus is not None
        services.bus.subscribe(topic, lambda payload, attrs: self.messages.append((payload, dict(attrs))))


@pytest.fixture
def services(tmp_path):
    built = build_services(make_settings(tmp_path))
    yield built
    built.close()


@pytest.fixture
def client(services):
    return Client(wsgi_app(services))


def watch(client: Client, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    response = client.post("/watches", json=body)
    assert response.status_code == status, response.get_json()
    return response.get_json()


def alerts(client: Client, **params: str) -> list[dict[str, Any]]:
    response = client.get("/alerts", query_string=params)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["alerts"]


def article_text(services: Services, doc_id: str, label: str) -> str:
    return next(a.text for a in articles_of(services.store.document_chunks(doc_id)) if a.label == label)


def test_an_article_watch_gets_one_alert_with_the_diff_and_dates_when_the_next_version_arrives(services, client):
    ingest_sample(services, [OZONE_2018, "nat-reg-0088"])
    sent = Recorder(services, services.settings.topic_alerts)
    made = watch(client, {"doc_id": OZONE_2018, "article": "第2条", "owner": "lawyer@example.com"})
    assert made["created"] is True and made["watch"]["article"] == "第二条"  # 第2条 is read as 第二条
    assert made["version"]["status"] == "in_force"
    old_text = article_text(services, OZONE_2018, "第二条")
    embedded = Recorder(services, services.settings.topic_embedded)

    ingest_sample(services, [OZONE_2023])

    [alert] = alerts(client)
    old, new = (services.store.get_document(d)[0] for d in (OZONE_2018, OZONE_2023))
    assert alert["watch_id"] == made["watch_id"] and alert["kind"] == "article_changed"
    assert (alert["doc_id"], alert["successor_id"]) == (OZONE_2018, OZONE_2023)
    diff = alert["diff"]
    assert diff["change"] == "changed" and diff["article"] == "第二条"
    assert diff["old"] == {"article": "第二条", "text": old_text}
    assert diff["new"] == {"article": "第二条", "text": article_text(services, OZONE_2023, "第二条")}
    assert "并列入" in diff["old"]["text"] and "是指列入" in diff["new"]["text"]  # the words that changed
    dates = alert["dates"]
    assert (
        dates["watched"]["effective_from"] == old.effective_date
        and dates["watched"]["effective_to"] == new.effective_date
    )
    assert (
        dates["current"]["effective_from"] == new.effective_date and dates["current"]["promulgated"] == new.promulgated
    )
    assert dates["entry_into_force"] == new.effective_date and dates["in_force"] is True
    assert "第二条在新版本中有修改" in alert["message"] and alert["owner"] == "lawyer@example.com"
    assert alert["link"].endswith(f"?doc={OZONE_2023}&article=%E7%AC%AC%E4%BA%8C%E6%9D%A1")
    # on the alerts topic once, with the attributes a subscription filters on
    [(payload, attrs)] = sent.messages
    assert payload["kind"] == "AlertRecorded" and payload["alert"]["alert_id"] == alert["alert_id"]
    assert attrs == {
        "kind": "article_changed",
        "alert_id": alert["alert_id"],
        "watch_id": made["watch_id"],
        "doc_id": OZONE_2018,
        "owner": "lawyer@example.com",
    }
    # the watch now follows the new version's article
    [listed] = client.get("/watches").get_json()["watches"]
    assert listed["following"] == {"doc_id": OZONE_2023, "article": "第二条"}

    # every message of the ingest delivered again: nothing new anywhere
    assert embedded.messages
    for payload, attrs in embedded.messages:
        handlers.upsert_message(services, payload, attrs)
    assert len(alerts(client)) == 1 and len(sent.messages) == 1
    assert services.failures.list() == []


def test_watching_an_article_already_replaced_is_told_at_once_and_follows_the_version_in_force(services, client):
    """An article quoted from an answer as of a past day, of a version superseded since: the alert its successor's
    ingest would have made is made when the watch is, not at some later ingest."""
    ingest_sample(services, [OZONE_2018, OZONE_2023])
    made = watch(client, {"doc_id": OZONE_2018, "article": "第二条"})
    [told] = made["alerts"]
    assert told["kind"] == "article_changed" and told["successor_id"] == OZONE_2023
    assert [a["alert_id"] for a in alerts(client)] == [told["alert_id"]]
    assert made["watch"]["following"] == {"doc_id": OZONE_2023, "article": "第二条"}
    assert made["version"] == {"doc_id": OZONE_2023, "status": "in_force", "successor": None, "note": None}
    # the same watch again: nothing more to tell
    again = watch(client, {"doc_id": OZONE_2018, "article": "第二条"}, status=200)
    assert again["alerts"] == [] and len(alerts(client)) == 1
    # a watch on the version in force has nothing to be told
    current = watch(client, {"doc_id": OZONE_2023, "article": "第二条"})
    assert current["alerts"] == [] and current["version"]["status"] == "in_force"


def test_a_split_article_is_followed_to_where_its_words_went(services, client):
    ingest_sample(services, [MINING_2009])
    made = watch(client, {"doc_id": MINING_2009, "article": "第三条"})
    ingest_sample(services, [MINING_2024])
    [alert] = alerts(client)
    diff = alert["diff"]
    assert alert["kind"] == "article_changed" and diff["change"] == "removed" and diff["new"] is None
    assert [r["article"] for r in diff["related"]][:1] == ["第四条"]
    assert "矿产资源属于国家所有" in diff["related"][0]["text"]
    assert "其内容见于新版本第四条" in alert["message"]
    assert (
        alert["dates"]["current"]["promulgated"] == "2024-11-08" and alert["dates"]["entry_into_force"] == "2025-07-01"
    )
    following = client.get("/watches").get_json()["watches"][0]["following"]
    assert (
        following == {"doc_id": MINING_2024, "article": "第四条"} and made["watch"]["following"]["article"] == "第三条"
    )


def test_a_document_watch_is_told_of_a_new_version_and_of_a_repeal_by_another_text(services, client):
    ingest_sample(services, [MINING_2009, NOISE_2018])
    mining = watch(client, {"doc_id": MINING_2009})["watch_id"]
    noise = watch(client, {"doc_id": NOISE_2018})["watch_id"]
    ingest_sample(services, [MINING_2024, NOISE_2022])
    by_watch = {a["watch_id"]: a for a in alerts(client)}
    assert set(by_watch) == {mining, noise}
    assert by_watch[mining]["kind"] == "new_version" and by_watch[mining]["successor_id"] == MINING_2024
    summary = by_watch[mining]["diff"]["summary"]
    assert summary["added"] > 0 and len(by_watch[mining]["diff"]["articles"]) == sum(
        n for k, n in summary.items() if k != "unchanged"
    )
    repeal = by_watch[noise]
    assert repeal["kind"] == "repealed" and repeal["successor_id"] == NOISE_2022
    assert "已被《中华人民共和国噪声污染防治法》" in repeal["message"]
    assert repeal["dates"]["entry_into_force"] == "2022-06-05"  # 自2022年6月5日起施行


def test_a_saved_question_is_told_once_when_the_articles_it_cites_change(services, client):
    ingest_sample(services, [MINING_2009, "nat-reg-0088"])
    made = watch(client, {"question": "矿产资源属于谁所有？", "filters": {"province": ["national"]}})
    assert {c["doc_id"] for c in made["watch"]["cited"]} == {MINING_2009}
    embedded = Recorder(services, services.settings.topic_embedded)
    ingest_sample(services, [MINING_2024])
    [alert] = alerts(client)
    assert alert["kind"] == "question_changed" and alert["doc_id"] == MINING_2024
    assert alert["diff"]["question"] == "矿产资源属于谁所有？"
    assert {c["doc_id"] for c in alert["diff"]["added"]} == {MINING_2024}
    assert {c["doc_id"] for c in alert["diff"]["removed"]} == {MINING_2009}
    assert all(c["marker"].startswith("〔《中华人民共和国矿产资源法》") for c in alert["diff"]["added"])
    assert alert["link"].startswith("http://localhost/?q=") and "province=national" in alert["link"]
    for payload, attrs in embedded.messages:
        handlers.upsert_message(services, payload, attrs)
    ingest_sample(services, ["nat-reg-0091"])  # a document that changes nothing for it
    assert len(alerts(client)) == 1
    # a saved question is not a user's question: the query log holds none
    assert services.feedback is not None and services.feedback.list_feedback() == []


def test_saved_questions_left_by_the_upsert_stage_are_asked_by_the_scheduled_check(tmp_path):
    services = build_services(make_settings(tmp_path, watch_max_reasks=0))
    try:
        ingest_sample(services, [MINING_2009])
        client = Client(wsgi_app(services))
        watch(client, {"question": "矿产资源属于谁所有？"})
        ingest_sample(services, [MINING_2024])
        assert alerts(client) == []
        assert watch_stage.check_all(services).to_dict() == {
            "watches": 1,
            "alerts": 1,
            "by_kind": {"question_changed": 1},
        }
        assert watch_stage.check_all(services).alerts == 0  # the baseline moved: checked again, nothing new
        assert [a["kind"] for a in alerts(client)] == ["question_changed"]
    finally:
        services.close()


def test_an_article_replaced_in_place_is_compared_with_the_text_watched(services, client):
    ingest_sample(services, ["nat-reg-0088"])
    watched = watch(client, {"doc_id": "nat-reg-0088", "article": "第二十八条"})["watch_id"]
    other = watch(client, {"doc_id": "nat-reg-0088", "article": "第二十九条"})["watch_id"]
    record = sample_manifest()["nat-reg-0088"]
    text = (SAMPLE / record["file"]).read_text(encoding="utf-8").replace("应当提前7天通知用户", "应当提前5天通知用户")
    sidecar = {k: v for k, v in record.items() if k not in ("file", "chars", "articles")}
    assert upload(services, text.encode("utf-8"), record["file"], sidecar).status == "chunked"
    [alert] = alerts(client)
    assert alert["watch_id"] == watched and alert["kind"] == "article_changed" and alert["successor_id"] is None
    assert "提前7天" in alert["diff"]["old"]["text"] and "提前5天" in alert["diff"]["new"]["text"]
    assert "同一版本的文本已重新导入" in alert["message"]
    assert alerts(client, watch_id=other) == []


def test_a_document_split_over_several_messages_is_compared_once_every_part_is_stored(services, client, tmp_path):
    # the next version's embedded message, captured where it was made (another data dir, the same model)
    elsewhere = build_services(make_settings(tmp_path / "elsewhere"))
    try:
        embedded = Recorder(elsewhere, elsewhere.settings.topic_embedded)
        ingest_sample(elsewhere, [OZONE_2023])
        [(payload, _)] = embedded.messages
    finally:
        elsewhere.close()
    ingest_sample(services, [OZONE_2018])
    watch(client, {"doc_id": OZONE_2018, "article": "第二条"})
    parts = split_for_publish(ChunksEmbedded.from_json(payload), max_bytes=len(json.dumps(payload)) // 3)
    assert len(parts) == 4
    seen = []
    for part in reversed(parts):  # parts arrive in any order; the first one carries the end of the text
        upsert_stage.upsert_chunks(
            part, store=services.store, vectors=services.vectors, lexical=services.lexical,
            watching=watch_stage.watching(services),
        )  # fmt: skip
        seen.append(len(alerts(client)))
    assert seen == [0, 0, 0, 1]
    [alert] = alerts(client)
    assert alert["diff"]["new"]["text"] == article_text(services, OZONE_2023, "第二条")


def test_the_alerts_feed_is_atom_for_readers_that_ask_for_it(services, client):
    ingest_sample(services, [OZONE_2018])
    watch(client, {"doc_id": OZONE_2018, "article": "第二条"})
    ingest_sample(services, [OZONE_2023])
    [alert] = alerts(client)
    for response in (
        client.get("/alerts", query_string={"format": "atom"}),
        client.get("/alerts", headers={"Accept": "application/atom+xml"}),
    ):
        assert response.status_code == 200 and response.mimetype == "application/atom+xml"
        feed = ET.fromstring(response.data)
        [entry] = feed.findall(f"{ATOM}entry")
        assert entry.findtext(f"{ATOM}id") == f"urn:regrag:alert:{alert['alert_id']}"
        assert entry.findtext(f"{ATOM}title") == alert["message"]
        assert entry.find(f"{ATOM}link").get("href") == alert["link"]
        assert entry.find(f"{ATOM}category").get("term") == "article_changed"
        content = entry.findtext(f"{ATOM}content")
        assert alert["diff"]["old"]["text"] in content and alert["diff"]["new"]["text"] in content
    assert client.get("/alerts", headers={"Accept": "application/json"}).mimetype == "application/json"


def test_watches_are_listed_made_once_and_removed(services, client):
    ingest_sample(services, [OZONE_2018])
    first = watch(client, {"doc_id": OZONE_2018})
    again = watch(client, {"doc_id": OZONE_2018}, status=200)
    assert again["created"] is False and again["watch_id"] == first["watch_id"]
    other_owner = watch(client, {"doc_id": OZONE_2018, "owner": "team@example.com"})
    assert other_owner["watch_id"] != first["watch_id"]
    assert len(client.get("/watches").get_json()["watches"]) == 2
    removed = client.delete(f"/watches/{first['watch_id']}")
    assert removed.status_code == 200 and removed.get_json() == {"watch_id": first["watch_id"], "removed": True}
    assert client.delete(f"/watches/{first['watch_id']}").status_code == 404
    assert [w["watch_id"] for w in client.get("/watches").get_json()["watches"]] == [other_owner["watch_id"]]


@pytest.mark.parametrize(
    ("body", "status", "code", "words"),
    [
        ({"doc_id": "no-such-doc"}, 404, "unknown_document", "no document 'no-such-doc'"),
        ({"doc_id": OZONE_2018, "article": "第九十九条"}, 404, "unknown_article", "has no article '第九十九条'"),
        ({"doc_id": OZONE_2018, "article": "附件三"}, 404, "unknown_article", "第一条至第"),
        ({"doc_id": "../etc/passwd"}, 400, "invalid_input", "not a valid document id"),
        ({}, 400, "invalid_input", "either doc_id"),
        ({"doc_id": OZONE_2018, "question": "臭氧层？"}, 400, "invalid_input", "either doc_id"),
        ({"question": "臭氧层？", "article": "第二条"}, 400, "invalid_input", "article belongs to a document watch"),
        ({"doc_id": OZONE_2018, "filters": {"province": ["sd"]}}, 400, "invalid_input", "filters belong"),
        ({"question": "臭氧层？", "filters": {"province": ["xx"]}}, 400, "invalid_input", "unknown value"),
        ({"doc_id": OZONE_2018, "artcle": "第二条"}, 400, "invalid_input", "did you mean 'article'"),
        ({"question": ""}, 400, "invalid_input", "non-empty"),
    ],
)
def test_bad_watches_get_a_clear_4xx(services, client, body, status, code, words):
    ingest_sample(services, [OZONE_2018])
    response = client.post("/watches", json=body)
    error = response.get_json()["error"]
    assert response.status_code == status and error["code"] == code and words in error["message"], error
    if code == "unknown_article":
        assert error["articles"] == len(articles_of(services.store.document_chunks(OZONE_2018)))
    assert client.get("/watches").get_json()["watches"] == []


def test_bad_alert_queries_get_a_400_that_names_the_parameter(services, client):
    for params, words in [
        ({"since": "yesterday"}, "since"),
        ({"limit": "0"}, "limit"),
        ({"limit": "20000"}, "limit"),
        ({"watch_id": "x"}, "watch_id"),
        ({"format": "rss"}, "format"),
        ({"sort": "asc"}, "unknown field 'sort'"),
    ]:
        response = client.get("/alerts", query_string=params)
        assert response.status_code == 400 and words in response.get_json()["error"]["message"], params
    assert client.get("/alerts", query_string={"since": "2026-01-01T08:00:00Z", "limit": "5"}).status_code == 200
    assert client.delete("/watches/not-a-watch-id").status_code == 404


def test_a_question_watch_needs_an_index_to_ask(services, client):
    response = client.post("/watches", json={"question": "矿产资源属于谁所有？"})
    assert response.status_code == 400 and "ingest some first" in response.get_json()["error"]["message"]


def test_the_scheduled_check_needs_an_admin(services, client):
    assert client.post("/admin/watches/check").status_code == 403  # no admin token configured: no admin
    admin = Client(wsgi_app(replace(services, settings=replace(services.settings, admin_token="s3cret"))))
    assert admin.post("/admin/watches/check").status_code == 401
    assert admin.post("/admin/watches/check", headers={"Authorization": "Bearer nope"}).status_code == 403
    ok = admin.post("/admin/watches/check", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and ok.get_json() == {"watches": 0, "alerts": 0, "by_kind": {}}


def test_regrag_ingest_asks_each_saved_question_once_after_its_batch(tmp_path, monkeypatch, capsys):
    from test_cli import make_corpus

    from regrag.entrypoints.cli import main
    from regrag.ingest import alerts as alerts_stage

    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    assert main(["ingest", str(make_corpus(tmp_path / "first", {MINING_2009, "nat-reg-0088"}))]) == 0
    assert main(["watch", "add", "--question", "矿产资源属于谁所有？"]) == 0
    assert main(["watch", "add", MINING_2009, "--article", "第三条"]) == 0
    capsys.readouterr()
    asked: list[str] = []
    real = alerts_stage.compare_answer
    monkeypatch.setattr(alerts_stage, "compare_answer", lambda w, *a: asked.append(w.watch_id) or real(w, *a))
    # two documents that could change its answer, in one batch: the question is asked once, after both
    assert main(["ingest", str(make_corpus(tmp_path / "next", {MINING_2024, "nat-law-0015"}))]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert len(asked) == 1 and summary["question_alerts"] == 1
    assert main(["alerts", "--json"]) == 0
    kinds = sorted(a["kind"] for a in json.loads(capsys.readouterr().out)["alerts"])
    assert kinds == ["article_changed", "question_changed"]


def test_a_watch_left_behind_by_a_killed_upsert_is_named_by_doctor_and_told_by_the_check(services, client, monkeypatch):
    """The upsert stage tells watches after the document's transaction commits: a process killed in between
    stores the new version and tells nobody. Doctor says so; the check of every watch tells it once."""
    from regrag.ops.doctor import run_checks

    ingest_sample(services, [OZONE_2018])
    made = watch(client, {"doc_id": OZONE_2018, "article": "第二条"})
    [before] = [c for c in run_checks(services) if c.name == "watches"]
    assert before.ok and before.warnings == () and "1 watches, 1 up to date" in before.detail
    with monkeypatch.context() as killed:
        killed.setattr(upsert_stage.alerts, "record_changes", lambda *args, **kwargs: [])  # dies right after commit
        ingest_sample(services, [OZONE_2023])
    assert alerts(client) == []
    [behind] = [c for c in run_checks(services) if c.name == "watches"]
    assert behind.ok and "0 up to date" in behind.detail  # a warning: nothing is lost, the check catches up
    assert behind.warnings and made["watch_id"] in behind.warnings[0] and "regrag watch check" in behind.warnings[0]
    assert watch_stage.check_all(services).alerts == 1
    assert [a["kind"] for a in alerts(client)] == ["article_changed"]
    [after] = [c for c in run_checks(services) if c.name == "watches"]
    assert after.warnings == ()
