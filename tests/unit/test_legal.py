from regrag.text.legal import (
    ARTICLE_RE,
    HEADING_RE,
    article_label,
    find_cross_references,
)


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
