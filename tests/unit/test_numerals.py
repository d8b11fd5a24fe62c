"""The one numeral parser, the date pattern and the label patterns (regrag.text.numerals); the differential test
against the parsers they replace is tests/unit/test_numerals_differential.py."""

import re

import pytest

from regrag.text.numerals import (
    ARTICLE_LABEL,
    DATE_RE,
    HEADING_LABEL,
    ITEM_LABEL,
    approximate,
    int_to_chinese,
    parse_date_parts,
    parse_numeral,
    unnamed,
)


@pytest.mark.parametrize(
    ("numeral", "value"),
    [
        ("一", 1),
        ("十", 10),
        ("十二", 12),
        ("二十", 20),
        ("一百零五", 105),
        ("一百二十三", 123),
        ("六百五十", 650),
        ("一千二百六十", 1260),
        ("两千", 2000),
        ("两", 2),
        ("零", 0),
        ("12", 12),
        ("１５", 15),
        ("一万二千五百", 12500),  # figures, not labels: a question's 一万二千五百元
        ("三万", 30000),
        ("二十五万", 250000),
        ("一亿二千万", 120_000_000),
        ("一万亿", 10**12),
        ("一九九三", 1993),  # years, digit by digit
        ("二〇〇五", 2005),
        ("二○○九", 2009),  # ○ (U+25CB) and Ｏ for 〇: typists' slips in years
        ("二ＯＯ八", 2008),
        ("二零一五", 2015),
    ],
)
def test_every_way_legal_text_writes_a_number(numeral: str, value: int) -> None:
    assert parse_numeral(numeral) == value


@pytest.mark.parametrize("text", ["", "第一", "十x", "二两", "1十", "²"])
def test_what_is_not_a_numeral_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_numeral(text)


def test_a_range_of_neighbouring_digits_is_told_from_a_number() -> None:
    for rough in ("三四", "七八十", "两三", "一两", "四十五六", "五六万"):
        assert approximate(rough), rough
    for exact in ("三十四", "一九九三", "二〇〇五", "一〇一", "十二", "两千", "一百零五"):
        assert not approximate(exact), exact


def test_labels_round_trip() -> None:
    for n in range(1, 10000):
        assert parse_numeral(int_to_chinese(n)) == n
    assert int_to_chinese(10) == "十" and int_to_chinese(110) == "一百一十" and int_to_chinese(105) == "一百零五"


def test_date_parts_in_every_numeral_style() -> None:
    assert parse_date_parts("二〇一五", "十二", "三十一") == (2015, 12, 31)
    assert parse_date_parts("２０１９", "６", None) == (2019, 6, None)
    assert parse_date_parts("二〇二x", None, None) is None


def test_a_year_is_all_arabic_or_all_chinese() -> None:
    found = [m.group(0) for m in DATE_RE.finditer("2004年7月29日修正，二〇二一年一月一日起施行，20二一年一月一日")]
    assert found == ["2004年7月29日", "二〇二一年一月一日"]


def test_label_fragments() -> None:
    article = re.fullmatch(ARTICLE_LABEL, "第一百零五条之一")
    assert article and (article.group("num"), article.group("sub")) == ("一百零五", "一")
    assert re.fullmatch(ARTICLE_LABEL, "第20条")
    assert not re.fullmatch(ARTICLE_LABEL, "第2十条")  # never Arabic and Chinese mixed
    heading = re.fullmatch(HEADING_LABEL, "第二分编")
    assert heading and heading.group("kind") == "分编"
    assert [re.fullmatch(ITEM_LABEL, s) is not None for s in ("（十二）", "(3)", "三、", "4.", "4")] == [
        True,
        True,
        True,
        True,
        False,
    ]
    # twice in one pattern, the groups unnamed
    both = re.compile(f"{unnamed(ARTICLE_LABEL)}至{unnamed(ARTICLE_LABEL)}")
    assert both.fullmatch("第十条至第十二条")
