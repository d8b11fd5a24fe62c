"""An article read into the units a lawyer cites: sentences, lead-ins with their items, paragraphs."""

from __future__ import annotations

from regrag.text.provisions import ITEM, LEAD_IN, SENTENCE, item_label, paragraph_label, read_provisions

from conftest import sample_text


def article(doc_id: str, label: str) -> str:
    text = sample_text(doc_id)
    start = text.index(f"\n{label} ") + 1
    ends = [e for e in (text.find("\n第", start + 1), text.find("\n#", start + 1)) if e > 0]
    return text[start : min(ends, default=len(text))]


def test_a_lead_in_owns_the_items_under_it_and_an_items_later_sentences_stay_in_it():
    prov = read_provisions(article("nat-reg-0088", "第二十八条"))
    kinds = [(u.kind, u.item, u.marker) for u in prov.units]
    assert kinds == [(SENTENCE, None, None), (LEAD_IN, None, None), (ITEM, 1, "(一)"), (ITEM, 2, "(二)"),
                     (ITEM, 3, "(三)")]  # fmt: skip
    assert prov.items_of(1) == [2, 3, 4]
    assert prov.span(3).startswith("(二)因供电设施临时检修") and prov.span(3).endswith("通知重要用户；")
    assert prov.span(4).endswith("尽快恢复供电。")  # （三）'s second sentence is part of （三）
    assert prov.text[slice(*prov.label)] == "第二十八条" and prov.paragraphs == 1


def test_paragraphs_are_counted_and_spans_are_verbatim():
    text = "第十条 第一款的第一句。第一款的第二句。\n\n第二款：\n（一）甲；\n（二）乙。\n第三款。"
    prov = read_provisions(text)
    assert [(u.kind, u.paragraph, u.item) for u in prov.units] == [
        (SENTENCE, 1, None), (SENTENCE, 1, None), (LEAD_IN, 2, None), (ITEM, 2, 1), (ITEM, 2, 2), (SENTENCE, 3, None)
    ]  # fmt: skip
    assert all(prov.span(i) in text for i in range(len(prov.units)))
    assert prov.paragraphs == 3


def test_text_without_a_label_is_read_as_sentences():
    prov = read_provisions("本办法自发布之日起施行。原办法同时废止。")
    assert prov.label is None and [u.kind for u in prov.units] == [SENTENCE, SENTENCE]


def test_labels_of_paragraphs_and_items_are_written_as_citations_write_them():
    assert paragraph_label(2) == "第二款" and item_label(2) == "第（二）项" and item_label(12) == "第（十二）项"


def test_unmarked_rows_after_a_colon_are_that_units_items_not_paragraphs():
    # 电力设施保护条例 第十条: a table of distances under item (一); its rows carry no marker of their own
    prov = read_provisions(article("nat-reg-0091", "第十条"))
    rows = [i for i, u in enumerate(prov.units) if prov.span(i) in ("1—10千伏 5米", "500千伏 20米")]
    assert len(rows) == 2
    table = prov.units[rows[0]].lead_in
    assert table is not None and prov.units[table].item == 1 and prov.span(table).endswith("延伸距离如下：")
    assert all(prov.units[i].kind == ITEM and prov.units[i].lead_in == table for i in rows)
    assert prov.items_of(table)[-1] == rows[1]  # four rows, the last one 500千伏
    # the paragraph after the table is a paragraph again, not a row
    after = next(i for i, u in enumerate(prov.units) if prov.span(i).startswith("在厂矿、城镇等人口密集地区"))
    assert prov.units[after].kind == SENTENCE and prov.units[after].lead_in is None


def test_a_list_of_entries_closes_with_its_sentence_and_a_paragraph_follows():
    text = (
        "第六十五条 常务委员会由下列人员组成：\n\n委员长，\n\n副委员长若干人，\n\n委员若干人。\n\n"
        "组成人员中应当有少数民族代表。"
    )
    prov = read_provisions(text)
    assert [(u.kind, u.lead_in) for u in prov.units] == [
        (LEAD_IN, None), (ITEM, 0), (ITEM, 0), (ITEM, 0), (SENTENCE, None)
    ]  # fmt: skip
    assert prov.paragraphs == 2


def test_items_whose_markers_the_source_lost_still_belong_to_their_lead_in():
    # 深圳经济特区人工智能产业促进条例 第六十五条 as the corpus has it: （一） and （二） lost, （三）… kept
    text = (
        "第六十五条 市人民政府应当设立市人工智能伦理委员会，履行下列职责：\n\n研究制定人工智能领域的伦理安全规范；\n\n"
        "建立健全伦理安全规范管理制度，引导和规范伦理安全规范的制订和实施；\n\n（三）分析研判数据和算法造成的影响；\n\n"
        "（四）其他应当开展的活动。\n\n委员会的日常工作由市产业主管部门承担。"
    )
    prov = read_provisions(text)
    assert [(u.kind, u.lead_in, u.paragraph) for u in prov.units] == [
        (LEAD_IN, None, 1), (ITEM, 0, 1), (ITEM, 0, 1), (ITEM, 0, 1), (ITEM, 0, 1), (SENTENCE, None, 2)
    ]  # fmt: skip
    assert prov.items_of(0) == [1, 2, 3, 4]  # a quote of the lead-in shows all four, never the bare lead-in


def test_a_list_whose_lead_in_ends_in_a_full_stop_is_introduced_by_the_sentence_before_its_first_item():
    # 林权争议调处办法 第四十六条 as the corpus has it: the lead-in ends in 。, not ：
    text = (
        "第四十六条 林权争议调处期间有下列情形之一的，调处机构可以中止调处，并向本级人民政府报告。\n\n"
        "（一）当事人因不可抗力，暂时不能参加林权争议调处的；\n\n（二）发生群体性事件尚在处理中的。\n\n"
        "中止调处的原因消除后，恢复调处。"
    )
    prov = read_provisions(text)
    assert [(u.kind, u.lead_in) for u in prov.units] == [
        (LEAD_IN, None), (ITEM, 0), (ITEM, 0), (SENTENCE, None)
    ]  # fmt: skip
    assert prov.span(0).startswith("林权争议调处期间") and prov.units[0].shown_start == prov.units[0].start
    # an item numbered (二) after a sentence is not a list's start: it is not given that sentence as its lead-in
    later = read_provisions("第九条 甲应当报告。\n\n（二）乙的情形。")
    assert [(u.kind, u.lead_in) for u in later.units] == [(SENTENCE, None), (ITEM, None)]


def test_a_paragraph_inside_an_item_does_not_end_the_list():
    # 电力设施保护条例 第十条: (一) with its table and a paragraph on crowded areas, then (二) of the same list
    prov = read_provisions(article("nat-reg-0091", "第十条"))
    second = next(i for i, u in enumerate(prov.units) if u.marker == "(二)")
    assert prov.units[second].lead_in == 0 and prov.span(0) == "电力线路保护区："
    assert prov.items_of(0) == [1, second] and prov.paragraphs == 1
    crowded = next(i for i, u in enumerate(prov.units) if prov.span(i).startswith("在厂矿"))
    assert prov.units[crowded].kind == SENTENCE and prov.units[crowded].paragraph == 1
    # a new list after a paragraph is not the old one going on: it starts at (一) again, under its own sentence
    text = "第九条 甲：\n（一）子；\n（二）丑。\n另一款。\n（一）寅。"
    units = read_provisions(text).units
    assert [(u.kind, u.paragraph, u.lead_in) for u in units][-2:] == [(LEAD_IN, 2, None), (ITEM, 2, 3)]


def test_an_item_ending_in_a_colon_introduces_the_sub_items_of_another_style_after_it():
    text = "\n".join(["第五条 申请人应当提交：", "（一）申请书；", "（二）权属证明，包括：", "1.土地使用合同；",
                      "2.地价款证明；",
                      "（三）测绘报告。"])  # fmt: skip
    prov = read_provisions(text)
    by_marker = {u.marker: u for u in prov.units if u.kind == ITEM}
    second = prov.units.index(by_marker["（二）"])
    assert by_marker["1."].lead_in == second and by_marker["2."].lead_in == second
    assert by_marker["（三）"].lead_in == by_marker["（一）"].lead_in == 0  # back in the outer list


def test_a_lead_in_with_its_first_items_on_its_own_line_is_split_into_them():
    # 广东省人力资源市场条例 第四十八条: the lead-in and items （一）–（三） on one line, （四） and （五） on the next
    text = (
        "第四十八条 主管部门及其工作人员有下列情形之一的，依法给予处分： （一）不依法作出行政许可决定；"
        " （二）索取财物；\n\n"
        "（四）不依法及时处理投诉、举报，造成严重后果； （五）其他滥用职权的情形。"
    )
    prov = read_provisions(text)
    assert [(u.kind, u.item) for u in prov.units] == [(LEAD_IN, None), (ITEM, 1), (ITEM, 2), (ITEM, 4), (ITEM, 5)]
    assert prov.span(0).endswith("依法给予处分：") and prov.span(1) == "（一）不依法作出行政许可决定；"
    assert prov.items_of(0) == [1, 2, 3, 4] and prov.paragraphs == 1
    # a figure after a colon is not an item: 标准：1.5米
    assert [u.kind for u in read_provisions("第三条 间距标准：1.5米以上。").units] == [SENTENCE]
