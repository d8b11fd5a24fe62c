"""Entry into force and promulgation, read from a regulation's own text."""

from __future__ import annotations

import pytest

from regrag.text.dates import (
    BASIS_AFTER_PROMULGATION,
    BASIS_AMENDMENT,
    BASIS_HEADER,
    BASIS_NONE,
    BASIS_ON_PROMULGATION,
    BASIS_TEXT,
    entry_into_force,
)
from regrag.text.numerals import find_dates, parse_date_parts, to_iso


@pytest.mark.parametrize(
    ("y", "m", "d", "iso"),
    [
        ("2024", "7", "1", "2024-07-01"),
        ("２０２４", "０７", "０１", "2024-07-01"),
        ("二〇二四", "七", "一", "2024-07-01"),
        ("一九九三", "十一", "一", "1993-11-01"),
        ("二○○九", "十二", "三十一", "2009-12-31"),
        ("二零一五", "二", "二十八", "2015-02-28"),
        ("2023", "2", "30", None),  # not a day
        ("二〇二x", "一", "一", None),
    ],
)
def test_dates_in_every_numeral_style(y: str, m: str, d: str, iso: str | None) -> None:
    assert to_iso(y, m, d) == iso


def test_partial_dates_and_finding_dates() -> None:
    assert parse_date_parts("二〇一五", None, None) == (2015, None, None)
    assert parse_date_parts("2019", "6", None) == (2019, 6, None)
    assert find_dates("2000年5月26日通过、2004年7月29日修正，二〇二一年一月一日起施行") == [
        "2000-05-26",
        "2004-07-29",
        "2021-01-01",
    ]


COMPANY_LAW_HEADER = [
    "1993年12月29日 第八届全国人民代表大会常务委员会第五次会议通过",
    "2023年12月29日 第十四届全国人民代表大会常务委员会第七次会议第二次修订",
]


def test_a_revision_that_takes_effect_after_its_promulgation() -> None:
    text = "第一条 为了规范公司的组织和行为，制定本法。\n第二百六十六条 本法自2024年7月1日起施行。"
    found = entry_into_force(text, COMPANY_LAW_HEADER)
    assert (found.promulgated, found.effective, found.basis) == ("2023-12-29", "2024-07-01", BASIS_TEXT)
    assert found.clause == "第二百六十六条 本法自2024年7月1日起施行"


def test_an_amended_text_keeps_its_old_enactment_clause_without_going_back_in_time() -> None:
    header = [
        "1995年12月28日 第八届全国人民代表大会常务委员会第十七次会议通过",
        "2018年12月29日 第十三届全国人民代表大会常务委员会第七次会议"
        "《关于修改〈中华人民共和国电力法〉等四部法律的决定》第三次修正",
    ]
    found = entry_into_force("第七十五条 本法自1996年4月1日起施行。", header)
    assert (found.promulgated, found.effective, found.basis) == ("2018-12-29", "2018-12-29", BASIS_AMENDMENT)


def test_in_force_on_promulgation_and_some_days_after() -> None:
    header = ["2001年4月21日 中华人民共和国国务院令第302号公布"]
    found = entry_into_force("第二十四条 本规定自公布之日起施行。", header)
    assert (found.effective, found.basis) == ("2001-04-21", BASIS_ON_PROMULGATION)
    later = entry_into_force("第三十条 本办法自发布之日起三十日后施行。", header)
    assert (later.effective, later.basis) == ("2001-05-21", BASIS_AFTER_PROMULGATION)


def test_chinese_numerals_and_a_clause_without_qi() -> None:
    assert entry_into_force("第四十八条 本条例自一九九三年十一月一日起施行。", []).effective == "1993-11-01"
    assert entry_into_force("第五十三条 本法自1986年10月1日施行。", []).effective == "1986-10-01"


def test_articles_with_their_own_date_are_exceptions() -> None:
    text = (
        "第九十条 本法自2021年1月1日起施行。\n"
        "第九十一条 本法第三十六条、第三十七条自2022年1月1日起施行。\n"
        "第九十二条 第五章的规定自二〇二二年七月一日起施行。"
    )
    found = entry_into_force(text, [])
    assert found.effective == "2021-01-01"
    assert [(e.scope, e.date) for e in found.exceptions] == [
        ("本法第三十六条、第三十七条", "2022-01-01"),
        ("第五章的规定", "2022-07-01"),
    ]


def test_another_acts_clause_never_counts_and_the_last_own_clause_wins() -> None:
    text = (
        "第十条 自2010年1月1日起施行的《某市供水条例》同时废止。\n"
        "第四十条 本条例自2022年7月1日起施行，《汕头经济特区促进科技成果转化条例》同时废止。"
    )
    found = entry_into_force(text, [])
    assert found.effective == "2022-07-01" and not found.exceptions


def test_the_header_may_state_the_entry_into_force() -> None:
    header = ["2020年5月28日 第十三届全国人民代表大会第三次会议通过", "2021年1月1日 施行"]
    found = entry_into_force("第一千二百六十条 本法自2021年1月1日起施行。", header)
    assert (found.promulgated, found.effective) == ("2020-05-28", "2021-01-01")
    only_header = entry_into_force("第一条 ……", header)
    assert (only_header.effective, only_header.basis) == ("2021-01-01", BASIS_HEADER)


def test_a_text_that_states_nothing() -> None:
    found = entry_into_force("第八条 ……（文本不完整）", ["2016年9月23日 某市人民代表大会常务委员会通过"])
    assert (found.effective, found.promulgated, found.basis) == (None, "2016-09-23", BASIS_NONE)


def test_a_count_of_days_in_any_numeral() -> None:
    """一百八十日 is 180 days (the date parser's own numeral reader made it 10: it knew only 十)."""
    header = ["2001年4月21日 中华人民共和国国务院令第302号公布"]
    found = entry_into_force("第三十条 本办法自发布之日起一百八十日后施行。", header)
    assert (found.effective, found.basis) == ("2001-10-18", BASIS_AFTER_PROMULGATION)
