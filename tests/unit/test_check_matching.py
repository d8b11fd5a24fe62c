"""The citation check's pure parts: which titles the catalogue judges, how a title finds its law, and how a
quotation is found in (or compared with) a stored article."""

from __future__ import annotations

from regrag.check.catalogue import is_national_form, load_catalogue, place_prefix, title_type
from regrag.check.provisions import Provision, arabic_numerals, closest_span, pieces
from regrag.check.titles import AMBIGUOUS, FOUND, NOT_FOUND, TitleIndex
from regrag.domain.models import DocumentMeta

ARTICLE = Provision(
    "第四十条",
    "第四十条 在正常使用条件下，建设工程的最低保修期限为：\n\n"
    "(一)基础设施工程，为设计文件规定的该工程的合理使用年限；\n\n"
    "(二)屋面防水工程，为5年；\n\n"
    "其他项目的保修期限由发包方与承包方约定。\n\n"
    "建设工程的保修期，自竣工验收合格之日起计算。",
)


def test_title_kinds_and_which_titles_the_catalogue_can_judge():
    assert title_type("电力法") == "法" and title_type("建设工程价款结算暂行办法") == "办法"
    assert title_type("计量法实施细则") == "实施细则" and title_type("民法典") == "法典"
    assert place_prefix("山东省水资源条例") == "山东省" and place_prefix("青岛市实施水法若干规定") == "青岛市"
    assert place_prefix("电力设施保护条例") is None and place_prefix("城市供水条例") is None
    assert is_national_form("企业欠款清偿法") and is_national_form("电力监管条例")
    assert not is_national_form("山东省海上光伏建设管理条例")  # local: no bundled list can prove it invented
    assert not is_national_form("危险废物转移管理办法")  # a departmental rule may be called 办法
    assert not is_national_form("中国共产党纪律处分条例")


def test_catalogue_holds_real_titles_and_repealed_ones_and_suggests_near_misses():
    catalogue = load_catalogue()
    assert "仲裁法" in catalogue and "电力法" in catalogue and "合同法" in catalogue  # 合同法: repealed, named
    assert "企业欠款清偿法" not in catalogue and catalogue.as_of == "2025-04-19"
    assert catalogue.suggest("电力设施保障条例") == "电力设施保护条例"
    # a title that contains a real one names another act (its implementing rules), not a typo of it
    assert catalogue.suggest("电力设施保护条例实施细则") is None


def meta(doc_id, title, effective, supersedes=None, superseded_by=None):
    return DocumentMeta(doc_id, title, effective_date=effective, supersedes=supersedes, superseded_by=superseded_by)


def index():
    return TitleIndex(
        [
            meta("law-1", "中华人民共和国环境影响评价法", "2018-12-29"),
            meta("old", "青岛市实施《中华人民共和国水法》若干规定", "2011-11-25", superseded_by="new"),
            meta("new", "青岛市实施《中华人民共和国水法》的若干规定", "2017-12-01", supersedes="old"),
            meta("sh", "上海市供用电条例", "2018-05-24"),
            meta("ha", "河南省供用电条例", "2012-09-28"),
            meta("c1", "中华人民共和国民法典 合同编", "2021-01-01"),
            meta("c2", "中华人民共和国民法典 物权编", "2021-01-01"),
        ],
        load_catalogue(),
    )


def test_titles_resolve_to_laws_short_titles_versions_and_parts():
    titles = index()
    full = titles.resolve("环境影响评价法")
    assert full.kind == FOUND and full.laws[0].latest.doc_id == "law-1" and not full.short
    short = titles.resolve("环评法")
    assert short.kind == FOUND and short.short and short.laws[0].latest.doc_id == "law-1"
    pinned = titles.resolve("青岛市实施〈中华人民共和国水法〉若干规定")
    assert pinned.kind == FOUND and pinned.pinned == {"old"}
    assert [m.doc_id for m in pinned.laws[0].versions] == ["old", "new"]
    assert titles.resolve("供用电条例").kind == AMBIGUOUS
    code = titles.resolve("民法典")
    assert code.kind == FOUND and code.parts and len(code.laws) == 2
    assert titles.resolve("仲裁法").kind == NOT_FOUND  # a real law of that name: never read as another


def test_paragraphs_items_and_parts_of_an_article():
    assert [p.number for p in ARTICLE.paragraphs] == [1, 2, 3]
    assert [number for number, _, _ in ARTICLE.paragraphs[0].items] == [1, 2]
    start, end = ARTICLE.part(1, 2)
    assert ARTICLE.text[start:end] == "(二)屋面防水工程，为5年；"
    assert ARTICLE.part(4, None) is None and ARTICLE.part(1, 9) is None
    one_line = Provision("第一条", "第一条 甲。乙。")
    assert one_line.part(2, None) == (0, len(one_line.text))  # paragraphs not on lines: cannot prove absent


def test_quotations_are_found_across_width_spacing_and_omissions():
    assert ARTICLE.find("（二）屋面防水工程，为５年") is not None
    assert ARTICLE.find("在正常使用条件下……自竣工验收合格之日起计算") is not None
    assert ARTICLE.find("自竣工验收合格之日起计算……在正常使用条件下") is None  # pieces in order
    assert pieces("甲……乙...丙") == ("甲", "乙", "丙")
    # the punctuation that ends a quotation is the memo's: an item ending in ； in the law quoted with 。
    assert ARTICLE.find("(二)屋面防水工程，为5年。") is not None
    assert pieces("“甲，乙。”") == ("甲,乙",)


def test_figures_written_the_other_way_are_the_same_words():
    article = Provision("第三十一条", "第三十一条 拒不改正的，处十万元以上一百万元以下的罚款。")
    assert article.find("处10万元以上100万元以下的罚款") is None
    assert article.same_words("处10万元以上100万元以下的罚款")
    assert not article.same_words("处10万元以上50万元以下的罚款")
    assert arabic_numerals("二〇二四年一月一日") == arabic_numerals("2024年1月1日")


def test_a_mismatched_quotation_gets_the_closest_span_and_a_readable_diff():
    near = closest_span("屋面防水工程，为3年", ARTICLE)
    assert near.text == "屋面防水工程，为5年" and near.similarity > 0.8
    assert [d for d in near.diff if d["op"] != "equal"] == [{"op": "replace", "quote": "3", "law": "5"}]
