from dataclasses import replace

import pytest

from regrag.domain.models import Filters
from regrag.domain.results import Candidate
from regrag.ingest.ingest import build_document
from regrag.ports import Blob
from regrag.query.judge import RelevanceFloor
from regrag.query.question import analyse, question_keywords
from regrag.query.quote import Quotes, chinese_ratio
from regrag.query.render import ABSTAIN_TITLE, NOT_CHINESE_NOTE, abstention, heading_for, render, with_note
from regrag.query.retrieve import measured

from conftest import SAMPLE, compose_answer


@pytest.fixture(scope="module")
def doc():
    data = (SAMPLE / "docs" / "nat-reg-0088.md").read_bytes()
    sidecar = Blob(
        "x.meta.json", b'{"doc_id": "nat-reg-0088", "effective_date": "2019-03-02", "url": "https://example.gov/88"}', 1
    )
    return build_document("docs/nat-reg-0088.md", Blob("docs/nat-reg-0088.md", data, 7), sidecar, 800)


def cands(doc, *labels):
    by_label = {c.article: c for c in doc.chunks}
    return [Candidate(by_label[label], 1.0 / (i + 1)) for i, label in enumerate(labels)]


def source(doc):
    return lambda doc_id: doc.text if doc_id == doc.meta.doc_id else None


def test_the_item_that_answers_is_quoted_with_its_lead_in_label_and_precise_citation(doc):
    q = "临时检修要停电，至少提前多少小时通知？"
    answer = compose_answer(q, cands(doc, "第二十八条", "第二十九条"), Filters(), source_text=source(doc))
    assert not answer.abstained
    first = answer.bullets[0]
    assert "提前24小时" in first.span and "提前7天" not in first.span  # the 24-hour item, not the 7-day one
    # the label and the lead-in paragraph (one piece: they are adjacent), …… for item (一), then item (二)
    assert first.span.startswith("第二十八条 除本条例另有规定外") and "公告：……(二)" in first.span
    assert all(piece in doc.text for piece in first.pieces) and len(first.pieces) == 2
    assert first.citation.article == "第二十八条" and first.citation.provision == "第二十八条第（二）项"
    marker = "〔《电力供应与使用条例》第二十八条第（二）项，生效：2019-03-02〕"
    # the answer's text lays the quote out a line per paragraph shown: the lead-in, then the item
    lines = first.lines()
    assert len(lines) > 1 and first.render() == " • " + "\n   ".join(lines) + marker
    assert answer.answer_zh.startswith(answer.title + "\n- 相关规定：\n • ")
    assert len(answer.citations) == 1  # two articles of one document: one citation (deduplicated by url)
    assert answer.citations[0].url == "https://example.gov/88"
    assert answer.chinese_ratio >= 0.3


def test_another_question_on_the_same_article_gets_its_own_item(doc):
    answer = compose_answer(
        "计划检修停电要提前几天通知用户？", cands(doc, "第二十八条"), Filters(), source_text=source(doc)
    )
    assert "提前7天" in answer.bullets[0].span and "24小时" not in answer.bullets[0].span


def test_one_bullet_per_article_and_at_most_four(doc):
    q = "供电企业 用户 电力 供电 停电 检修 通知 电费 用电"
    labels = [c.article for c in doc.chunks if c.kind == "article"][20:30]
    answer = compose_answer(q, cands(doc, *labels), Filters(), source_text=source(doc), top_n=5)
    assert 1 <= len(answer.bullets) <= 4
    assert len({b.chunk_id for b in answer.bullets}) == len(answer.bullets)
    assert all(b.citation.article in b.span for b in answer.bullets)  # every quote names its article


def test_no_quote_is_a_bare_lead_in_or_an_orphan_item(doc):
    for q in (
        "停电要按照什么要求事先通知用户？",
        "发电供电系统发生故障需要停电怎么办？",
        "供电企业应当连续向用户供电吗",
    ):
        answer = compose_answer(q, cands(doc, "第二十八条"), Filters(), source_text=source(doc))
        for bullet in answer.bullets:
            assert not bullet.span.rstrip().endswith("：")
            assert "(一)" not in bullet.span or "按照下列要求" in bullet.span  # an item comes with its lead-in


def test_a_quote_not_in_the_stored_text_is_dropped_and_counted(doc):
    genuine = cands(doc, "第二十八条")[0]
    forged = replace(genuine.chunk, text=genuine.chunk.text.replace("7天", "3天"))
    answer = compose_answer(
        "计划检修停电要提前几天通知用户？", [Candidate(forged, 1.0)], Filters(), source_text=source(doc)
    )
    assert answer.dropped_spans >= 1
    assert all(b.verbatim_in(doc.text) for b in answer.bullets)


def test_no_candidate_above_the_floor_abstains(doc):
    answer = compose_answer(
        "量子计算机的专利保护期限是多少年？", cands(doc, "第二十八条", "第一条"), Filters(), source_text=source(doc)
    )
    assert answer.abstained and answer.title == ABSTAIN_TITLE and not answer.bullets
    assert "不引用任何条文" in answer.answer_zh


def test_empty_candidates_abstain(doc):
    assert compose_answer("并网条件", [], Filters(), source_text=source(doc)).abstained


def test_heading_names_province_and_asset():
    assert (
        heading_for("在广东建分布式光伏并网要满足什么条件？", Filters(province=("gd",), asset=("solar",)))
        == "分布式光伏要点（广东 / 光伏）"
    )
    assert heading_for("并网要满足什么条件", Filters()) == "并网要点"


def test_keywords_drop_question_words():
    terms = {k.term for k in question_keywords("我们要办什么手续才能并网？")}
    assert "并网" in terms and "什么" not in terms and "我们" not in terms


def test_two_notes_are_two_lines_of_one_note_block():
    answer = with_note(with_note(abstention("并网条件", Filters()), "第一条理由"), "第二条理由")
    assert answer.answer_zh.count("提示：") == 1
    assert answer.answer_zh.endswith("- 提示：\n • 第一条理由\n • 第二条理由")
    assert answer.notes == ("第一条理由", "第二条理由")


def test_chinese_ratio():
    assert chinese_ratio("并网要点") == 1.0
    assert chinese_ratio("abc并") == 0.25


def test_relevance_floor_needs_both_signals_weak_to_abstain():
    floor = RelevanceFloor(coverage=0.45, dense=0.89, coverage_alone=0.25)
    assert floor.weak(0.30, 0.85)  # little keyword overlap and a distant best vector: abstain
    assert not floor.weak(0.30, 0.93)  # a close vector keeps it (lay wording, statute words differ)
    assert not floor.weak(0.60, 0.80)  # strong keyword coverage keeps it
    assert floor.weak(0.20, None) and not floor.weak(0.30, None)  # no dense score known: coverage alone


def test_a_question_not_in_chinese_is_asked_for_in_chinese_whatever_the_outcome(doc):
    """The corpus is Chinese and so are its words: an English question gets a note saying so, answered or not."""
    for question in ("How many days ahead must a planned outage be announced?", "What does 电力法 say about 停电?"):
        answer = compose_answer(question, cands(doc, "第二十八条"), Filters(), source_text=source(doc))
        q = analyse(question, Filters())
        rendered = render(q, Quotes(answer.bullets), judge_of(q, answer, doc))
        assert not q.chinese and NOT_CHINESE_NOTE in rendered.notes and "Please ask in Chinese" in rendered.answer_zh
    assert analyse("10kV线路的EIA要求是什么？", Filters()).chinese


def test_markup_pasted_with_a_chinese_question_does_not_make_it_foreign():
    """Tags and a script's code are no language: the Chinese question after them is asked in Chinese (the new
    user's <script>…</script> probe was told 请用中文提问), while digits and punctuation count for neither side."""
    for question in (
        "<script>alert(document.cookie)</script>邻居偷电怎么办？",
        "<b>窃电</b>的怎么处罚？<br>",
        "2024年10月1日以后110kV线路？",
    ):
        assert analyse(question, Filters()).chinese, question
    for question in ("<b>How long is the notice period?</b>", "<p>What does 电力法 say about 停电?</p>"):
        assert not analyse(question, Filters()).chinese, question


def judge_of(q, answer, doc):
    from regrag.query.judge import judge

    from conftest import read_path_options

    ranked = measured(q, cands(doc, "第二十八条"))
    return judge(q, ranked, Quotes(answer.bullets), "skipped", read_path_options().judge)


def test_a_date_the_text_does_not_state_is_marked_for_checking_in_the_citation(doc):
    """An amended text dated by its amendment's adoption (its entry into force not in the text) says so where it
    is cited: the date a lawyer pastes must not look settled."""
    unsure = replace(doc.meta, effective_date_uncertain=True)
    chunks = [replace(c, meta=unsure) for c in doc.chunks if c.article == "第二十八条"]
    q = "临时检修要停电，至少提前多少小时通知？"
    answer = compose_answer(q, [Candidate(c, 1.0) for c in chunks], Filters(), source_text=source(doc))
    assert answer.bullets[0].citation.marker.endswith("，生效：2019-03-02（施行日期待核）〕")


SHORT_AND_LONG = """# 某某资源费征收办法

第一条 为了规范资源费的征收，制定本办法。

第二条 缴费单位因特殊困难不能按期缴纳资源费的，可以自收到缴纳通知单之日起7日内申请缓缴。缓缴期限最长不得超过90日。

第三条 缴费单位应当按照规定的期限和标准缴纳资源费。{filler}逾期不缴纳的，由征收机关责令限期缴纳，\
并按日加收滞纳部分千分之二的滞纳金。
"""


def synthetic(text: str):
    sidecar = Blob("x.meta.json", b'{"doc_id": "syn-0001", "effective_date": "2020-01-01"}', 1)
    return build_document("docs/syn-0001.md", Blob("docs/syn-0001.md", text.encode(), 3), sidecar, 800)


def test_a_short_paragraph_is_quoted_whole_a_long_one_by_its_sentence():
    filler = "征收机关应当在征收前公告征收的范围、标准和期限，并接受社会监督。" * 6  # the 款 passes 200 characters
    doc = synthetic(SHORT_AND_LONG.format(filler=filler))
    answer = compose_answer(
        "因特殊困难申请缓缴资源费的，缓缴期限有多长？", cands(doc, "第二条"), Filters(), source_text=source(doc)
    )
    first = answer.bullets[0]
    # the whole 款, whichever of its two sentences fits best: the one holding the answer is the second
    assert "7日内申请缓缴" in first.span and "缓缴期限最长不得超过90日" in first.span
    assert first.span.startswith("第二条") and all(piece in doc.text for piece in first.pieces)
    late = compose_answer(
        "逾期不缴纳资源费的，滞纳金怎么算？", cands(doc, "第三条"), Filters(), source_text=source(doc)
    )
    quoted = late.bullets[0].span
    assert "千分之二的滞纳金" in quoted and "公告征收的范围" not in quoted  # a long paragraph: its sentence only
    assert quoted.startswith("第三条") and "……" in quoted


def test_a_question_not_in_chinese_that_finds_nothing_is_headed_by_the_request_for_chinese(doc):
    """未找到相关规定 above it would read as "the law says nothing", which a search in another language cannot tell."""
    from regrag.query.confidence import Confidence
    from regrag.query.judge import BY_FLOOR, Verdict
    from regrag.query.render import NOT_CHINESE_TITLE, finish

    q = analyse("How much is the fine for electricity theft?", Filters())
    answer = finish(q, abstention(q.text, q.filters), Verdict(Confidence.abstained(), BY_FLOOR))
    assert answer.abstained and answer.title == NOT_CHINESE_TITLE
    assert answer.answer_zh.split("\n")[0] == NOT_CHINESE_TITLE and ABSTAIN_TITLE not in answer.answer_zh
    assert NOT_CHINESE_NOTE in answer.notes and answer.answer_zh.count("Please ask in Chinese") == 1


def test_a_refusal_says_what_was_not_confirmed_not_that_the_law_is_silent():
    """The floor refuses what shares few of the question's words: a question in everyday words (偷电) is told to try
    the statute's, and where the closest articles are; a refusal for another reason is not."""
    from regrag.query.confidence import Confidence
    from regrag.query.judge import BY_CONFIDENCE, BY_FLOOR, Verdict
    from regrag.query.render import ABSTAIN_TEXT, FLOOR_NOTE, abstention_for

    q = analyse("邻居偷电怎么办？", Filters())
    floor = abstention_for(q, Quotes(()), Verdict(Confidence.abstained(), BY_FLOOR))
    assert floor.abstained and ABSTAIN_TEXT in floor.answer_zh and FLOOR_NOTE in floor.notes
    assert "没有与该问题直接对应" not in floor.answer_zh and "依据与检索详情" in FLOOR_NOTE
    other = abstention_for(q, Quotes(()), Verdict(Confidence.abstained(), BY_CONFIDENCE, ("问题询问具体数值",)))
    assert FLOOR_NOTE not in other.notes and "最接近的条文未予引用：问题询问具体数值" in other.notes


def test_a_question_set_nowhere_answered_by_local_rules_only_is_told_they_apply_only_there():
    """A reader in another province must not take one province's rule for the law where they are (a new user's
    果树…给不给补偿 read 济南's 不予补偿 first, nothing saying it was 济南's)."""
    import json

    from regrag.query.answer import compose
    from regrag.query.render import LOCAL_ONLY_NOTE

    from conftest import read_path_options

    row = {"doc_id": "ha-0001", "effective_date": "2012-09-28", "province": "ha"}
    local = build_document(
        "docs/ha-0001.md",
        Blob("docs/ha-0001.md", (SAMPLE / "docs" / "ha-0001.md").read_bytes(), 3),
        Blob("m", json.dumps(row).encode(), 1),
        800,
    )
    assert local.meta.province == "ha"
    labels = [c.article for c in local.chunks if c.kind == "article" and "用电安全情况进行检查" in c.text]
    found = [Candidate(c, 1.0, dense_score=0.95) for c in local.chunks if c.article in labels]

    def asked(question, filters=Filters()):
        q = analyse(question, filters)
        return compose(
            q, found, read_path_options(), source_text=lambda _: local.text, document_meta=lambda _: local.meta
        )

    nowhere = asked("供电企业检查用电安全，检查人员要出示证件吗？")
    assert nowhere.bullets and LOCAL_ONLY_NOTE.format(places="河南") in nowhere.notes
    assert "只在当地适用" in nowhere.answer_zh
    # the province asked for, by filter or by name: its own rule is what applies there
    for placed in (asked("供电企业检查用电安全，检查人员要出示证件吗？", Filters(province=("ha",))),
                   asked("河南供电企业检查用电安全，检查人员要出示证件吗？")):  # fmt: skip
        assert placed.bullets and not any("只在当地适用" in n for n in placed.notes)


def test_a_rule_of_another_province_than_the_one_asked_about_is_not_quoted(doc):
    """A province's rule does not apply in the province the question names: compose leaves it unquoted and says
    why, however well it matches; asked about its own province, it is the answer."""
    local = [
        replace(c, chunk=replace(c.chunk, meta=replace(c.chunk.meta, province="sh"))) for c in cands(doc, "第二十八条")
    ]
    elsewhere = compose_answer("江苏省计划检修停电要提前几天通知用户？", local, source_text=source(doc))
    assert elsewhere.abstained and elsewhere.bullets == ()
    assert "都是其他省市的地方性规定，在江苏不适用" in elsewhere.answer_zh
    there = compose_answer("上海市计划检修停电要提前几天通知用户？", local, source_text=source(doc))
    assert not there.abstained and "提前7天" in there.bullets[0].span
    anywhere = compose_answer("计划检修停电要提前几天通知用户？", local, source_text=source(doc))
    assert not anywhere.abstained  # no place named: every rule may answer
