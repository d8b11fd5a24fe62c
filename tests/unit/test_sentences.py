from regrag.text.sentences import sentence_spans, split_sentences


def test_sentences_end_at_chinese_marks_and_line_ends():
    text = "第一条 为了保障安全，制定本法。\n（一）供电企业；\n（二）用户！是否？\n“引文。”后文"
    assert split_sentences(text) == [
        "第一条 为了保障安全，制定本法。",
        "（一）供电企业；",
        "（二）用户！",
        "是否？",
        "“引文。”",
        "后文",
    ]


def test_spans_are_trimmed_offsets():
    text = "  甲。  乙"
    assert [text[s:e] for s, e in sentence_spans(text)] == ["甲。", "乙"]
