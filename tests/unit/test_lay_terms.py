"""Everyday words and abbreviations: a key term written in one is found in a text holding the statute's word."""

import pytest

from regrag.domain.models import Filters
from regrag.query.question import analyse, coverage, question_keywords
from regrag.text.lay_terms import SOURCES, lay_words_in, statute_words


def test_every_entry_names_its_statute_words_and_where_it_comes_from():
    table = statute_words()
    assert len(table) >= 40
    for lay, words in table.items():
        assert words and lay not in words, lay
    assert table["环评"] == ("环境影响评价",)
    assert "窃电" in table["偷电"]


def test_a_malformed_row_is_an_error_naming_its_line():
    with pytest.raises(ValueError, match="line 2"):
        statute_words("环评\t环境影响评价\tabbreviation: 缩略语\n偷电\t\teveryday\n")
    with pytest.raises(ValueError, match="line 1"):
        statute_words("环评\t环境影响评价\ta guess\n")
    with pytest.raises(ValueError, match="line 2"):
        statute_words("环评\t环境影响评价\tabbreviation\n环评\t环境影响\tabbreviation\n")
    assert SOURCES == ("abbreviation", "everyday")


def test_a_key_term_in_everyday_words_is_found_in_the_statutes_words():
    keywords = {k.term: k for k in question_keywords("偷电的要赔偿吗")}
    assert keywords["偷电"].found_in("盗窃电能的，由电力管理部门责令停止违法行为")
    assert not keywords["偷电"].found_in("供电企业应当连续向用户供电")
    assert not keywords["赔偿"].statute  # a word of no entry is matched as written, and only so


def test_coverage_counts_a_lay_word_met_by_the_statutes_word():
    q = analyse("环评未批先建怎么处罚？", Filters())
    assert "环评" in lay_words_in(q.text)
    # a candidate's coverage reads its text with its breadcrumb, which names the act
    penalty = "中华人民共和国环境影响评价法 第三十一条 建设单位未依法报批建设项目环境影响报告书、报告表，擅自开工建设的"
    unrelated = "违反本条例的规定，法律、行政法规已有处罚规定的，从其规定。"
    assert q.coverage(penalty) > q.coverage(unrelated)
    assert coverage(penalty, [k for k in q.keywords if k.term == "环评"]) == 1.0


def test_a_lay_word_the_tokeniser_splits_is_a_key_term_of_its_own():
    """供电公司 is two jieba words (供电, 公司); the entry makes the whole a key term, found in 供电企业."""
    keywords = {k.term: k for k in question_keywords("供电公司说要停电检修")}
    assert keywords["供电公司"].found_in("供电企业应当按照国家有关规定事先通知用户")
