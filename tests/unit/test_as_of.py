"""A date in the question is an as-of date; an explicit filter wins; a date that names a version is not one."""

from __future__ import annotations

import datetime as dt

import pytest

from regrag.domain.models import DocumentMeta, Filters
from regrag.query.temporal import (
    RULE_ACT,
    RULE_THEN,
    SOURCE_FILTER,
    SOURCE_QUESTION,
    SOURCE_REVISION,
    SOURCE_TODAY,
    notes,
    resolve_as_of,
)

TODAY = dt.date(2026, 11, 24)


@pytest.mark.parametrize(
    ("question", "as_of", "words"),
    [
        ("2020年的时候，企业没按规定落实预防措施会受到什么处罚？", "2020-12-31", "2020年"),
        ("在2015年，公司股东认缴出资的期限是多少年？", "2015-12-31", "2015年"),
        ("截至2019年6月，分布式光伏并网要什么手续？", "2019-06-30", "2019年6月"),
        ("2024年3月1日时公司股东认缴出资的期限", "2024-03-01", "2024年3月1日"),
        ("二〇一五年的时候电力法怎么规定", "2015-12-31", "二〇一五年"),
        ("2015年以前企业排污怎么处罚", "2014-12-31", "2015年以前"),
        ("2018年初煤矿安全怎么监察", "2018-01-01", "2018年初"),
    ],
)
def test_a_moment_the_question_names(question: str, as_of: str, words: str) -> None:
    filters, found = resolve_as_of(question, Filters(), today=TODAY)
    assert filters.as_of == as_of and found.date == as_of and found.source == SOURCE_QUESTION
    assert found.text == words and found.rule


@pytest.mark.parametrize(
    "question",
    [
        "2019年修订的条例规定了什么？",  # names a version
        "本法自2024年7月1日起施行，施行后怎么规定？",  # quotes a clause
        "2018年版的条例规定了什么",
        "2030年会怎样规定",  # the future is not an as-of date
        "分布式光伏并网要满足什么条件？",
    ],
)
def test_dates_that_are_not_moments(question: str) -> None:
    filters, found = resolve_as_of(question, Filters(), today=TODAY)
    assert filters.as_of is None and found.source == SOURCE_TODAY and found.date == TODAY.isoformat()


def test_an_explicit_filter_wins() -> None:
    filters, found = resolve_as_of("2015年的时候怎么规定", Filters(as_of="2020-01-01"), today=TODAY)
    assert filters.as_of == "2020-01-01" and found.source == SOURCE_FILTER


def test_before_a_revision_of_a_named_act() -> None:
    old = DocumentMeta("a", "中华人民共和国突发事件应对法", "2007-11-01", "2024-11-01", superseded_by="b")
    new = DocumentMeta("b", "中华人民共和国突发事件应对法", "2024-11-01", supersedes="a")
    asked = []

    def documents() -> list[DocumentMeta]:
        asked.append(True)
        return [old, new]

    filters, found = resolve_as_of("突发事件应对法修订前，企业不落实预防措施怎么处罚？", Filters(), documents, TODAY)
    assert filters.as_of == "2024-10-31" and found.source == SOURCE_REVISION and "突发事件应对法" in (found.text or "")
    resolve_as_of("突发事件应对法怎么处罚？", Filters(), documents, TODAY)
    assert len(asked) == 1  # the store is read only when the question speaks of a revision


def test_a_day_still_to_come_is_flagged_and_told() -> None:
    """A 2035 answer is the law as known today: the reader is told it may change before then."""
    _, future = resolve_as_of("窃电怎么处罚", Filters(as_of="2035-06-01"), today=TODAY)
    assert future.after_today and future.to_dict()["after_today"] is True
    assert any("2035-06-01尚未到来" in line for line in notes(future))
    _, past = resolve_as_of("窃电怎么处罚", Filters(as_of="2015-06-01"), today=TODAY)
    assert not past.after_today and "after_today" not in past.to_dict() and notes(past) == ()
    _, today = resolve_as_of("窃电怎么处罚", Filters(), today=TODAY)
    assert not today.after_today and notes(today) == ()


def test_a_version_the_question_names_by_its_year_or_as_in_force_then() -> None:
    """根据2007年版突发事件应对法: the text of that year, not today's; 2015年有效的…: the law of that year."""
    old = DocumentMeta(
        "a", "中华人民共和国突发事件应对法", "2007-11-01", "2024-11-01", superseded_by="b", promulgated="2007-08-30"
    )
    new = DocumentMeta("b", "中华人民共和国突发事件应对法", "2024-11-01", supersedes="a", promulgated="2024-06-28")
    filters, found = resolve_as_of("根据2007年版突发事件应对法，罚款多少？", Filters(), lambda: [old, new], TODAY)
    assert filters.as_of == "2007-11-01" and found.source == SOURCE_REVISION and "2007年版" in (found.text or "")
    filters, found = resolve_as_of("按2024年修订的突发事件应对法，罚款多少？", Filters(), lambda: [old, new], TODAY)
    assert filters.as_of == "2024-11-01"
    filters, found = resolve_as_of("按照2015年有效的突发事件应对法，罚款多少？", Filters(), lambda: [old, new], TODAY)
    assert filters.as_of == "2015-12-31" and found.source == SOURCE_QUESTION
    # the year a version took effect names it too (a new user's 2007年施行的…, read as no date before)
    filters, found = resolve_as_of("2007年施行的突发事件应对法对单位罚款多少？", Filters(), lambda: [old, new], TODAY)
    assert filters.as_of == "2007-11-01" and "2007年施行" in (found.text or "")
    # by the year it took effect, not the year it was published: 消耗臭氧层物质管理条例 2023 took effect in 2024
    ods = DocumentMeta("c", "消耗臭氧层物质管理条例", "2024-03-01", promulgated="2023-12-29")
    filters, _ = resolve_as_of("2024年施行的消耗臭氧层物质管理条例怎么规定的？", Filters(), lambda: [ods], TODAY)
    assert filters.as_of == "2024-03-01"
    _, none = resolve_as_of("2023年施行的消耗臭氧层物质管理条例怎么规定的？", Filters(), lambda: [ods], TODAY)
    assert none.source == SOURCE_TODAY
    # a year with no version of the named act: nothing is assumed
    _, none = resolve_as_of("根据2010年版突发事件应对法，罚款多少？", Filters(), lambda: [old, new], TODAY)
    assert none.source == SOURCE_TODAY


@pytest.mark.parametrize(
    ("question", "penalty", "as_of", "rule"),
    [
        # 当时 points back to the date the question tells
        ("我们公司2019年无证生产了一批产品，按当时的规定罚多少？", False, "2019-12-31", RULE_THEN),
        ("公司2021年夜间违规施工被查，那时候的罚则是什么？", False, "2021-12-31", RULE_THEN),
        # the penalty for an act the question dates is the law's in force when it was done
        ("2019年无生产配额许可证生产消耗臭氧层物质罚多少？", True, "2019-12-31", RULE_ACT),
    ],
)
def test_a_date_the_question_tells_sets_the_day_when_it_points_back_or_dates_the_act_punished(
    question: str, penalty: bool, as_of: str, rule: str
) -> None:
    filters, found = resolve_as_of(question, Filters(), today=TODAY, penalty_asked=penalty)
    assert filters.as_of == as_of and found.source == SOURCE_QUESTION and found.rule == rule
    assert found.unused is None
    told = notes(found)
    assert any("行政处罚法第三十七条" in line for line in told) == (rule == RULE_ACT)


@pytest.mark.parametrize(
    "question",
    [
        # a date told before the act and its question: when the company was founded, not when it built
        "我们公司2015年成立，主要做化工，去年没办环评就开工了，罚多少？",
        # two dates: which one the act has is left open
        "2019年无证生产消耗臭氧层物质，2021年被查处，罚多少？",
    ],
)
def test_a_date_that_may_not_be_the_acts_does_not_set_the_day_of_its_penalty(question: str) -> None:
    filters, found = resolve_as_of(question, Filters(), today=TODAY, penalty_asked=True)
    assert filters.as_of is None and found.source == SOURCE_TODAY and found.unused


def test_a_date_told_and_not_used_is_said_so() -> None:
    filters, found = resolve_as_of("2019年建成的光伏电站需要办理什么手续？", Filters(), today=TODAY)
    assert filters.as_of is None and found.source == SOURCE_TODAY and found.unused == "2019年"
    assert any("问题提到“2019年”，未据此设定时点" in line and "2019年时" in line for line in notes(found))
    assert found.to_dict()["unused"] == "2019年"
    # a question that says it asks about now is answered with today's law, with nothing to say of its date
    now = "2019年无证生产的企业，现在会被罚多少？"
    filters, found = resolve_as_of(now, Filters(), today=TODAY, penalty_asked=True)
    assert filters.as_of is None and found.source == SOURCE_TODAY and found.unused is None and not notes(found)
