"""Operating it: feedback, admin endpoints behind a token, scheduled eval with regression alerts, caches,
structure-aware context and cross-references."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from regrag.api import endpoints
from regrag.api.routes import call
from regrag.ops.feedback import export_questions
from regrag.wiring import build_services

from conftest import admin_call, ingest_sample, make_settings

QUESTION = "供电企业因计划检修需要停电，应当提前几天通知用户？"


@pytest.fixture
def services(tmp_path):
    services = build_services(make_settings(tmp_path, admin_token="s3cret-token"))
    ingest_sample(services, ["nat-reg-0088", "nat-law-0069", "sh-0001"])
    yield services
    services.close()


def test_feedback_is_stored_and_exported_as_gradable_questions(services, tmp_path):
    _status, answer = call(endpoints.query, services, {"question": QUESTION, "filters": {"doc_class": "grid"}})
    qid = answer["query_id"]
    cited = answer["bullets"][0]["citation"]
    assert (
        call(endpoints.feedback, services, {"query_id": qid, "helpful": True, "citation": cited, "comment": "准确"})[0]
        == 200
    )
    assert call(endpoints.feedback, services, {"query_id": qid, "helpful": False})[0] == 200
    exported = export_questions(services.feedback)
    assert len(exported) == 1
    q = exported[0]
    assert q["question"] == QUESTION and q["filters"]["doc_class"] == ["grid"]
    assert q["relevant"] == [{"doc_id": cited["doc_id"], "article": cited["article"], "grade": 3}]
    assert [f["helpful"] for f in q["feedback"]] == [True, False] and q["needs_grading"]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"helpful": True}, 400, "query_id"),
        ({"query_id": "x" * 32, "helpful": True}, 400, "query_id"),
        ({"query_id": "0" * 32, "helpful": "yes"}, 400, "helpful must be true or false, got a string"),
        ({"query_id": "0" * 32, "helpful": True, "rating": 5}, 400, "unknown field 'rating'"),
        ({"query_id": "0" * 32, "helpful": True, "comment": "长" * 3000}, 400, "comment"),
        ({"query_id": "0" * 32, "helpful": True}, 404, "unknown query_id"),
    ],
)
def test_bad_feedback(services, body, status, message):
    got, response = call(endpoints.feedback, services, body)
    assert got == status and message in response["error"]["message"]


def test_concurrent_feedback_loses_nothing(services):
    qid = call(endpoints.query, services, {"question": QUESTION})[1]["query_id"]
    errors = []

    def send(i):
        status, _ = call(endpoints.feedback, services, {"query_id": qid, "helpful": i % 2 == 0, "comment": f"#{i}"})
        if status != 200:
            errors.append(status)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    comments = sorted(f["comment"] for f in export_questions(services.feedback)[0]["feedback"])
    assert comments == sorted(f"#{i}" for i in range(40))


def test_admin_needs_the_token(services, tmp_path):
    assert admin_call(services, "GET", "/admin/index", None)[0] == 401
    assert admin_call(services, "GET", "/admin/index", "Basic abc")[0] == 401
    assert admin_call(services, "GET", "/admin/index", "Bearer wrong")[0] == 403
    status, body = admin_call(services, "GET", "/admin/index", "Bearer s3cret-token")
    assert status == 200 and body["documents"] == 3 and body["index_version"] > 0
    assert body["embedding_model"] == services.embedder.model_id and body["dimension"] == services.embedder.dimension
    disabled = build_services(make_settings(tmp_path / "other"))
    status, body = admin_call(disabled, "GET", "/admin/index", "Bearer anything")
    assert status == 403 and "REGRAG_ADMIN_TOKEN" in body["error"]["message"]


def test_admin_prompts_lists_versions(services):
    status, body = admin_call(services, "GET", "/admin/prompts", "Bearer s3cret-token")
    assert status == 200
    keys = {p["key"] for p in body["prompts"]}
    assert "rerank_v1" in keys and all(len(p["sha256"]) == 64 for p in body["prompts"])


def test_scheduled_eval_writes_a_report_and_flags_a_regression(services, caplog):
    questions = [
        {
            "id": "g1",
            "question": QUESTION,
            "filters": {"doc_class": "grid"},
            "relevant": [{"doc_id": "nat-reg-0088", "article": "第二十八条", "grade": 3}],
            "answerable": True,
        }
    ]
    services.blobs.write(
        "evals/grid.jsonl", "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions).encode()
    )
    auth = "Bearer s3cret-token"
    status, first = admin_call(services, "POST", "/admin/eval", auth, {"questions": "evals/grid.jsonl"})
    assert status == 200 and first["previous"] is None and not first["regression"]
    report = json.loads(services.blobs.read(first["report"]).data)
    assert report["context"]["index_version"] > 0 and "prompts" in report["context"]
    # the configuration the figures came from, every tuning value included, and no secret
    assert report["context"]["settings"]["bm25_k1"] == services.settings.bm25_k1
    assert report["context"]["settings"]["admin_token"] == "<set>" and "s3cret-token" not in json.dumps(report)
    assert services.blobs.read(first["report"][:-5] + ".md").data.startswith(b"mode: full")

    # Pretend the previous run was far better: the new run is a regression and logs an ERROR line.
    report["metrics"]["ndcg@10"] = 1.5
    services.blobs.write(first["report"], json.dumps(report).encode())
    with caplog.at_level(logging.ERROR, logger="regrag"):
        logging.getLogger("regrag").propagate = True
        try:
            status, second = admin_call(services, "POST", "/admin/eval", auth, {"questions": "evals/grid.jsonl"})
        finally:
            logging.getLogger("regrag").propagate = False
    assert status == 200 and second["regression"] and second["previous"]["report"] == first["report"]
    assert any("eval regression" in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)

    assert admin_call(services, "POST", "/admin/eval", auth, {"questions": "../etc/passwd.jsonl"})[0] == 400
    assert admin_call(services, "POST", "/admin/eval", auth, {"questions": "evals/missing.jsonl"})[0] == 404


def test_query_embedding_cache_counts_hits_on_a_replay(services):
    for _ in range(2):
        call(endpoints.query, services, {"question": QUESTION})
        call(endpoints.query, services, {"question": "窃电 处罚"})
    stats = endpoints.health(services)["caches"]["query_embedding"]
    assert stats["hits"] >= 2 and stats["misses"] >= 2


def test_section_context_and_cross_references(services):
    status, body = call(
        endpoints.query, services, {"question": QUESTION, "filters": {"doc_class": "grid"}, "context": "section"}
    )
    assert status == 200 and body["context"]
    item = body["context"][0]
    assert item["heading_path"] and all(s["article"] != item["article"] for s in item["siblings"])
    quoted = {b["chunk_id"] for b in body["bullets"]}
    assert all(s["text"] for s in item["siblings"]) and quoted
    status, body = call(endpoints.query, services, {"question": QUESTION, "context": "article"})
    assert "siblings" not in body["context"][0]
    # an article that cites others (电力法 第六十三条: 违反本法第二十五条规定…): its context carries their text
    question = "未经许可从事供电或者变更供电营业区的，由电力管理部门怎么处罚？"
    status, body = call(endpoints.query, services, {"question": question, "context": "article"})
    item = next(i for i in body["context"] if (i["doc_id"], i["article"]) == ("nat-law-0069", "第六十三条"))
    assert [r["article"] for r in item["references"]] == ["第二十五条"]
    assert item["references"][0]["text"].startswith("第二十五条 ")
    assert call(endpoints.query, services, {"question": QUESTION, "context": "chapter"})[0] == 400

    doc = endpoints.document(services, "nat-law-0069")
    refs = [r for a in doc["anchors"] for r in a["references"]]
    assert refs, "电力法 refers to its own articles (e.g. 依照本法第…条)"
    by_id = {a["id"]: a for a in doc["anchors"]}
    for r in refs:
        assert doc["text"][r["start"] : r["end"]] == r["article"]
        assert by_id[r["target"]]["article"] == r["article"]


def test_a_failing_query_log_does_not_lose_the_answer(services, monkeypatch):
    def broken(query_id, record):
        raise OSError("disk full")

    monkeypatch.setattr(services.feedback, "log_query", broken)
    status, body = call(endpoints.query, services, {"question": QUESTION})
    assert status == 200 and body["bullets"]
    # the answer came back; feedback on it is refused (the query was not logged), not silently accepted
    assert call(endpoints.feedback, services, {"query_id": body["query_id"], "helpful": True})[0] == 404
