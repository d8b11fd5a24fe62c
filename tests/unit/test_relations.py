"""Repeal and legal-basis clauses: which other acts a text replaces or implements."""

from __future__ import annotations

from regrag.text.relations import IMPLEMENTS, REPEALS, find_parents, find_repeals, title_key


def test_repeal_clauses_name_each_title_with_its_date() -> None:
    text = (
        "第五十条 本条例自2023年1月1日起施行。2000年3月30日广东省第九届人民代表大会常务委员会第十七次会议通过的"
        "《广东省职业介绍管理条例》和2002年12月6日广东省第九届人民代表大会常务委员会第三十八次会议通过的"
        "《广东省人才市场管理条例》同时废止。"
    )
    found = find_repeals(text)
    assert [(r.kind, r.title, r.date) for r in found] == [
        (REPEALS, "广东省职业介绍管理条例", "2000-03-30"),
        (REPEALS, "广东省人才市场管理条例", "2002-12-06"),
    ]


def test_repeal_after_the_own_clause_and_nested_titles() -> None:
    text = "第五十五条 本条例自2022年8月1日起施行，《广东省实施〈中华人民共和国土地管理法〉办法》同时废止。"
    [ref] = find_repeals(text)
    assert ref.title == "广东省实施〈中华人民共和国土地管理法〉办法" and ref.date is None
    # the repealed text's own 施行 date written before its title is its date, not this text's
    [old] = find_repeals("自1997年2月5日起施行的《广州市幼儿教育管理规定》同时废止。")
    assert old.date == "1997-02-05"


def test_mentions_that_are_not_repeals_are_ignored() -> None:
    assert find_repeals("第二十条 违反《中华人民共和国电力法》的，依照其规定处罚。") == []
    assert find_repeals("对不适应经济社会发展需要的标准，应当及时修订或者废止。") == []


def test_legal_basis_clauses_and_implementing_titles() -> None:
    text = (
        "第一条 为了保障电力安全，根据《中华人民共和国电力法》和《电力设施保护条例》等法律、行政法规，"
        "结合本省实际，制定本条例。"
    )
    assert [(r.kind, r.title) for r in find_parents(text)] == [
        (IMPLEMENTS, "中华人民共和国电力法"),
        (IMPLEMENTS, "电力设施保护条例"),
    ]
    assert [r.title for r in find_parents("第一条 根据本法制定本细则。", "中华人民共和国矿产资源法实施细则")] == [
        "中华人民共和国矿产资源法"
    ]
    assert [r.title for r in find_parents("第一条 ……", "广东省实施《中华人民共和国土地管理法》办法")] == [
        "中华人民共和国土地管理法"
    ]
    # an act is not its own parent, and a title named twice counts once
    text = "第一条 根据《中华人民共和国土地管理法》（以下简称《土地管理法》），制定本条例。"
    assert [r.title for r in find_parents(text, "中华人民共和国土地管理法实施条例")] == ["中华人民共和国土地管理法"]


def test_titles_match_across_spellings() -> None:
    assert title_key("《中华人民共和国电力法》") == title_key("电力法") == "电力法"
    assert title_key("中华人民共和国民事诉讼法（试行）") == "民事诉讼法"
    assert title_key("煤炭法") != title_key("电力法")
