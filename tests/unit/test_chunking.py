"""Chunking on real excerpts of the corpus, including the irregularities its README lists."""

from regrag.text.chunking import KIND_APPENDIX, KIND_ARTICLE, KIND_PARAGRAPH, split_structure
from regrag.text.normalize import normalize

from conftest import sample_manifest, sample_text


def structure(text, **kw):
    return split_structure(normalize(text), markdown=True, **kw)


def articles(st):
    return [s for s in st.segments if s.kind == KIND_ARTICLE]


def test_articles_match_the_manifest_count_for_every_sample_document():
    for doc_id, record in sample_manifest().items():
        st = structure(sample_text(doc_id))
        labels = {(s.label, s.ordinal) for s in articles(st)}
        assert len(labels) == record["articles"], doc_id


def test_title_header_and_heading_path():
    st = structure(sample_text("nat-law-0069"))
    assert st.title == "中华人民共和国电力法"
    assert st.header_lines[0].startswith("1995年12月28日")
    first = articles(st)[0]
    assert first.label == "第一条" and first.heading_path == ("第一章 总则",)
    text = sample_text("nat-law-0069")
    assert text[first.start : first.end].startswith("第一条 为了保障和促进电力事业的发展")


def test_multi_paragraph_article_keeps_its_clauses():
    text = sample_text("nat-law-0069")
    st = structure(text)
    third = next(s for s in articles(st) if s.label == "第三条")
    assert text[third.start : third.end] == (
        "第三条 电力事业应当适应国民经济和社会发展的需要，适当超前发展。"
        "国家鼓励、引导国内外的经济组织和个人依法投资开发电源，兴办电力生产企业。\n\n电力事业投资，实行谁投资、谁收益的原则。"
    )


def test_headings_with_fullwidth_space_and_nbsp():
    text = "# 某条例\n\n<!-- INFO END -->\n\n## 第一章\u3000总\u00a0\u00a0则\n\n第一条 为了规范管理，制定本条例。\n"
    st = structure(text)
    assert articles(st)[0].heading_path == ("第一章 总 则",)


def test_cross_reference_at_line_start_is_not_a_heading_or_article():
    text = "# 某法\n\n第一条 总则内容。\n\n第二条 违反规定的，依照\n第一条规定的程序处理。\n\n第三条 附则。\n"
    st = split_structure(normalize(text), markdown=False)
    assert [s.label for s in articles(st)] == ["第一条", "第二条", "第三条"]
    second = articles(st)[1]
    assert text[second.start : second.end].endswith("第一条规定的程序处理。")


def test_oversized_article_splits_at_clauses_and_keeps_the_label():
    clause = "供电企业应当按照国家规定的电能质量标准向用户供电，不得擅自中断供电。" * 8
    text = "# 某条例\n\n第五条 " + clause + "\n\n" + clause + "\n\n" + clause + "\n\n第六条 短条。\n"
    st = split_structure(normalize(text), max_chars=400)
    parts = [s for s in articles(st) if s.label == "第五条"]
    assert len(parts) >= 3 and all(p.parts == len(parts) for p in parts)
    assert [p.part for p in parts] == list(range(len(parts)))
    assert all(p.end - p.start <= 400 for p in parts)
    joined = "".join(text[p.start : p.end] for p in parts).replace("\n", "")
    assert joined == ("第五条 " + clause * 3)


def test_a_long_sentence_is_cut_at_sentence_marks():
    sentence = "甲" * 150 + "。"
    text = "# 某条例\n\n第一条 " + sentence * 5 + "\n"
    st = split_structure(normalize(text), max_chars=320)
    parts = articles(st)
    assert len(parts) == 3
    assert all(text[p.start : p.end].endswith("。") for p in parts)


def test_text_without_articles_falls_back_to_numbered_paragraphs():
    st = structure(sample_text("nat-reg-0033"))
    assert not articles(st)
    labels = [s.label for s in st.segments if s.kind == KIND_PARAGRAPH]
    assert labels[:5] == ["(一)", "(二)", "(三)", "(四)", "(五)"]


def test_appendix_after_the_last_article():
    st = structure(sample_text("nat-law-0066"))
    assert len({s.label for s in articles(st)}) == 28
    appendix = [s for s in st.segments if s.kind == KIND_APPENDIX]
    assert [s.label for s in appendix if s.part == 0] == ["附表一", "附表二"]
    # the table headings after the last article are inside the appendix, not chapters of the law
    assert all(s.heading_path == () for s in appendix)


def test_truncated_document_keeps_what_it_has():
    st = structure(sample_text("zj-0004"))
    assert [s.label for s in articles(st)][-1] == "第九条"


def test_headings_are_not_chunks_and_offsets_are_verbatim():
    for doc_id in ("nat-law-0069", "sh-0001", "nat-law-0077"):
        text = sample_text(doc_id)
        for seg in structure(text).segments:
            chunk = text[seg.start : seg.end]
            assert chunk == chunk.strip()
            assert not chunk.startswith("#")


def test_empty_body_gives_no_segments():
    st = structure("# 标题\n\n2020年1月1日 通过\n\n<!-- INFO END -->\n")
    assert st.title == "标题" and st.segments == []
