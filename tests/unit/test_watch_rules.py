"""The rules behind watches and exports, one at a time: article labels as users type them, which saved questions
a document could change, which documents a question's filters admit, ids, request parsing, the export writers."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from importlib import resources

import docx
import pytest

from regrag.domain.errors import InvalidInput
from regrag.domain.models import DocumentMeta, Filters
from regrag.domain.watches import SavedQuestion, alert_id_for, could_cite, filters_from_dict, watch_id_for
from regrag.ingest.alerts import could_change, where_it_went
from regrag.inputs.parse import parse_alerts_query, parse_export_format, parse_watch_request
from regrag.ops.exports.docx import to_docx
from regrag.ops.exports.labels import FILTER_VALUES, filter_summary, version_words
from regrag.ops.exports.markdown import to_markdown
from regrag.ops.exports.memo import Link, Memo, Quote, Table, para
from regrag.ops.watches import document_link, question_link
from regrag.text.legal import canonical_article_label
from regrag.text.terms import question_words
from regrag.views.version_diff import Article

TODAY = dt.date(2026, 11, 26)


@pytest.mark.parametrize(
    ("typed", "label"),
    [
        ("第三条", "第三条"),
        ("第3条", "第三条"),
        ("3", "第三条"),
        (" 第 12 条 ", "第十二条"),
        ("第１２条", "第十二条"),
        ("第十条之一", "第十条之一"),
        ("10之1", "第十条之一"),
        ("第一百零五条", "第一百零五条"),
        ("第0条", None),
        ("附件三", None),
        ("第三章", None),
    ],
)
def test_an_article_is_read_as_users_type_it(typed, label):
    assert canonical_article_label(typed) == label


def meta(**kw) -> DocumentMeta:
    values = {"doc_id": "sd-0090", "title": "济南市电力管理条例", "province": "sd", "effective_date": "2011-07-29"}
    return DocumentMeta(**{**values, **kw})


def test_a_questions_filters_admit_the_documents_it_could_quote():
    assert could_cite(Filters(), meta(), TODAY)
    assert could_cite(Filters(province=("sd", "national")), meta(), TODAY)
    assert not could_cite(Filters(province=("national",)), meta(), TODAY)
    assert not could_cite(Filters(asset=("solar",)), meta(), TODAY)
    assert not could_cite(Filters(date_from="2012-01-01"), meta(), TODAY)
    assert not could_cite(Filters(), meta(effective_to="2020-01-01"), TODAY)  # no longer in force today
    assert could_cite(Filters(as_of="2019-01-01"), meta(effective_to="2020-01-01"), TODAY)
    assert could_cite(Filters(include_superseded=True), meta(effective_to="2020-01-01"), TODAY)
    assert not could_cite(Filters(), meta(effective_date="2027-01-01"), TODAY)  # not yet in force


def test_saved_questions_are_asked_again_when_a_document_holds_enough_of_their_words():
    text = "第三十条 供电企业因计划检修需要停电时，应当提前七日通知用户。"
    saved = [
        SavedQuestion("w1", tuple(question_words("供电企业计划检修停电要提前几天通知用户？")), {}),
        SavedQuestion("w2", tuple(question_words("光伏项目如何并网？")), {}),
        SavedQuestion("w3", tuple(question_words("供电企业计划检修停电要提前几天通知用户？")), {"province": ["sh"]}),
        SavedQuestion("w4", (), {}),  # no words to judge by: asked again
        SavedQuestion("w5", ("供电", "光伏", "风电", "煤炭"), {}),
    ]
    chosen = could_change(saved, meta(), text, TODAY, 0.3)
    assert [(q.watch_id, round(share, 2)) for q, share in chosen] == [("w4", 1.0), ("w1", 0.91)]  # most likely first
    # w5 holds 1/4 of its words, w3's filters say no
    assert [q.watch_id for q, _ in could_change(saved, meta(), text, TODAY, 0.25)] == ["w4", "w1", "w5"]


def test_the_share_of_question_words_is_measured_against_the_title_too():
    saved = [SavedQuestion("w1", ("济南", "电力管理"), {})]
    assert could_change(saved, meta(), "第一条 为了加强管理，制定本条例。", TODAY, 1.0) == [(saved[0], 1.0)]


def test_a_split_article_is_found_where_its_lines_went():
    old = (
        "第三条 矿产资源属于国家所有，由国务院行使国家对矿产资源的所有权。\n\n"
        "勘查、开采矿产资源，必须依法取得探矿权、采矿权。"
    )
    new = [
        Article(
            "第一条", "第一条 为了促进矿产资源合理开发利用，制定本法。", "为了促进矿产资源合理开发利用，制定本法。"
        ),
        Article("第四条", "第四条 矿产资源属于国家所有，由国务院代表国家行使矿产资源的所有权。", "…"),
        Article("第九条", "第九条 勘查、开采矿产资源，应当依法取得探矿权、采矿权。", "…"),
    ]
    found = where_it_went(old, new)
    assert [f["article"] for f in found] == ["第四条", "第九条"]
    assert all(0.6 <= f["similarity"] <= 1 for f in found)
    assert where_it_went("第五条 本条与新法毫无关系的一段长长的文字内容。", new) == []


def test_ids_are_stable_and_say_what_they_follow():
    a = watch_id_for("article", "nat-law-0072", "第三条", None, {}, "x@example.com")
    assert a == watch_id_for("article", "nat-law-0072", "第三条", None, {}, "x@example.com")
    assert a != watch_id_for("article", "nat-law-0072", "第三条", None, {}, None)
    assert re.fullmatch(r"w[0-9a-f]{23}", a)
    first = alert_id_for(a, "article_changed", ("nat-law-0072", "h1"), ("nat-law-0073", "h2"))
    assert first == alert_id_for(a, "article_changed", ("nat-law-0072", "h1"), ("nat-law-0073", "h2"))
    assert first != alert_id_for(a, "article_changed", ("nat-law-0072", "h1"), ("nat-law-0073", "h3"))
    assert filters_from_dict({"province": ["sd"], "as_of": "2024-01-01", "unknown": 1}) == Filters(
        province=("sd",), as_of="2024-01-01"
    )


def test_watch_requests_are_parsed_and_checked():
    request = parse_watch_request({"question": " 光伏项目如何并网？ ", "filters": {"province": "sd,national"}})
    assert request.question == "光伏项目如何并网？" and request.filters.province == ("sd", "national")
    assert parse_watch_request({"doc_id": "nat-law-0072", "article": "3", "owner": " a@b.c "}).owner == "a@b.c"
    with pytest.raises(InvalidInput, match="owner"):
        parse_watch_request({"doc_id": "nat-law-0072", "owner": "a\nb"})


def test_alert_queries_read_days_and_times_as_utc():
    assert parse_alerts_query({}).limit == 100 and parse_alerts_query({}).format == "json"
    assert parse_alerts_query({"since": "2026-11-01"}).since == "2026-11-01"
    assert parse_alerts_query({"since": "2026-11-01T08:00:00Z"}).since == "2026-11-01T08:00:00+00:00"
    assert parse_alerts_query({"since": "2026-11-01T16:00:00+08:00"}).since == "2026-11-01T08:00:00+00:00"
    assert parse_alerts_query({"since": "2026-11-01 08:00:00"}).since == "2026-11-01T08:00:00+00:00"
    with pytest.raises(InvalidInput, match="since"):
        parse_alerts_query({"since": "2026-13-01"})
    assert parse_export_format({}) == "docx" and parse_export_format({"format": "md"}) == "md"


def test_links_back_to_the_page():
    assert document_link("https://r.example/", "nat-law-0073", "第四条") == (
        "https://r.example/?doc=nat-law-0073&article=%E7%AC%AC%E5%9B%9B%E6%9D%A1"
    )
    assert document_link("https://r.example", "a b") == "https://r.example/?doc=a%20b"
    link = question_link("https://r.example/", "并网？", {"province": ["sd", "national"], "as_of": "2024-01-01"})
    assert link == "https://r.example/?q=%E5%B9%B6%E7%BD%91%EF%BC%9F&province=sd,national&as_of=2024-01-01"


def test_export_labels_are_the_pages():
    app = resources.files("regrag.web").joinpath("app.js").read_text(encoding="utf-8")
    vocab = json.loads(re.search(r"/\* vocab:begin \*/(.*?)/\* vocab:end \*/", app, re.S).group(1))
    for key, labels in vocab.items():
        assert {code: FILTER_VALUES[key][code] for code in labels} == labels
    assert (
        filter_summary({"province": ["sh", "national"], "doc_class": ["grid"]})
        == "地区：上海、全国；文件类别：电网与供用电"
    )
    assert filter_summary({}) == "无"
    successor = {"title": "新法", "promulgated": "2024-11-08", "effective_date": "2025-07-01"}
    assert version_words({"version_status": "superseded", "successor": successor}) == (
        "已被新版本取代（新版本《新法》，公布：2024-11-08，施行：2025-07-01）"
    )
    assert version_words({}) == "现行有效"


MEMO = Memo(
    "测试",
    (
        para("检索编号 1", label="问题："),
        Quote("第一条 甲|乙\n（一）丙；", 1),
        para(Link("《条例》第一条", "https://r.example/?doc=a&article=b"), label="原文："),
        Table(("变化", "原条文"), (("修改", "第一条 a|b\n第二款"),)),
    ),
)


def test_markdown_keeps_quotes_verbatim_and_tables_whole():
    text = to_markdown(MEMO)
    assert "> 第一条 甲|乙\n> （一）丙；" in text  # no escaping inside a quote
    assert "| 修改 | 第一条 a\\|b<br>第二款 |" in text
    assert "**原文：**[《条例》第一条](<https://r.example/?doc=a&article=b>)" in text


def test_docx_keeps_quotes_verbatim_and_links_clickable():
    document = docx.Document(io.BytesIO(to_docx(MEMO)))
    texts = [p.text for p in document.paragraphs]
    assert texts[0] == "测试" and "1. 第一条 甲|乙\n（一）丙；" in texts
    [link] = [h for p in document.paragraphs for h in p.hyperlinks]
    assert (link.text, link.url) == ("《条例》第一条", "https://r.example/?doc=a&article=b")
    assert [[c.text for c in r.cells] for r in document.tables[0].rows] == [
        ["变化", "原条文"],
        ["修改", "第一条 a|b\n第二款"],
    ]
    fonts = document.styles["Normal"].element.rPr.rFonts
    assert fonts.get("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}eastAsia") == "宋体"


def test_a_batch_asks_the_likeliest_saved_questions_first_within_its_budget():
    from regrag.ingest.alerts import CITES_CHANGED, QuestionBacklog

    backlog = QuestionBacklog()
    assert not backlog.active
    with backlog.batch():
        assert backlog.active
        backlog.add([("w1", 0.4), ("w2", 0.9)], "doc-a")
        backlog.add([("w1", 0.8), ("w3", CITES_CHANGED)], "doc-b")
        backlog.add([], "doc-c")
    assert backlog.take() == ([("w3", "doc-b"), ("w2", "doc-a"), ("w1", "doc-b")], 3)
    assert backlog.take() == ([], 0)
