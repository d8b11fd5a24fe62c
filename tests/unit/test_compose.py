from dataclasses import replace

import pytest

from regrag.domain.models import Filters
from regrag.domain.results import Candidate
from regrag.ingest.ingest import build_document
from regrag.ports import Blob
from regrag.query.judge import RelevanceFloor
from regrag.query.question import question_keywords
from regrag.query.quote import chinese_ratio, select_spans
from regrag.query.render import ABSTAIN_TITLE, heading_for

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


def test_quotes_are_whole_sentences_with_citations(doc):
    q = "供电企业因为计划检修要停电，至少要提前几天通知用户？"
    answer = compose_answer(q, cands(doc, "第二十八条", "第二十九条"), Filters(), source_text=source(doc))
    assert not answer.abstained
    first = answer.bullets[0]
    assert "计划检修" in first.span and "提前7天通知用户" in first.span
    assert first.span in doc.text
    assert first.render() == f" • {first.span}〔《电力供应与使用条例》，生效：2019-03-02〕"
    assert answer.answer_zh.startswith(answer.title + "\n- 相关规定：\n • ")
    assert len(answer.citations) == 1  # two articles of one document: one citation (deduplicated by url)
    assert answer.citations[0].url == "https://example.gov/88"
    assert answer.chinese_ratio >= 0.3


def test_at_most_two_spans_per_candidate_and_four_bullets(doc):
    q = "供电企业 用户 电力 供电 停电 检修 通知 电费 用电"
    labels = [c.article for c in doc.chunks if c.kind == "article"][20:30]
    answer = compose_answer(q, cands(doc, *labels), Filters(), source_text=source(doc), top_n=5)
    assert len(answer.bullets) <= 4
    per = {}
    for b in answer.bullets:
        per[b.chunk_id] = per.get(b.chunk_id, 0) + 1
    assert max(per.values()) <= 2
    assert all(len(b.span) > 20 for b in answer.bullets)


def test_a_span_not_in_the_stored_text_is_dropped_and_counted(doc):
    genuine = cands(doc, "第二十八条")[0]
    forged = replace(genuine.chunk, text=genuine.chunk.text.replace("7天", "3天"))
    answer = compose_answer(
        "计划检修停电要提前几天通知用户？", [Candidate(forged, 1.0)], Filters(), source_text=source(doc)
    )
    assert answer.dropped_spans >= 1
    assert all(b.span in doc.text for b in answer.bullets)


def test_no_candidate_above_the_floor_abstains(doc):
    answer = compose_answer(
        "量子计算机的专利保护期限是多少年？", cands(doc, "第二十八条", "第一条"), Filters(), source_text=source(doc)
    )
    assert answer.abstained and answer.title == ABSTAIN_TITLE and not answer.bullets
    assert "没有" in answer.answer_zh


def test_empty_candidates_abstain(doc):
    assert compose_answer("并网条件", [], Filters(), source_text=source(doc)).abstained


def test_fallback_is_the_leading_120_characters():
    text = "本条例所称电力设施包括发电设施、变电设施和电力线路设施及其有关辅助设施" * 5
    spans = select_spans(text, question_keywords("核电站的选址要求"))
    assert spans == [text[:120]]


def test_short_sentences_grow_to_more_than_20_characters():
    text = "第九条 禁止窃电。窃电的，由电力管理部门责令停止违法行为，追缴电费并处罚款。"
    spans = select_spans(text, question_keywords("窃电怎么处罚"))
    assert all(len(s) > 20 for s in spans) and all(s in text for s in spans)


def test_heading_names_province_and_asset():
    assert (
        heading_for("在广东建分布式光伏并网要满足什么条件？", Filters(province=("gd",), asset=("solar",)))
        == "分布式光伏要点（广东 / 光伏）"
    )
    assert heading_for("并网要满足什么条件", Filters()) == "并网要点"


def test_keywords_drop_question_words():
    terms = {k.term for k in question_keywords("我们要办什么手续才能并网？")}
    assert "并网" in terms and "什么" not in terms and "我们" not in terms


def test_chinese_ratio():
    assert chinese_ratio("并网要点") == 1.0
    assert chinese_ratio("abc并") == 0.25


def test_relevance_floor_needs_both_signals_weak_to_abstain():
    floor = RelevanceFloor(coverage=0.45, dense=0.89, coverage_alone=0.25)
    assert floor.weak(0.30, 0.85)  # little keyword overlap and a distant best vector: abstain
    assert not floor.weak(0.30, 0.93)  # a close vector keeps it (lay wording, statute words differ)
    assert not floor.weak(0.60, 0.80)  # strong keyword coverage keeps it
    assert floor.weak(0.20, None) and not floor.weak(0.30, None)  # no dense score known: coverage alone
