"""The second abstention rule: signals read from the answer's own quotes, penalties named as reasons."""

from dataclasses import replace

import pytest

from regrag.domain.models import Filters
from regrag.domain.results import Candidate
from regrag.pipeline.abstention import AbstentionRule, Signals, signals
from regrag.pipeline.compose import compose_answer, question_keywords
from regrag.pipeline.ingest import build_document
from regrag.ports import Blob

from conftest import SAMPLE

NOTICE = "供电企业因为计划检修要停电，至少要提前几天通知用户？"  # 第二十八条 answers it: 提前7天


@pytest.fixture(scope="module")
def doc():
    data = (SAMPLE / "docs" / "nat-reg-0088.md").read_bytes()
    return build_document("docs/nat-reg-0088.md", Blob("docs/nat-reg-0088.md", data, 7), None, 800)


def read(doc, question, article="第二十八条", province=None):
    chunks = [c for c in doc.chunks if c.article == article]
    if province:
        chunks = [replace(c, meta=replace(c.meta, province=province)) for c in chunks]
    cands = [Candidate(c, 1.0, dense_score=0.95, fused_score=0.09) for c in chunks]
    answer = compose_answer(question, cands, Filters(), source_text=lambda _: doc.text)
    assert not answer.abstained and answer.bullets
    return signals(question, question_keywords(question), answer, cands, 0.6)


def test_a_figure_asked_and_quoted_is_not_penalised(doc):
    seen = read(doc, NOTICE)
    assert seen.asks_figure and seen.figure_quoted and seen.anchor_quoted and not seen.place_uncovered
    assert AbstentionRule(0.5).reasons(seen) == [] and not AbstentionRule(0.5).abstains(seen)


def test_a_figure_asked_of_quotes_without_one_is_a_named_reason(doc):
    question = "供电企业发生电力运行事故给用户造成损害，最高赔偿多少元？"
    seen = read(doc, question, article="第四十三条")  # liability in general terms, no amount
    assert seen.asks_figure and not seen.figure_quoted
    assert "问题询问具体数值，但引文中没有相应数值" in AbstentionRule(0.5).reasons(seen)


def test_a_place_without_documents_is_uncovered_unless_a_candidate_is_from_there(doc):
    assert read(doc, "西藏自治区供电企业停电要提前几天通知用户？").place_uncovered
    assert not read(doc, "西藏自治区供电企业停电要提前几天通知用户？", province="xz").place_uncovered
    assert not read(doc, NOTICE).place_uncovered  # no place named


def test_each_reason_costs_the_penalty_and_zero_turns_the_rule_off():
    weak = Signals(overall=0.55, asks_figure=True, figure_quoted=False, anchor_quoted=False, place_uncovered=True)
    rule = AbstentionRule(below=0.5, penalty=0.1)
    assert rule.score(weak) == pytest.approx(0.25) and rule.abstains(weak) and len(rule.reasons(weak)) == 3
    assert not AbstentionRule(below=0.0).abstains(weak)
    unsure = Signals(overall=0.1, asks_figure=False, figure_quoted=False, anchor_quoted=True, place_uncovered=False)
    assert not rule.abstains(unsure)  # low confidence with nothing specific missing: the caution line, not silence
    assert Signals.from_dict(weak.to_dict()) == weak
