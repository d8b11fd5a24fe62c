from regrag.text.legal import (
    ARTICLE_RE,
    HEADING_RE,
    REFERENCED_CHARS,
    article_label,
    find_cross_references,
    referenced_text,
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


REGULATION = """# 某某供用电条例

第四十四条 有下列情形之一的，供电企业可以中断供电：

（一）因供电设施计划检修的；

（二）用电人逾期未交付电费，经催交仍未交付的；

第四十五条 因本条例第四十四条第（二）项情形的，供电企业应当提前三至七日将停电通知书送达用电人。

第四十六条 违反本条例第四十五条、第四十四条规定的，依照《中华人民共和国电力法》第五十九条处理。
"""


def test_the_text_a_unit_refers_to_is_the_referenced_articles_of_the_same_document():
    item = "因本条例第四十四条第（二）项情形的，供电企业应当提前三至七日将停电通知书送达用电人。"
    assert "逾期未交付电费" in referenced_text(REGULATION, item)
    assert "第四十五条" not in referenced_text(REGULATION, item)  # up to the next article only
    # several, each once, in the order referred to; another act's article is not this document's
    both = referenced_text(
        REGULATION, "违反本条例第四十五条、第四十四条规定的，依照《中华人民共和国电力法》第五十九条处理。"
    )
    assert both.index("停电通知书") < both.index("逾期未交付电费")
    assert "第五十九条" not in both
    # the article the unit is part of, an article the document lacks, a document without articles: nothing
    assert referenced_text(REGULATION, item, own="第四十四条") == ""
    assert referenced_text(REGULATION, "依照本条例第九十九条处理。") == ""
    assert referenced_text("一、总体要求\n\n依照本条例第四十四条。", "依照本条例第四十四条。") == ""
    # a long article is read up to a bound
    long = "第一条 " + "甲" * (REFERENCED_CHARS * 2) + "\n\n第二条 依照本法第一条处理。\n"
    assert len(referenced_text(long, "依照本法第一条处理。")) == REFERENCED_CHARS
