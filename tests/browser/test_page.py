"""The search page in headless Chromium against the local server over a few sample documents.

One corpus answers slowly (so the page shows a timeout) and one is broken (an error card, and a 503 when it
is the only one searched). drive.mjs (playwright-core) runs the whole scenario once per module and prints
what it saw as JSON; each test here asserts one part of it. Screenshots go to tests/browser/artifacts/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from regrag.api import endpoints
from regrag.api.server import wsgi_app
from regrag.services import Services
from regrag.wiring import build_services

from conftest import SlowOrBrokenIndex, ingest_sample, make_settings, with_vectors

pytestmark = pytest.mark.browser

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"
CHROMIUM = Path(os.environ.get("REGRAG_CHROMIUM", "/usr/bin/chromium"))
DOCS = ["nat-reg-0088", "nat-law-0069", "sh-0001", "ha-0001", "nat-law-0076", "nat-law-0077"]
SLOW, BROKEN = "henan", "shanghai"
CJK_FONTS = ("CJK", "WenQuanYi", "YaHei", "PingFang", "Hiragino", "Source Han", "Hei", "Song")


def missing_prerequisite() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not (HERE / "node_modules" / "playwright-core").is_dir():
        return "tests/browser/node_modules/playwright-core is missing"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing"
    return None


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    # A short per-corpus timeout keeps the slow corpus's wait (and so the whole scenario) brief.
    base = build_services(make_settings(tmp_path_factory.mktemp("page"), corpus_timeout_s=0.5))
    ingest_sample(base, DOCS)
    yield with_vectors(base, SlowOrBrokenIndex(base.vectors, {SLOW}, {BROKEN}, delay_s=1.0))
    base.close()


@pytest.fixture(scope="module")
def run(services: Services) -> Iterator[dict[str, Any]]:
    """Serves `services` on a free port and runs drive.mjs once; its JSON observations."""
    reason = missing_prerequisite()
    if reason:
        pytest.skip(f"BROWSER TESTS SKIPPED: {reason}; run `bash tests/browser/install.sh` (as root)")
    import waitress

    # The page on 127.0.0.1 calls the API as "localhost" too (the cross-origin step): that origin is allowed
    # the way a deployment allows its page's origin, once the port is known.
    apps: dict[str, Any] = {}
    server = waitress.create_server(lambda env, start: apps["app"](env, start), host="127.0.0.1", port=0, threads=8)
    port = server.effective_port  # type: ignore[union-attr]
    allowed = replace(services, settings=replace(services.settings, cors_origins=f"http://127.0.0.1:{port}"))
    apps["app"] = wsgi_app(allowed)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{port}/"
        done = subprocess.run(
            ["node", str(HERE / "drive.mjs"), url, str(ARTIFACTS)],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.close()
        thread.join(timeout=5)
    assert done.returncode == 0, f"drive.mjs failed ({done.returncode}):\n{done.stderr[-4000:]}"
    yield json.loads(done.stdout.strip().splitlines()[-1])


def step(run: dict[str, Any], name: str) -> dict[str, Any]:
    """One scenario step's observations; fails with the driver's error (a screenshot is in ARTIFACTS)."""
    assert name not in run["errors"], f"step {name!r} failed in the browser:\n{run['errors'][name]}"
    return run["steps"][name]


def test_page_loads_clean_with_corpora_and_chinese_filter_labels(run: dict[str, Any]) -> None:
    from regrag.inputs.filters import ASSETS, DOC_CLASSES, LEVELS, PROVINCE_CODES
    from regrag.text.inference import PROVINCE_NAMES

    load = step(run, "load")
    assert load["lang"] == "zh-CN" and load["charset"] == "UTF-8" and "法规" in load["title"]
    assert sorted(load["corpora"]) == [["henan", True], ["national", True], ["shanghai", True]]
    assert load["search_disabled"] is False and "3 / 3" in load["hint"]
    options = {key: dict(pairs) for key, pairs in load["options"].items()}
    assert set(options["asset"]) == {"", *ASSETS} and set(options["doc_class"]) == {"", *DOC_CLASSES}
    assert set(options["regulation_level"]) == {"", *LEVELS}
    # provinces: a multi-select of every province, national rules first; nothing ticked means no filter
    provinces = {code: label for code, label, _ in load["provinces"]}
    assert next(iter(provinces)) == "national" and set(provinces) == set(PROVINCE_CODES)
    assert all(provinces[c] == PROVINCE_NAMES[c] for c in PROVINCE_CODES if c != "national")
    assert not any(checked for _, _, checked in load["provinces"]) and load["province_summary"] == "不限"
    # beside each name, how many documents in force the library holds; those it holds nothing of come last
    counts = dict(load["province_counts"])
    order = [code for code, _ in load["province_counts"]]
    assert order[0] == "national" and set(order[1:3]) == {"ha", "sh"}
    assert counts["sh"] == "1 部现行" and counts["gd"] == "库中无文件" and counts["national"].endswith("部现行")
    labels = dict(load["labels"])
    assert labels["question"] == "问题" and load["province_label"] == "省份" and labels["corpus-all"] == "全选"
    assert not run["page_errors"], run["page_errors"]


def test_no_corpus_selected_disables_search(run: dict[str, Any]) -> None:
    s = step(run, "select_corpora")
    assert s["none"] == {"disabled": True, "hint": "请至少选择一个语料库，才能检索。", "checked": 0}
    assert s["one"]["disabled"] is False and s["one"]["indeterminate"] is True and "1 / 3" in s["one"]["hint"]
    assert s["all"] == {"disabled": False, "checked": 3}


def test_search_with_filters_shows_cited_quotes_and_evidence(run: dict[str, Any]) -> None:
    s = step(run, "search")
    assert s["progress_visible"] and "正在检索 3 个语料库… 已用" in s["progress_text"]
    assert s["request"] == {
        "question": "供电企业因计划检修需要停电，应当提前几天通知用户？",
        "filters": {"province": ["national"], "doc_class": ["grid"], "as_of": "2020-01-01"},
        "corpora": ["henan", "national", "shanghai"],
    }
    assert s["error_hidden"] and s["answer_title"] == "供电企业要点（全国）"
    assert s["bullets"], "no quoted bullets"
    assert s["announced"] == f"检索完成：{len(s['bullets'])} 条引文。"
    first = s["bullets"][0]
    # the item that answers, cited with its article and item: the marker a lawyer pastes
    assert first["marker"] == "〔《电力供应与使用条例》第二十八条第（一）项，生效：2019-03-02〕"
    assert first["article"] == "第二十八条第（一）项" and first["corpora"] == ["national"]
    assert "提前7天通知用户" in first["span"] and first["span"].startswith("第二十八条")
    assert "筛选：全国 · 电网与供用电 · 时点 2020-01-01" in s["meta"] and "未重新排序" in s["search_meta"]
    assert "地域" not in s["meta"]  # the question names no place
    assert s["evidence"] and all(e["corpora"] == ["national"] for e in s["evidence"])
    top = s["evidence"][0]
    assert top["title"] == "《电力供应与使用条例》" and top["article"] == "第二十八条"
    assert top["path"] == "第四章 电力供应"
    for junk in ("null", "undefined", "[object", "NaN"):
        assert junk not in s["results_text"], f"{junk!r} rendered in the results"


def test_a_place_named_in_the_question_is_shown_as_the_ranking_scope(run: dict[str, Any]) -> None:
    s = step(run, "scope")
    assert s["scope_notes"] == ["地域：上海（全国性规定和当地规定优先）"]


def test_slow_and_broken_corpora_show_as_timeout_and_error_cards(run: dict[str, Any]) -> None:
    s = step(run, "search")
    cards = {c["corpus"]: c for c in s["cards"]}
    assert cards[SLOW]["status"] == "timeout" and cards[SLOW]["label"] == "超时" and "timeout" in cards[SLOW]["text"]
    assert cards[SLOW]["hits"] == "0 条" and "未在时限内返回" in cards[SLOW]["text"]
    assert cards[BROKEN]["status"] == "error" and "index shard unavailable" in cards[BROKEN]["text"]
    assert cards["national"]["status"] == "ok" and cards["national"]["label"] == "正常"
    assert cards["national"]["hits"] != "0 条" and cards["national"]["latency"].endswith("毫秒")
    assert "henan（超时）" in s["incomplete"][0] and "shanghai（出错）" in s["incomplete"][0]


def test_chinese_renders_with_a_cjk_font(run: dict[str, Any]) -> None:
    for key in ("chinese", "quote_chinese"):
        c = step(run, "search")[key]
        assert c["lang"] == "zh-CN" and "Noto Sans CJK SC" in c["font_family"]
        assert c["width"] > 0 and c["height"] > 0
        used = [f for f in c["platform_fonts"] if f["glyphCount"]]
        no_cjk = f"Chinese drawn without a CJK font ({used}): install one (bash tests/browser/install.sh)"
        assert used and all(any(name in f["familyName"] for name in CJK_FONTS) for f in used), no_cjk
        glyphs = c["glyphs"]
        tofu = glyphs.pop("\ue000")
        assert all(g["ink"] > 0 for g in glyphs.values())
        hashes = {g["hash"] for g in glyphs.values()}
        assert len(hashes) == len(glyphs) and tofu["hash"] not in hashes, "Chinese glyphs look alike: tofu?"


def test_citation_opens_the_article_in_its_document(run: dict[str, Any], services: Services) -> None:
    a = step(run, "article")
    doc = endpoints.document(services, "nat-reg-0088")
    cited = [x for x in doc["anchors"] if x["article"] == "第二十八条"]
    assert a["panel_title"] == "《电力供应与使用条例》"
    assert a["breadcrumb"] == ["《电力供应与使用条例》", *cited[0]["heading_path"], "第二十八条"]
    assert [c["article"] for c in a["cited"]] == ["第二十八条"] and a["cited"][0]["flag"] == "引用条款"
    stored = doc["text"][cited[0]["start"] : cited[0]["end"]]
    assert a["cited"][0]["text"].split() == stored.split()
    bullets = step(run, "search")["bullets"]
    assert a["marked"] == bullets[0]["span"].replace("……", "")  # every piece of the quote, marked in place
    # The whole document is shown, in context: every article, the chapter headings, the metadata.
    assert a["articles_in_document"] == len(doc["anchors"]) and "第四章 电力供应" in a["headings"]
    assert "2019-03-02" in a["meta"] and a["cited_in_view"] and a["citation_moved_px"] < 50
    assert a["closed"] and a["focus_back"]
    assert not any(junk in a["panel_text"] for junk in ("null", "undefined", "[object", "NaN"))


def test_cross_references_link_to_articles_of_the_same_document(run: dict[str, Any]) -> None:
    a = step(run, "article")
    refs = {(x["in_article"], x["text"]): x["target_article"] for x in a["xrefs"]}
    assert refs[("第三十九条", "第二十七条")] == "第二十七条"
    assert all(text == target for (_, text), target in refs.items())
    assert a["after_xref"]["flashed"] == [a["xrefs"][0]["target_article"]]
    assert a["after_xref"]["focused"] == a["xrefs"][0]["target_article"]


def test_version_notes_and_superseded_citations(run: dict[str, Any]) -> None:
    """Asked as of 2020, the 2007 突发事件应对法 is quoted; the page says it has since been replaced, with the newer
    version's two dates (promulgated 2024-06-28, in force 2024-11-01) and its corresponding article."""
    v = step(run, "versions")
    newer = "新版本《中华人民共和国突发事件应对法》（公布：2024-06-28，施行：2024-11-01）"
    assert any("是2020-01-01时有效的版本" in n and newer in n for n in v["notes"]), v["notes"]
    badge = "当时有效，此后已被新版本取代：新版本2024-06-28 公布，2024-11-01 起施行"
    assert any(badge in b for b in v["version_badges"]), v["version_badges"]
    # the citation copied for a memo about 2020 is right for 2020 and says from when it is no longer the law
    assert v["marker"].endswith("，2024-11-01起已被取代〕") and "，已被取代〕" not in v["marker"]
    assert v["counterparts"] and all(c.startswith("新版本对应条文：第") for c in v["counterparts"])
    assert len(v["versions"]) == 2 and "当前查看" in v["versions"][0]
    assert "2024-06-28 公布，2024-11-01 起施行" in v["versions"][1] and "现行" in v["versions"][1]
    assert v["changes"] and "修订对照" in v["changes"][0] and "条号变动" in v["changes"][0]
    # the document view: both dates, and the status seen from the as-of day chosen in the filters
    assert "2007-11-01" in " ".join(v["meta"]) and v["status"] == "现行有效（2020-01-01）"
    assert v["cited"] and all(c for c in v["cited"])


def test_between_promulgation_and_entry_into_force_the_older_version_is_the_law(run: dict[str, Any]) -> None:
    w = step(run, "window")
    # the law of that day, replaced since (the newer version has been in force since 2024-11-01)
    badge = "当时有效，此后已被新版本取代：新版本2024-06-28 公布，2024-11-01 起施行"
    assert any(badge in b for b in w["version_badges"]), w["version_badges"]
    assert any("2024-06-28" in n and "2024-11-01" in n and "当时已公布、尚未施行" in n for n in w["notes"])
    assert w["temporal"] == ["时点：2024-08-01（依据筛选条件）"]


def test_a_day_still_to_come_is_said_to_be_so(run: dict[str, Any]) -> None:
    f = step(run, "future")
    assert f["temporal"] == ["时点：2035-06-01（依据筛选条件；尚未到来，引文为现有文本届时的状态）"]
    assert any("2035-06-01尚未到来" in n for n in f["notes"]), f["notes"]


def test_abstention_shows_the_message_and_no_quotes(run: dict[str, Any]) -> None:
    s = step(run, "abstain")
    assert (
        s["abstain_visible"] and "未找到相关规定" in s["abstain_text"] and "本次没有引用任何条文" in s["abstain_text"]
    )
    assert s["bullets"] == 0


def test_errors_are_shown_with_the_servers_message(run: dict[str, Any]) -> None:
    e = step(run, "errors")
    assert "请输入问题" in e["empty"]
    assert "请输入问题" in e["no_words"] and "问题里没有文字" in e["no_words"] and "请用中文提问" not in e["no_words"]
    # too long: said by the page, in its words, before anything is sent
    assert "问题过长" in e["too_long"]["error"] and "超过 2000 字" in e["too_long"]["error"]
    assert "超出上限" in e["too_long"]["counter"] and e["too_long"]["answer_hidden"]
    assert "请求无效，请检查问题和筛选条件（HTTP 400）" in e["refused"] and "not a valid date" in e["refused"]
    assert e["cancelled"] == {
        "error": "已取消检索已取消，未显示任何结果。",
        "progress_hidden": True,
        "search_enabled": True,
        "announced": "检索已取消。",
    }
    assert "网络错误" in e["network"] and "无法连接服务器" in e["network"]
    assert "HTTP 503" in e["all_failed"]["error"]
    assert [(c["corpus"], c["status"]) for c in e["all_failed"]["cards"]] == [(BROKEN, "error")]


def test_page_can_use_an_api_on_another_origin(run: dict[str, Any]) -> None:
    c = step(run, "cross_origin")
    assert c["note_visible"] and c["note"] == f"数据来源：{c['api']}"
    assert c["corpora"] == 3 and c["query_url"] == f"{c['api']}/query"
    assert c["error_hidden"] and "〔《电力供应与使用条例》第二十八条第（一）项，生效：2019-03-02〕" in c["markers"]


def test_the_answer_comes_first_and_how_it_was_found_is_folded(run: dict[str, Any]) -> None:
    """On a phone the first quote is on the first screen; corpus cards and candidate articles wait behind
    依据与检索详情 (they made the page 10,666 px long)."""
    a = step(run, "answer_first")
    folded, opened = a["folded"], a["opened"]
    assert folded["answer"]["top"] < folded["details"]["top"] and folded["summary"] == "依据与检索详情"
    assert not folded["details_open"] and not folded["cards_visible"] and not folded["evidence_visible"]
    assert folded["first_quote"]["top"] < 2 * 844  # within two screens of the top, search form included
    assert opened["cards_visible"] and opened["evidence_visible"]
    assert folded["page_height"] < opened["page_height"] / 2
    empty = a["empty_error"]  # an empty question's message was 1,400 px below the screen: nothing seemed to happen
    assert 0 <= empty["top"] < empty["viewport"] and empty["bottom"] > 0, empty


def test_provinces_are_a_multi_select_that_keeps_national_rules(run: dict[str, Any]) -> None:
    p = step(run, "provinces")
    assert p["ticked"] == {"national": True, "summary": "全国、上海"}  # ticking 上海 ticked national rules too
    assert p["with_national"]["request"]["filters"]["province"] == ["national", "sh"]
    assert "province=national%2Csh" in p["with_national"]["address"]
    # unticked on purpose, national rules stay out, even when another province is ticked afterwards
    assert p["without_national"]["request"]["filters"]["province"] == ["sh", "gd"]
    assert p["without_national"]["national"] is False and "province=sh%2Cgd" in p["without_national"]["address"]
    # the page's own tick of national rules goes with the last province unticked: no filter is left behind
    assert p["unticked_all"] == {"national": False, "summary": "不限"}


def test_the_library_lists_its_documents_and_opens_them(run: dict[str, Any]) -> None:
    lib = step(run, "library")
    assert lib["summary"].startswith("库中文件（") and lib["corpora"]
    assert any("《上海市供用电条例》" in d and "上海" in d and "现行" in d for d in lib["docs"]), lib["docs"]
    assert any("已被取代" in d for d in lib["docs"])  # the older version of a chain, listed as such
    # a date the text does not record is listed as one to check, as the citations mark it
    assert any("《上海市供用电条例》" in d and "（待核）" in d for d in lib["docs"]), lib["docs"]
    assert lib["opened"] == "《上海市供用电条例》"
    assert abs(lib["phone_top"]) < 844 / 2, lib["phone_top"]  # on a phone the page went to the document
    # a corpus's place, read from its documents, beside the operator's name for it
    assert any(n.startswith("shanghai（上海）") for n in lib["names"]) and any(
        n.startswith("national（全国）") for n in lib["names"]
    )


def test_a_shared_address_restores_the_search_and_asks_it(run: dict[str, Any]) -> None:
    s = step(run, "shared_address")
    assert s["question"] == "供电企业因计划检修需要停电，应当提前几天通知用户？"
    assert sorted(s["provinces"]) == ["national", "sh"] and s["doc_class"] == "grid" and s["as_of"] == "2020-01-01"
    assert sorted(s["corpora"]) == ["national", "shanghai"]
    assert s["request"] == {
        "question": s["question"],
        "filters": {"province": ["national", "sh"], "doc_class": ["grid"], "as_of": "2020-01-01"},
        "corpora": ["national", "shanghai"],
    }


def test_the_copy_button_copies_the_quote_with_its_complete_citation(run: dict[str, Any]) -> None:
    c = step(run, "copy")
    assert c["copied"] == f"{c['span']}{c['marker']}" and c["button"] == "已复制"
    assert "第二十八条" in c["marker"] and "，生效：2019-03-02〕" in c["marker"]


def test_screenshots_are_saved(run: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert not run["errors"], list(run["errors"])
    shots = [Path(p) for p in run["screenshots"]]
    assert {p.name for p in shots} >= {
        "results.png",
        "article.png",
        "corpus-status.png",
        "error-503.png",
        "phone-answer.png",
    }
    assert all(p.stat().st_size > 10_000 for p in shots)
    with capsys.disabled():
        print("\nbrowser screenshots:\n  " + "\n  ".join(str(p) for p in shots))


def test_a_low_confidence_answer_says_so_above_its_quotes(run: dict[str, Any]) -> None:
    low = run["steps"]["low_confidence"]
    assert low["bullets"] > 0 and low["caution_first"], low
    assert low["caution"] == ["提示：检索置信度较低，以下引文可能并未直接回答该问题，请核对原文或调整问题。"]
    # an answer that is not low-confidence carries no such line
    assert low["caution_when_not_low"] == 0 and "置信度：低" not in low["level_when_not_low"], low


def test_the_province_list_folds_once_the_search_is_made_and_scrolls_while_open(run: dict[str, Any]) -> None:
    folds = run["steps"]["picker_folds"]
    assert folds["open_after_search"] is False and folds["summary"] == "全国、上海", folds
    assert folds["list_overflow"] == "auto"
    assert abs(folds["superseded_offset"]) <= 24, folds  # level with the date input, the list open beside it
