"""The page's 关注与导出 controls (web/watch.js) in headless Chromium against the local server: export buttons
under an answer (the .docx the browser saves is opened here with python-docx), 关注 on a quote, on the question
and on the document view, an address that opens a document at an article, and the 关注与提醒 tab with an alert
recorded before the run. watch.mjs (playwright-core) runs the scenario once per module and prints what it saw."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pytest
from test_page import ARTIFACTS, HERE, missing_prerequisite, step

from regrag.api import endpoints
from regrag.api.server import wsgi_app
from regrag.services import Services
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings

pytestmark = pytest.mark.browser

DOCS = ["nat-reg-0088", "nat-law-0069", "sh-0001", "nat-law-0072"]
NEXT = "nat-law-0073"  # ingested after a watch on 矿产资源法 第三条: one alert exists when the browser comes


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    base = build_services(make_settings(tmp_path_factory.mktemp("watch-page")))
    ingest_sample(base, DOCS)
    endpoints.add_watch(base, {"doc_id": "nat-law-0072", "article": "第三条", "owner": "lawyer@example.com"})
    ingest_sample(base, [NEXT])
    # a question watched as of a past day in one province: the tab says which day and place
    endpoints.add_watch(
        base, {"question": "计划检修停电要提前几天通知？", "filters": {"as_of": "2015-06-01", "province": ["sh"]}}
    )
    yield base
    base.close()


@pytest.fixture(scope="module")
def run(services: Services, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = missing_prerequisite()
    if reason:
        pytest.skip(f"BROWSER TESTS SKIPPED: {reason}; run `bash tests/browser/install.sh` (as root)")
    import waitress

    downloads = tmp_path_factory.mktemp("downloads")
    server = waitress.create_server(wsgi_app(services), host="127.0.0.1", port=0, threads=4)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.effective_port}/"  # type: ignore[union-attr]
        done = subprocess.run(
            ["node", str(HERE / "watch.mjs"), url, str(ARTIFACTS), str(downloads)],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    finally:
        server.close()
        thread.join(timeout=5)
    assert done.returncode == 0, f"watch.mjs failed ({done.returncode}):\n{done.stderr[-4000:]}"
    yield json.loads(done.stdout.strip().splitlines()[-1])


def test_the_export_button_saves_the_answer_as_a_word_file_with_every_quote_and_citation(run):
    s = step(run, "export")
    assert s["buttons"] == ["Word（.docx）", "Markdown", "关注此问题"]
    # saved under the question asked, so two answers of one day are told apart
    stem = s["docx"]["suggested"].removesuffix(".docx")
    assert stem.startswith("法规检索结果-供电企业因为计划检修要停电")
    assert s["md"]["suggested"] == f"{stem}.md"
    assert s["docx"]["url"] == "blob:"
    answer = s["answer"]
    document = docx.Document(s["docx"]["file"])
    texts = [p.text for p in document.paragraphs]
    assert answer["bullets"]
    for n, bullet in enumerate(answer["bullets"], 1):
        cite = bullet["citation"]
        at = texts.index(f"{n}. " + "\n\n".join(bullet["lines"]))  # a paragraph of the statute per line
        assert texts[at + 1] == f"引用：{cite['marker']}" and f"生效：{cite['effective_date']}" in cite["marker"]
        assert f"《{cite['title']}》{cite['provision'] or cite['article']}" in cite["marker"]
        assert texts[at + 2] == "版本状态：现行有效"
    markdown = Path(s["md"]["file"]).read_text(encoding="utf-8")
    assert all(b["citation"]["marker"] in markdown for b in answer["bullets"])
    assert not run["page_errors"], run["page_errors"]


def test_a_quote_is_watched_with_one_click_and_stays_watched(run):
    s = step(run, "watch_quote")
    assert s["before"] == {"text": "关注", "pressed": "false"}
    assert s["after"]["text"] == "已关注" and s["after"]["watch_id"].startswith("w")
    assert set(s["request"]) == {"doc_id", "article"} and s["request"]["article"].startswith("第")
    assert s["again"] == "已关注"  # reloaded: the page knows the watch


def test_the_question_is_saved_without_freezing_todays_date(run):
    s = step(run, "watch_question")
    assert s["request"] == {"question": "供电企业因为计划检修要停电，至少要提前几天通知用户？", "filters": {}}
    assert s["text"] == "已关注此问题"


def test_an_address_opens_a_document_at_its_article_with_watch_and_export_controls(run):
    s = step(run, "document")
    assert s["title"] == "《中华人民共和国矿产资源法》" and s["cited"] == "第三条"
    assert s["buttons"] == ["关注本文件", "已关注第三条", "Word", "Markdown"]  # 第三条 is watched since the fixture
    assert s["request"] == {"doc_id": "nat-law-0072"} and "已关注本文件" in s["pressed"]
    # the 2009 text is replaced already: said beside the button when the watch is made
    assert len(s["told"]) == 1 and "有新版本" in s["told"][0] and "2025-07-01" in s["told"][0]
    assert s["versions"]["suggested"] == "《中华人民共和国矿产资源法》版本沿革与修订对照.docx"
    rows = [[c.text for c in r.cells] for t in docx.Document(s["versions"]["file"]).tables for r in t.rows]
    assert ["《中华人民共和国矿产资源法》", "2024-11-08", "2025-07-01", "现行", "nat-law-0073"] in rows


def test_the_watch_tab_lists_watches_and_alerts_and_an_alert_opens_the_new_article(run):
    s = step(run, "tab")
    before = s["before"]
    assert before["visible"] and before["feed"] == "/alerts?format=atom"
    assert len(before["watches"]) == 5  # the fixture's two, the quote's, the question's, the document's
    assert any("第三条" in w and "（现为新版本第四条）" in w and "lawyer@example.com" in w for w in before["watches"])
    assert any("“计划检修停电要提前几天通知？”（上海 · 时点 2015-06-01）" in w for w in before["watches"])
    # the fixture's article alert, and the 2009 text watched from the document view: told at once it is replaced
    [alert] = [a for a in before["alerts"] if "条文修改" in a["text"]]
    assert "其内容见于新版本第四条" in alert["text"]
    [told] = [a for a in before["alerts"] if a is not alert]
    assert "有新版本" in told["text"] and "nat-law-0073" in (told["href"] or "")
    assert alert["href"].endswith("?doc=nat-law-0073&article=%E7%AC%AC%E5%9B%9B%E6%9D%A1")
    assert len(s["after"]["watches"]) == 4 and s["after"]["status"].startswith("关注 4 项")
    assert s["opened"]["title"] == "《中华人民共和国矿产资源法》" and s["opened"]["cited"] == "第四条"
    assert "doc=nat-law-0073" in s["opened"]["url"]
    assert not run["errors"], run["errors"]
