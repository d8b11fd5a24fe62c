"""The reference parser of the citation check: every form Chinese legal writing cites a provision in."""

from __future__ import annotations

from regrag.check.document_date import document_date
from regrag.check.references import ArticleRef, find_references


def one(text: str):
    refs = find_references(text)
    assert len(refs) == 1, refs
    return refs[0]


def test_full_title_article_paragraph_and_item_and_the_span_as_written():
    text = "依《中华人民共和国消防法》第十六条第一款第（三）项，单位应当检测。"
    ref = one(text)
    assert ref.text == "《中华人民共和国消防法》第十六条第一款第（三）项"
    assert text[ref.start : ref.end] == ref.text
    assert ref.title == "中华人民共和国消防法" and ref.form == "title"
    assert ref.articles == (ArticleRef(16, 0, 1, 3),)


def test_item_forms_and_article_suffix_and_arabic_numbers():
    assert one("《电力设施保护条例》第十五条第3项").articles == (ArticleRef(15, 0, None, 3),)
    assert one("《电力设施保护条例》第十五条（三）项").articles == (ArticleRef(15, 0, None, 3),)
    assert one("《电力法》第二十条之一").articles == (ArticleRef(20, 1),)
    assert one("《电力法》第10条第２款").articles == (ArticleRef(10, 0, 2),)


def test_short_title_is_a_title_of_its_own():
    ref = one("《电力法》第十条规定")
    assert ref.title == "电力法" and ref.form == "title"


def test_generic_short_title_refers_back_to_the_last_title_of_its_kind():
    text = "依《电力监管条例》第十六条，并依《电力法》第五条；《条例》第三十一条规定罚款。"
    refs = find_references(text)
    assert [r.title for r in refs] == ["电力监管条例", "电力法", "电力监管条例"]
    assert refs[2].form == "alias" and refs[2].written == "《条例》"
    assert refs[2].antecedent == (text.index("《电力监管条例》"), text.index("《电力监管条例》") + 8)


def test_back_references_without_brackets():
    text = (
        "《中华人民共和国电力法》第十条规定了规划。本法第十一条、该法第十二条亦有规定；"
        "《电力供应与使用条例》第八条与该条例第九条。"
    )
    refs = find_references(text)
    assert [(r.text, r.title) for r in refs] == [
        ("《中华人民共和国电力法》第十条", "中华人民共和国电力法"),
        ("本法第十一条", "中华人民共和国电力法"),
        ("该法第十二条", "中华人民共和国电力法"),
        ("《电力供应与使用条例》第八条", "电力供应与使用条例"),
        ("该条例第九条", "电力供应与使用条例"),
    ]
    assert all(r.form == "back" for r in (refs[1], refs[2], refs[4]))


def test_a_defined_abbreviation_binds_its_title():
    text = "《保障中小企业款项支付条例》（以下简称《支付条例》）第八条；又依《电力法》第五条，及《支付条例》第十七条。"
    refs = find_references(text)
    assert [r.title for r in refs] == ["保障中小企业款项支付条例", "电力法", "保障中小企业款项支付条例"]


def test_ranges_and_lists_expand_to_each_article():
    ref = one("《电力法》第十条至第十二条")
    assert ref.text == "《电力法》第十条至第十二条"
    assert [a.main for a in ref.articles] == [10, 11, 12]
    ref = one("《电力法》第十条、第十二条第二款和第十四条")
    assert ref.articles == (ArticleRef(10), ArticleRef(12, 0, 2), ArticleRef(14))
    text = "《电力法》第三十条第一款、第二款"
    ref = one(text)
    assert ref.articles == (ArticleRef(30, 0, 1), ArticleRef(30, 0, 2))
    # each item of a list is cited by its own words; the first by the title and its own
    assert [text[s:e] for s, e in ref.parts] == ["《电力法》第三十条第一款", "第二款"]
    text = "依《条例》第二十二条、第二十三条及第二十五条至第二十七条办理"
    ref = one(text)
    assert [text[s:e] for s, e in ref.parts] == ["《条例》第二十二条", "第二十三条", *["第二十五条至第二十七条"] * 3]


def test_ranges_of_items_and_paragraphs_inside_one_article():
    ref = one("根据《中华人民共和国安全生产法》第二十一条第（一）项至第（三）项的规定")
    assert ref.text.endswith("第（一）项至第（三）项")
    assert ref.articles == (ArticleRef(21, 0, None, 1), ArticleRef(21, 0, None, 2), ArticleRef(21, 0, None, 3))
    assert one("《电力法》第三十条第一款至第三款").articles == tuple(ArticleRef(30, 0, n) for n in (1, 2, 3))


def test_a_document_number_between_title_and_article_and_an_alias_in_two_marks():
    ref = one("依《国家发展改革委关于完善风电上网电价政策的通知》（发改价格〔2019〕882号）第三条")
    assert ref.text.startswith("《国家发展改革委") and ref.text.endswith("882号）第三条")
    refs = find_references("《中华人民共和国电力法》（以下简称“《电力法》”）第十条；又依《电力法》第十一条。")
    assert [r.title for r in refs] == ["中华人民共和国电力法", "中华人民共和国电力法"]


def test_quotations_attributed_to_the_reference_they_follow_or_precede():
    text = (
        "依《条例》第二十六条，“经协调仍不能达成协议的，由电力监管机构作出裁决”；"
        "《山东省海域使用管理条例》第四条第二款规定：“单位和个人使用海域，必须依法取得海域使用权。”"
        "另，“电力建设应当符合电力发展规划”（《电力法》第十条）。"
    )
    refs = find_references(text)
    # 《条例》 with no 条例 before it: a reference all the same (reported as unverifiable), with its quotation
    assert refs[0].title is None and [q.text for q in refs[0].quotes] == [
        "经协调仍不能达成协议的，由电力监管机构作出裁决"
    ]
    assert [q.text for q in refs[1].quotes] == ["单位和个人使用海域，必须依法取得海域使用权。"]
    assert [q.text for q in refs[2].quotes] == ["电力建设应当符合电力发展规划"]
    text = "依《电力法》第二十条，“经协调仍不能达成协议的，由电力监管机构作出裁决”。"
    (ref,) = find_references(text)
    assert (
        ref.quotes[0].text.startswith("经协调") and text[ref.quotes[0].start : ref.quotes[0].end] == ref.quotes[0].text
    )


def test_quotations_that_are_not_the_law_are_left_alone():
    text = (
        "分包合同第12.2条约定“总包方收到业主付款后再向分包方支付”。"  # a contract clause: no reference at all
        "依《电力法》第十条，合同。另一句话里“这是别的内容很长的引文”。"  # another sentence
        "《电力供应与使用条例》（以下简称“供电条例全称”）第八条"  # a definition
    )
    refs = find_references(text)
    assert [r.text for r in refs] == ["《电力法》第十条", "《电力供应与使用条例》（以下简称“供电条例全称”）第八条"]
    assert all(not r.quotes for r in refs)


def test_titles_inside_a_quotation_belong_to_the_quoted_law():
    refs = find_references("《电力法》第五十九条规定：“依照《中华人民共和国行政处罚法》第十条的规定处罚”。")
    assert [r.text for r in refs] == ["《电力法》第五十九条"]


def test_a_named_version_and_nested_titles():
    ref = one("2025年3月修订的《保障中小企业款项支付条例》第九条第二款")
    assert ref.version == "2025-03" and ref.text.startswith("《保障")
    assert one("《中华人民共和国电力法》（2018年修正）第十条").version == "2018"
    ref = one("《青岛市实施〈中华人民共和国水法〉若干规定》第八条")
    assert ref.title == "青岛市实施〈中华人民共和国水法〉若干规定"
    ref = one("《青岛市实施《中华人民共和国水法》的若干规定》第八条")
    assert ref.title == "青岛市实施《中华人民共和国水法》的若干规定"


def test_titles_without_an_article_are_not_citations_but_are_antecedents():
    refs = find_references("贵局《关于规范分布式光伏项目备案管理的通知》中的要求；《电力法》规定……该法第三条。")
    assert [(r.text, r.title) for r in refs] == [("该法第三条", "电力法")]


def test_no_references():
    assert find_references("本合同第三条约定的价款，应于十日内付清。") == []
    assert find_references("") == []


def test_document_date_top_bottom_and_never_a_date_inside_a_sentence():
    assert document_date("日期：2024年12月10日\n\n正文").date == "2024-12-10"
    assert document_date("函\n\n正文。\n\n××公司\n二〇二四年十二月十日").date == "2024-12-10"
    assert document_date("函\n\n正文\n\n2024-04-12\n").date == "2024-04-12"
    assert document_date("函\n\n依2025年3月修订的《条例》第九条。\n") is None


def test_what_the_document_says_a_reference_provides_is_its_sentence_without_quotations():
    text = (
        "根据《电力供应与使用条例》第二十八条，供电企业应提前3天通知用户。"
        "依《电力法》第五十九条和《条例》第二十八条，临时检修应提前12小时通知；另行约定。"
        "逾期不改的，处5万元罚款（《电力监管条例》第三十一条）。"
        "《电力法》第十条规定：“电力发展规划应当根据国民经济和社会发展的需要制定”，自2024年起执行。"
    )
    said = [(r.text, r.said) for r in find_references(text)]
    assert said == [
        ("《电力供应与使用条例》第二十八条", "，供电企业应提前3天通知用户"),
        ("《电力法》第五十九条", "和"),  # the words after a list of references are the last one's
        ("《条例》第二十八条", "，临时检修应提前12小时通知"),  # a semicolon ends what it says
        ("《电力监管条例》第三十一条", "逾期不改的，处5万元罚款"),  # cited in brackets after the words
        ("《电力法》第十条", "规定： ，自2024年起执行"),  # the quotation is checked verbatim, not read here
    ]
    # a bracketed reference in the middle of its sentence: the words before the bracket are what it provides
    assert one("批准后五年内未开工的，批准文件自行失效（《取水许可条例》第二十二条），因此应同步推进。").said == (
        "批准后五年内未开工的，批准文件自行失效"
    )
    # a breach of the article cited is followed by its consequence, which that article does not set
    assert one("违反《供热条例》第四十五条规定的，处三万元罚款。").said == ""
