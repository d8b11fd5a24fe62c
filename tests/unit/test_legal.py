import pytest

from regrag.text.legal import (
    ARTICLE_RE,
    HEADING_RE,
    article_label,
    chinese_to_int,
    find_cross_references,
    int_to_chinese,
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
        ("12", 12),
        ("１５", 15),
        ("一万二千五百", 12500),  # figures, not labels: a question's 一万二千五百元
        ("三万", 30000),
    ],
)
def test_chinese_numerals(numeral, value):
    assert chinese_to_int(numeral) == value


def test_numerals_round_trip():
    for n in range(1, 1300):
        assert chinese_to_int(int_to_chinese(n)) == n
    assert int_to_chinese(10) == "十" and int_to_chinese(110) == "一百一十" and int_to_chinese(105) == "一百零五"


def test_bad_numeral():
    with pytest.raises(ValueError):
        chinese_to_int("第一")


def test_article_labels():
    assert article_label(20, 1) == "第二十条之一"


def test_article_start_needs_whitespace_after_the_label():
    assert ARTICLE_RE.match("第二十条 电力建设企业应当")
    assert ARTICLE_RE.match("\u3000\u3000第二十条 电力建设企业应当".replace("\u3000", " "))
    assert ARTICLE_RE.match("第二十条之一 新增条款")
    assert not ARTICLE_RE.match("第二十条规定的电力设施")  # a reference that a line wrap put first
    assert not ARTICLE_RE.match("依照本法第二十条 的规定")


def test_headings_are_short_and_unpunctuated():
    m = HEADING_RE.match("## 第一章 总  则")
    assert m and m.group("kind") == "章"
    assert HEADING_RE.match("第二节 建设项目")
    assert HEADING_RE.match("### 第一分编 通则").group("kind") == "分编"
    assert not HEADING_RE.match("第三章规定的审批程序，由国务院制定。")


def test_cross_references():
    text = (
        "第三十条 违反本法第二十条规定的，依照本条例第三十五条第二款处罚；"
        "《中华人民共和国电力法》第十条另有规定的除外。"
    )
    refs = find_cross_references(text)
    assert [r.label for r in refs] == ["第二十条", "第三十五条"]
    assert refs[0].scope == "本法"
