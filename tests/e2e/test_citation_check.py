"""The citation check on an ingested sample (hash embedder): every status code, as of the memo's own date."""

from __future__ import annotations

import pytest

from regrag.check.run import check_text

from conftest import ingest_sample

DOCS = [
    "nat-law-0069",  # 电力法
    "nat-reg-0091",  # 电力设施保护条例 (32 articles)
    "nat-reg-0034",  # 保障中小企业款项支付条例 2020 …
    "nat-reg-0035",  # … and its 2025 revision (公布 2025-03-17, 施行 2025-06-01)
    "sd-0127",  # 青岛市实施《水法》若干规定 (2011) …
    "sd-0126",  # … replaced by 青岛市实施《水法》的若干规定 (2017-12-01)
    "sh-0001",  # 上海市供用电条例
    "ha-0001",  # 河南省供用电条例
    "nat-reg-0088",  # 电力供应与使用条例
    "nat-law-0072",  # 矿产资源法 2009 …
    "nat-law-0073",  # … revised 2024-11-08, in force 2025-07-01 (old 第三条 is now 第四条, reworded)
]

MEMO = """日期：2025年9月3日

一、依《中华人民共和国电力法》第十条，电力发展规划应当纳入规划。《电力法》第十一条规定：“城市电网的建设与改造规划，应当纳入城市总体规划。”
二、依《电力设施保护条例》第十五条第（三）项，保护区内“不得兴建建筑物、构筑物”。《条例》第三十五条另有规定。依《条例》第十五条第（九）项处理。
三、《电力设施保护条例》第十五条亦规定，“不得兴建高层建筑物”。依《电力法》第十条，“城市电网的建设与改造规划，应当纳入城市总体规划”。
四、《保障中小企业款项支付条例》第八条规定，“机关、事业单位从中小企业采购货物、工程、服务，应当自货物、工程、服务交付之日起30日内支付款项”；依《条例》第十七条，“未作约定的，按照每日利率万分之五支付逾期利息”。
五、依《中华人民共和国仲裁法》第十六条申请仲裁；依《中华人民共和国企业欠款清偿法》第九条报送。依《供用电条例》第十条公示。
六、《青岛市实施〈中华人民共和国水法〉若干规定》第八条。
"""


@pytest.fixture
def sample(hash_services):
    ingest_sample(hash_services, DOCS)
    return hash_services


def statuses(report):
    return [(c["text"], c["status"]) for c in report["citations"]]


def test_every_status_as_of_the_memo_date(sample):
    report = check_text(MEMO, sample.store)
    assert report["as_of"] == "2025-09-03" and report["as_of_source"] == "document"
    assert statuses(report) == [
        ("《中华人民共和国电力法》第十条", "ok"),
        ("《电力法》第十一条", "ok"),
        ("《电力设施保护条例》第十五条第（三）项", "ok"),
        ("《条例》第三十五条", "article_missing"),
        ("《条例》第十五条第（九）项", "article_missing"),
        ("《电力设施保护条例》第十五条", "quote_mismatch"),
        ("《电力法》第十条", "quote_elsewhere"),
        ("《保障中小企业款项支付条例》第八条", "superseded"),
        ("《条例》第十七条", "ok"),
        ("《中华人民共和国仲裁法》第十六条", "unknown_law"),
        # after the catalogue's date a new law may bear the title: unverifiable, not denied
        ("《中华人民共和国企业欠款清偿法》第九条", "unknown_law"),
        ("《供用电条例》第十条", "ambiguous"),
        ("《青岛市实施〈中华人民共和国水法〉若干规定》第八条", "superseded"),
    ]
    by_text = {c["text"]: c for c in report["citations"]}
    for c in report["citations"]:
        assert MEMO[c["start"] : c["end"]] == c["text"]
    short = by_text["《电力法》第十一条"]
    assert short["doc_id"] == "nat-law-0069" and short["quotes"][0]["match"] == "verbatim"
    missing = by_text["《条例》第三十五条"]
    assert missing["doc_id"] == "nat-reg-0091" and missing["evidence"]["articles"] == 32
    assert missing["evidence"]["last_article"] == "第三十二条" and missing["antecedent"] is not None
    mismatch = by_text["《电力设施保护条例》第十五条"]
    closest = mismatch["quotes"][0]["closest"]
    stored = sample.store.get_document("nat-reg-0091")[1]
    assert closest["text"] in stored and "不得兴建建筑物" in closest["text"]
    assert {"op": "delete", "quote": "高层", "law": ""} in mismatch["quotes"][0]["diff"]
    elsewhere = by_text["《电力法》第十条"]
    assert [f["article"] for f in elsewhere["quotes"][0]["found_in"]] == ["第十一条"]
    superseded = by_text["《保障中小企业款项支付条例》第八条"]
    assert superseded["doc_id"] == "nat-reg-0034"
    assert superseded["evidence"]["successor"]["doc_id"] == "nat-reg-0035"
    assert superseded["evidence"]["successor"]["effective_date"] == "2025-06-01"
    assert superseded["evidence"]["counterpart"]["article"] == "第九条"
    assert any(d["op"] != "equal" for d in superseded["evidence"]["diff"])
    assert by_text["《条例》第十七条"]["doc_id"] == "nat-reg-0035"
    assert by_text["《中华人民共和国仲裁法》第十六条"]["evidence"]["in_catalogue"] is True
    ambiguous = by_text["《供用电条例》第十条"]["evidence"]["candidates"]
    assert {c["doc_id"] for c in ambiguous} == {"sh-0001", "ha-0001"}
    pinned = by_text["《青岛市实施〈中华人民共和国水法〉若干规定》第八条"]
    assert pinned["doc_id"] == "sd-0127" and pinned["evidence"]["successor"]["doc_id"] == "sd-0126"
    assert report["summary"]["citations"] == 13 and report["summary"]["ok"] == 4


def test_as_of_before_a_revision_takes_effect(sample):
    memo = (
        "依2025年3月修订的《保障中小企业款项支付条例》第九条第二款，"
        "“不得约定以收到第三方付款作为向中小企业支付款项的条件”；"
        "《保障中小企业款项支付条例》第十一条。《中华人民共和国企业欠款清偿法》第九条。"
    )
    report = check_text(memo, sample.store, as_of="2025-04-15")
    assert report["as_of_source"] == "request"
    assert statuses(report) == [
        ("《保障中小企业款项支付条例》第九条第二款", "not_yet_in_force"),
        ("《保障中小企业款项支付条例》第十一条", "ok"),
        ("《中华人民共和国企业欠款清偿法》第九条", "wrong_title"),
    ]
    early = report["citations"][0]
    assert early["doc_id"] == "nat-reg-0035" and early["evidence"]["in_force_then"]["doc_id"] == "nat-reg-0034"
    # the version in force then, with the newer one already promulgated, is named as upcoming
    assert report["citations"][1]["evidence"]["upcoming"]["doc_id"] == "nat-reg-0035"


def test_a_quotation_after_a_list_belongs_to_the_article_that_holds_it(sample):
    memo = "《电力法》第十条、第十一条规定：“城市电网的建设与改造规划，应当纳入城市总体规划。”"
    report = check_text(memo, sample.store, as_of="2025-01-01")
    assert [(c["text"], c["status"]) for c in report["citations"]] == [
        ("《电力法》第十条", "ok"),
        ("第十一条", "ok"),
    ]
    assert [q["match"] for q in report["citations"][1]["quotes"]] == ["verbatim"]
    assert report["citations"][0]["quotes"] == []  # the quotation is 第十一条's, not checked against 第十条


def test_a_quotation_of_another_law_is_found_there(sample):
    # 电力供应与使用条例 第二十八条 (一), quoted as if it were 电力法 第二十八条
    memo = "依《中华人民共和国电力法》第二十八条，“因供电设施计划检修需要停电时，供电企业应当提前7天通知用户”。"
    report = check_text(memo, sample.store, lexical=sample.lexical, as_of="2025-01-01")
    (citation,) = report["citations"]
    assert citation["status"] == "quote_elsewhere"
    assert [(f["doc_id"], f["article"]) for f in citation["quotes"][0]["found_in"]] == [("nat-reg-0088", "第二十八条")]
    assert "《电力供应与使用条例》第二十八条" in citation["message"]
    # without the lexical index the same quotation can only be compared with the article cited
    assert check_text(memo, sample.store, as_of="2025-01-01")["citations"][0]["status"] == "quote_mismatch"


def test_a_superseded_provision_is_followed_into_the_article_that_now_holds_it(sample):
    memo = (
        "日期：2025年8月1日\n《中华人民共和国矿产资源法》第三条第一款规定：“矿产资源属于国家所有，"
        "由国务院行使国家对矿产资源的所有权。”\n《中华人民共和国矿产资源法》（2009年修正）第三条。"
    )
    first, second = check_text(memo, sample.store)["citations"]
    assert first["status"] == second["status"] == "superseded" and first["doc_id"] == "nat-law-0072"
    # the whole article matches no article of the 2024 text; the quoted sentence is in its 第四条, reworded
    moved = first["evidence"]["counterpart"]
    assert moved["article"] == "第四条" and moved["matched_on"] == "cited_part"
    assert "由国务院代表国家行使" in moved["span"]["text"]
    changes = [d for d in first["evidence"]["diff"] if d["op"] != "equal"]
    assert changes == [{"op": "insert", "old": "", "new": "代表国家"}, {"op": "delete", "old": "国家对", "new": ""}]
    assert "对应条文为第四条" in first["message"]


def test_an_unquoted_citation_of_a_number_whose_article_moved_in_the_revision_is_told_where_it_went(sample):
    # dated after the 2024 text took effect: its 第三条 is valid, but the 2009 第三条 (ownership) is now 第四条
    memo = "日期：2025年8月1日\n依《中华人民共和国矿产资源法》第三条，矿产资源属于国家所有。"
    [found] = check_text(memo, sample.store)["citations"]
    assert found["status"] == "ok" and found["doc_id"] == "nat-law-0073" and found["caution"]
    assert found["evidence"]["renumbered"]["article"] == "第四条"
    assert "注意：旧版本（施行：2009-08-27）的第三条，在本版本中为第四条" in found["message"]
    # an article whose number held the same text before says nothing of it
    [same] = check_text("日期：2025年8月1日\n依《电力法》第十一条。", sample.store)["citations"]
    assert same["status"] == "ok" and "renumbered" not in same["evidence"]


def test_a_figure_the_memo_gives_an_article_in_its_own_words_is_checked_against_the_article(sample):
    """A paraphrase that changed 提前7天 into 提前3天 is not a quotation, so nothing else compares it: the citation
    stays ok (the article exists, in force) with a caution naming the figure and what the article says."""
    memo = (
        "日期：2025年3月1日\n"
        "一、根据《电力供应与使用条例》第二十八条，供电企业因计划检修停电应提前3天通知用户。\n"
        "二、依《电力供应与使用条例》第二十八条，临时检修停电应提前二十四小时通知重要用户。\n"
        "三、窃电的，可处应交电费十倍的罚款（《电力供应与使用条例》第四十一条）。\n"
        "四、依《电力供应与使用条例》第四十一条，窃电的处应交电费三倍罚款；本项目于2024年5月建成。\n"
    )
    report = check_text(memo, sample.store)
    three_days, hours, tenfold, threefold = report["citations"]
    assert [c["status"] for c in report["citations"]] == ["ok"] * 4
    assert three_days["caution"] and three_days["evidence"]["unstated_figures"] == {
        "said": ["3天"],
        "article": ["7天", "24小时"],
    }
    assert "注意：文书此处所写的“3天”不见于该条（该条所写：7天、24小时），请以原文核对。" in three_days["message"]
    assert tenfold["caution"] and tenfold["evidence"]["unstated_figures"]["said"] == ["十倍"]  # cited in brackets after
    # the article's own figure in other words (二十四小时), one its bound admits (5倍以下), a calendar date: no caution
    assert not hours["caution"] and not threefold["caution"] and "unstated_figures" not in threefold["evidence"]
    assert report["summary"]["cautions"] == 2 and report["summary"]["problems"] == 0


def test_no_citation_and_no_date(sample):
    report = check_text("本合同第三条约定的价款，应于十日内付清。", sample.store)
    assert report["citations"] == [] and report["as_of_source"] == "today"
    assert report["summary"]["problems"] == 0
