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


def test_the_translate_path_equals_the_character_loop():
    """normalize translates texts in which no character drops or merges; the loop defines what it must give."""
    import random

    from regrag.text.normalize import _normalize_each

    alphabet = "第一条电网（）１２ＡＧＢ／Ｔ％，。；：？！、 \t\r\n\u3000\u00a0\u2002\u2003\u2009abc"
    rng = random.Random(4)
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))).replace("\r\n", "\r")
        assert normalize(text) == _normalize_each(text), repr(text)
    for text in ("a\r\nb", "x\u200by", "\ufeff第一条"):  # the loop's own cases still go through it
        assert normalize(text) == _normalize_each(text)
