from regrag.text.normalize import normalize, squash_spaces, strip_whitespace, to_halfwidth


def test_halfwidth_folds_ascii_variants_but_keeps_chinese_punctuation():
    assert to_halfwidth("ＧＢ／Ｔ５０％（一）") == "GB/T50%(一)"
    assert to_halfwidth("第一条，依照。；：？！、") == "第一条，依照。；：？！、"


def test_normalize_maps_every_character_back_to_the_source():
    source = "第一章\u3000总\u00a0则\r\n第一条　为了保障电力安全，制定本法。\r\n"
    norm = normalize(source)
    assert norm.text == "第一章 总 则\n第一条 为了保障电力安全，制定本法。\n"
    start = norm.text.index("第一条")
    end = norm.text.index("本法。") + 3
    s, e = norm.to_source(start, end)
    assert source[s:e] == "第一条　为了保障电力安全，制定本法。"


def test_normalize_drops_zero_width_and_bom():
    norm = normalize("\ufeff第一条\u200b 内容")
    assert norm.text == "第一条 内容"
    assert norm.to_source(0, 3) == (1, 4)


def test_empty_span_maps_to_a_position():
    norm = normalize("abc")
    assert norm.to_source(3, 3) == (3, 3)


def test_squash_and_strip():
    assert squash_spaces("第一章  总 \t 则 ") == "第一章 总 则"
    assert strip_whitespace(" 第一条\n 内容\u3000x ") == "第一条内容x"
