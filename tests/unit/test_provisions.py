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
