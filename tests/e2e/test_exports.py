"""Exports for a memo: an answer (GET /query/{query_id}/export), a document's versions diff and a citation-check
report, as .docx (opened here with python-docx) and Markdown; over HTTP and from the CLI."""

from __future__ import annotations

import io
import re
from typing import Any
from urllib.parse import unquote

import docx
import pytest
from test_cli import make_corpus
from werkzeug.test import Client

from regrag.api.server import wsgi_app
from regrag.entrypoints.cli import main
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings

DOCS = ["nat-reg-0088", "nat-law-0069", "sh-0001", "nat-law-0072", "nat-law-0073"]
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
QUESTION = "供电企业因为计划检修要停电，至少要提前几天通知用户？"
STATUS_WORDS = {"in_force": "现行有效", "superseded": "已被新版本取代", "not_yet_in_force": "尚未施行"}


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    built = build_services(make_settings(tmp_path_factory.mktemp("exports")))
    ingest_sample(built, DOCS)
    yield built
    built.close()


@pytest.fixture
def client(services):
    return Client(wsgi_app(services))


def ask(client: Client, question: str, **filters: Any) -> dict[str, Any]:
    response = client.post("/query", json={"question": question, "filters": filters})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def paragraphs(data: bytes) -> tuple[list[str], list[str], list[list[str]]]:
    """(paragraph texts, hyperlink URLs, table rows) of a .docx."""
    document = docx.Document(io.BytesIO(data))
    texts = [p.text for p in document.paragraphs]
    links = [h.url for p in document.paragraphs for h in p.hyperlinks]
    rows = [[c.text for c in row.cells] for table in document.tables for row in table.rows]
    return texts, links, rows


def assert_every_quote_cited(answer: dict[str, Any], texts: list[str], links: list[str]) -> None:
    """Each quote verbatim in its own paragraph, right after it its complete citation (title, 第X条, 生效, status)."""
    assert answer["bullets"]
    for n, bullet in enumerate(answer["bullets"], 1):
        cite = bullet["citation"]
        # verbatim, a paragraph of the statute per line (a 款, a lead-in, an item), which joined are the span
        assert "".join(bullet["lines"]) == bullet["span"]
        at = texts.index(f"{n}. " + "\n\n".join(bullet["lines"]))
        marker = cite["marker"]
        assert texts[at + 1] == f"引用：{marker}"
        assert f"《{cite['title']}》{cite['provision'] or cite['article']}" in marker
        assert re.search(r"第[一二三四五六七八九十百零]+条", marker) and f"生效：{cite['effective_date']}" in marker
        assert texts[at + 2].startswith(f"版本状态：{STATUS_WORDS[cite['version_status']]}")
        assert any(f"?doc={cite['doc_id']}&article=" in url for url in links)


def test_an_answer_exports_as_docx_with_every_quote_verbatim_and_its_complete_citation(client):
    answer = ask(client, QUESTION)
    response = client.get(f"/query/{answer['query_id']}/export", query_string={"format": "docx"})
    assert response.status_code == 200 and response.mimetype == DOCX
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="regrag-answer-') and "filename*=UTF-8''" in disposition
    saved = unquote(disposition.split("filename*=UTF-8''", 1)[1])
    assert saved.startswith("法规检索结果-供电企业因为计划检修要停电") and saved.endswith(
        ".docx"
    )  # named by the question
    texts, links, _ = paragraphs(response.data)
    assert texts[0] == "法规检索结果" and f"问题：{QUESTION}" in texts
    assert any(t.startswith("时点：") and answer["temporal"]["as_of"] in t for t in texts)
    assert_every_quote_cited(answer, texts, links)
    assert all(link.startswith("http://localhost/?doc=") for link in links)
    assert texts[-1].startswith("引文均为法规原文的逐字摘录")


def test_a_superseded_version_is_exported_with_its_status_and_successor(client):
    answer = ask(client, "矿产资源属于谁所有？", include_superseded=True, doc_id=["nat-law-0072"])
    assert {b["citation"]["version_status"] for b in answer["bullets"]} == {"superseded"}
    texts, links, _ = paragraphs(client.get(f"/query/{answer['query_id']}/export").data)  # docx by default
    assert_every_quote_cited(answer, texts, links)
    assert all("，已被取代〕" in b["citation"]["marker"] for b in answer["bullets"])
    status = next(t for t in texts if t.startswith("版本状态："))
    assert (
        status == "版本状态：已被新版本取代（新版本《中华人民共和国矿产资源法》，公布：2024-11-08，施行：2025-07-01）"
    )
    assert any(t.startswith("提示") for t in texts) and any("已被" in t and "取代" in t for t in texts)


def test_an_answer_exports_as_markdown(client):
    answer = ask(client, QUESTION, province=["national", "sh"])
    response = client.get(f"/query/{answer['query_id']}/export", query_string={"format": "md"})
    assert response.status_code == 200 and response.mimetype == "text/markdown"
    text = response.data.decode("utf-8")
    quoted = "\n".join(line[2:] for line in text.splitlines() if line.startswith("> "))
    for bullet in answer["bullets"]:
        assert all(line in quoted.splitlines() for line in bullet["lines"])  # a quoted paragraph per line
        assert f"**引用：**{bullet['citation']['marker']}" in text
    assert "**筛选条件：**地区：全国、上海" in text


def test_export_errors_are_clear(client, services):
    assert client.get(f"/query/{'0' * 32}/export").status_code == 404
    assert client.get(f"/query/{'0' * 32}/export").get_json()["error"]["code"] == "unknown_query"
    assert client.get("/query/not-an-id/export").status_code == 400
    answer = ask(client, QUESTION)
    bad = client.get(f"/query/{answer['query_id']}/export", query_string={"format": "pdf"})
    assert bad.status_code == 400 and "format" in bad.get_json()["error"]["message"]
    services.feedback.log_query("f" * 32, {"time": "2026-01-01T00:00:00+00:00", "question": "旧记录", "cited": []})
    old = client.get(f"/query/{'f' * 32}/export")
    assert old.status_code == 404 and old.get_json()["error"]["code"] == "answer_not_kept"


def test_an_abstained_answer_exports_what_was_said(client):
    answer = ask(client, "火星上的采矿权如何登记？", doc_id=["sh-0001"])
    assert answer["abstained"]
    texts, _, _ = paragraphs(client.get(f"/query/{answer['query_id']}/export").data)
    assert "未找到相关规定" in texts and not any(t.startswith("引用：") for t in texts)


def test_a_documents_versions_diff_exports_as_a_table_of_old_and_new_articles(client, services):
    response = client.get("/documents/nat-law-0073/versions/export", query_string={"format": "docx"})
    assert response.status_code == 200 and response.mimetype == DOCX
    texts, links, rows = paragraphs(response.data)
    assert texts[0] == "《中华人民共和国矿产资源法》版本沿革与修订对照"
    assert ["《中华人民共和国矿产资源法》", "2024-11-08", "2025-07-01", "现行", "nat-law-0073"] in rows
    view = client.get("/documents/nat-law-0073/versions").get_json()
    words = {"changed": "修改", "renumbered": "条号变动", "added": "新增", "removed": "删除"}
    for change in view["changes"][0]["articles"]:  # every article that changed: old text beside new
        old, new = change["old"], change["new"]
        assert [words[change["change"]], old["text"] if old else "—", new["text"] if new else "—"] in rows
    assert {link.split("?")[1] for link in links} == {"doc=nat-law-0072", "doc=nat-law-0073"}
    md = client.get("/documents/nat-law-0073/versions/export", query_string={"format": "md"}).data.decode("utf-8")
    assert "| 变化 | 原条文（2009-08-27） | 现条文（2025-07-01） |" in md
    assert client.get("/documents/nope/versions/export").status_code == 404


MEMO = (
    "日期：2025年3月1日\n依《电力供应与使用条例》第二十八条，“因供电设施计划检修需要停电时，供电企业应当提前3天"
    "通知用户或者进行公告”。\n依《中华人民共和国电力法》第十条。\n"
)


def test_a_check_report_exports_as_docx_and_markdown(client):
    response = client.post("/check", query_string={"format": "docx"}, json={"text": MEMO})
    assert response.status_code == 200 and response.mimetype == DOCX
    texts, links, rows = paragraphs(response.data)
    assert texts[0] == "引用核验报告" and "核验日期：2025-03-01（文书落款日期）" in texts
    assert rows[0] == ["序号", "引用（原文写法）", "条文", "结论", "说明"]
    assert [r[1] + "|" + r[3] for r in rows[1:]] == [
        "《电力供应与使用条例》第二十八条|引文不符",
        "《中华人民共和国电力法》第十条|正确",
    ]
    assert any("[3→7]" in t for t in texts) and any("?doc=nat-reg-0088" in link for link in links)
    md = client.post("/check?format=md", json={"text": MEMO}).data.decode("utf-8")
    assert "| 1 | 《电力供应与使用条例》第二十八条 |" in md and "> 第二十八条 除本条例另有规定外" in md
    assert client.post("/check?format=pdf", json={"text": MEMO}).status_code == 400
    assert client.post("/check", json={"text": MEMO}).get_json()["summary"]["problems"] == 1  # JSON as before


def test_a_check_report_lists_an_ok_citation_to_check_with_its_evidence(client):
    """An ok citation whose memo wording gives the article a figure it does not state is a row to check and
    has its evidence below, as a problem does."""
    memo = "2025年3月1日\n根据《电力供应与使用条例》第二十八条，计划检修停电应提前3天通知用户。"
    texts, _, rows = paragraphs(client.post("/check?format=docx", json={"text": memo}).data)
    assert [r[3] for r in rows[1:]] == ["正确，请核对"] and "“3天”不见于该条" in rows[1][4]
    assert any(t.startswith("1. 《电力供应与使用条例》第二十八条：正确，请核对") for t in texts)
    assert any("（其中请核对 1 处）" in t for t in texts)


def test_the_cli_writes_an_answer_a_check_report_and_a_versions_diff(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_PUBLIC_URL", "https://regrag.example.com/")
    assert (
        main(["ingest", str(make_corpus(tmp_path, {"nat-reg-0088", "nat-law-0069", "nat-law-0072", "nat-law-0073"}))])
        == 0
    )
    capsys.readouterr()
    answer_docx, answer_md = tmp_path / "answer.docx", tmp_path / "answer.md"
    assert main(["ask", QUESTION, "--json", "--docx", str(answer_docx), "--md", str(answer_md)]) == 0
    import json

    answer = json.loads(capsys.readouterr().out)
    texts, links, _ = paragraphs(answer_docx.read_bytes())
    assert_every_quote_cited(answer, texts, links)
    assert all(link.startswith("https://regrag.example.com/?doc=") for link in links)
    assert answer["bullets"][0]["citation"]["marker"] in answer_md.read_text(encoding="utf-8")

    memo = tmp_path / "意见书.md"
    memo.write_text(MEMO, encoding="utf-8")
    report = tmp_path / "report.docx"
    assert main(["check", str(memo), "--docx", str(report)]) == 1  # a problem found: exit 1, report written
    texts, _, rows = paragraphs(report.read_bytes())
    assert "文书：意见书.md" in texts and rows[1][3] == "引文不符"
    folder = tmp_path / "reports"
    assert main(["check", str(memo), str(memo), "--md", str(folder)]) == 1
    assert [p.name for p in folder.iterdir()] == ["意见书.引用核验.md"]

    versions = tmp_path / "versions.md"
    assert main(["versions", "nat-law-0073", "--md", str(versions)]) == 0
    assert "修订对照：2009-08-27 版 → 2025-07-01 版" in versions.read_text(encoding="utf-8")
    assert main(["versions", "nope", "--md", str(versions)]) == 2


def test_a_low_confidence_answer_exports_its_caution_before_the_quotes(client):
    answer = ask(client, "供电企业和用户之间发生纠纷怎么办？")
    assert answer["confidence"]["level"] == "low" and answer["caution"] and answer["bullets"]
    texts, links, _ = paragraphs(client.get(f"/query/{answer['query_id']}/export").data)
    assert_every_quote_cited(answer, texts, links)
    assert texts.index(answer["caution"]) < texts.index("1. " + "\n\n".join(answer["bullets"][0]["lines"]))


def test_an_export_is_named_by_its_question_cut_at_a_clause():
    from regrag.ops.exports.files import answer_title
    from regrag.ops.exports.memo import Memo

    memo = Memo("法规检索结果")
    assert answer_title(memo, "窃电怎么处罚？") == "法规检索结果-窃电怎么处罚"
    assert answer_title(memo, "a/b:c*?") == "法规检索结果-abc"  # what a file name may not hold is left out
    long = "在广东建分布式光伏并网要满足什么条件，需要哪些部门审批，多长时间能办下来？"
    assert answer_title(memo, long) == "法规检索结果-在广东建分布式光伏并网要满足什么条件，需要哪些部门审批"
    assert answer_title(memo, "？") == "法规检索结果"
