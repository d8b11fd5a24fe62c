"""The page's 引用核验 tab in headless Chromium against the local server over a few sample documents: the tabs,
a pasted memo with every kind of finding, an upload with an as-of day, and bad input. check.mjs (playwright-core)
runs the scenario once per module and prints what it saw as JSON; each test asserts one part of it."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from test_page import ARTIFACTS, HERE, missing_prerequisite, step

from regrag.api.server import wsgi_app
from regrag.services import Services
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings

pytestmark = pytest.mark.browser

DOCS = ["nat-reg-0088", "nat-law-0069", "sh-0001", "ha-0001", "nat-law-0076", "nat-law-0077"]
MEMO = """日期：2025年3月1日

关于停电通知的法律意见

一、依《中华人民共和国电力法》第十条，电力发展规划应当纳入国民经济和社会发展计划。
二、依《电力供应与使用条例》第二十八条，“因供电设施计划检修需要停电时，供电企业应当提前3天通知用户或者进行公告”。
三、《中华人民共和国突发事件应对法》第十条规定，“有关人民政府及其部门作出的应对突发事件的决定、命令，应当及时公布”。
四、《电力法》第九十九条另有规定。依《供用电条例》第十条公示。依《中华人民共和国仲裁法》第十六条申请仲裁。
五、依《电力供应与使用条例》第二十八条，临时检修停电应提前12小时通知重要用户。
"""
EXPECTED = [
    ("《中华人民共和国电力法》第十条", "ok"),
    ("《电力供应与使用条例》第二十八条", "quote_mismatch"),
    ("《中华人民共和国突发事件应对法》第十条", "superseded"),
    ("《电力法》第九十九条", "article_missing"),
    ("《供用电条例》第十条", "ambiguous"),
    ("《中华人民共和国仲裁法》第十六条", "unknown_law"),
    ("《电力供应与使用条例》第二十八条", "ok"),  # ok, but the memo's 12小时 is not the article's 24小时
]


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    base = build_services(make_settings(tmp_path_factory.mktemp("check-page")))
    ingest_sample(base, DOCS)
    yield base
    base.close()


@pytest.fixture(scope="module")
def run(services: Services, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = missing_prerequisite()
    if reason:
        pytest.skip(f"BROWSER TESTS SKIPPED: {reason}; run `bash tests/browser/install.sh` (as root)")
    import waitress

    files = tmp_path_factory.mktemp("check-files")
    memo, binary = files / "意见书.md", files / "memo.txt"
    memo.write_text(MEMO, encoding="utf-8")
    binary.write_bytes(bytes(range(256)) * 40)
    server = waitress.create_server(wsgi_app(services), host="127.0.0.1", port=0, threads=4)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.effective_port}/"  # type: ignore[union-attr]
        done = subprocess.run(
            ["node", str(HERE / "check.mjs"), url, str(ARTIFACTS), str(memo), str(binary)],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.close()
        thread.join(timeout=5)
    assert done.returncode == 0, f"check.mjs failed ({done.returncode}):\n{done.stderr[-4000:]}"
    yield json.loads(done.stdout.strip().splitlines()[-1])


def test_the_tab_switches_views_by_mouse_keyboard_and_link(run: dict[str, Any]) -> None:
    s = step(run, "tabs")
    assert s["before"] == {"search_visible": True, "check_visible": False, "selected": "true"}
    assert s["after"]["check_visible"] and not s["after"]["search_visible"] and s["after"]["selected"] == "true"
    assert s["after"]["hash"] == "#check" and "文书全文" in s["after"]["labels"] and "核验日期" in s["after"]["labels"]
    assert s["keyboard"] == {"search_visible": True, "focused": "tab-search"}
    assert s["deep_link"] is True
    assert not run["page_errors"], run["page_errors"]


def test_a_pasted_memo_shows_each_finding_with_its_evidence(run: dict[str, Any]) -> None:
    s = step(run, "check_text")
    assert json.loads(s["request"]["body"]) == {"text": MEMO}
    assert [(c["ref"], c["status"]) for c in s["cards"]] == EXPECTED
    assert "核验日期：2025-03-01（文书落款日期" in s["summary"]
    assert "共 7 处引用：正确 2 处（其中请核对 1 处），有问题 4 处，无法核验 1 处" in s["summary"]
    cards = {c["status"]: c for c in s["cards"]}
    assert cards["quote_mismatch"]["deleted"] == ["3"] and cards["quote_mismatch"]["inserted"] == ["7"]
    assert cards["quote_mismatch"]["label"].startswith("引文与原文不符")
    superseded = cards["superseded"]
    assert "已被新版本" in superseded["message"] and any("2024-11-01" in t for t in [superseded["message"]])
    assert superseded["law"], "the cited version's text is shown beside the finding"
    assert "河南省供用电条例" in cards["ambiguous"]["message"] and "上海市供用电条例" in cards["ambiguous"]["message"]
    assert [m["text"] for m in s["marks"]] == [ref for ref, _ in EXPECTED]
    assert [m["status"] for m in s["marks"]] == [status for _, status in EXPECTED]
    # the ok citation with a caution reads as a warning, in its card and its mark, and stays under 只看有问题的
    cautioned = s["cards"][-1]
    assert cautioned["caution"] and cautioned["tone"] == "tone-warn" and cautioned["flag"] == "请核对"
    assert "“12小时”不见于该条（该条所写：24小时）" in cautioned["message"]
    assert [c["caution"] for c in s["cards"][:-1]] == [False] * 6 and s["marks"][-1]["tone"] == "tone-warn"
    assert s["problems_only"] == 6 and s["focused_after_mark"] == "check-1"


def test_an_upload_is_checked_as_of_the_day_given(run: dict[str, Any]) -> None:
    s = step(run, "check_upload")
    assert s["content_type"].startswith("multipart/form-data")
    assert "核验日期：2020-01-01（指定的核验日期）" in s["summary"]
    statuses = dict((c["ref"], c["status"]) for c in s["cards"])
    # in 2020 the 2007 突发事件应对法 was the law in force: its article 10 is then correctly quoted
    assert statuses["《中华人民共和国突发事件应对法》第十条"] == "ok"
    assert len(s["marks"]) == 7


def test_bad_input_gets_a_clear_message(run: dict[str, Any]) -> None:
    s = step(run, "check_errors")
    assert "核验失败（HTTP 400）" in s["binary"] and "binary" in s["binary"]
    assert "没有可核验的内容" in s["empty"]
    assert s["none"]["cards"] == [] and "没有找到法规条文的引用" in s["none"]["summary"]
