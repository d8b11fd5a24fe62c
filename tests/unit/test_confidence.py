from dataclasses import replace

import pytest

from regrag.domain.models import Filters
from regrag.domain.results import Candidate
from regrag.ingest.ingest import build_document
from regrag.ports import Blob
from regrag.query.confidence import CAUTION, assess
from regrag.query.question import coverage, question_keywords
from regrag.query.render import with_caution

from conftest import SAMPLE, compose_answer

QUESTION = "供电企业因为计划检修要停电，至少要提前几天通知用户？"


@pytest.fixture(scope="module")
def doc():
    data = (SAMPLE / "docs" / "nat-reg-0088.md").read_bytes()
    return build_document("docs/nat-reg-0088.md", Blob("docs/nat-reg-0088.md", data, 7), None, 800)


def ranked(doc, first_dense=0.95, margin=True, agree=True):
    chunks = [c for c in doc.chunks if c.article == "第二十八条"] + [c for c in doc.chunks if c.kind == "article"][:11]
    out = []
    for i, chunk in enumerate(chunks):
        fused = (0.09 if margin else 0.051) if i == 0 else 0.05 - i * 0.0005
        out.append(
            Candidate(
                chunk,
                1 / (20 + i + 1),
                dense_rank=1 if agree else 40,
                lexical_rank=1,
                dense_score=first_dense if i == 0 else 0.85,
                lexical_score=10.0,
                fused_score=fused,
            )
        )
    return out


def answer_for(doc, candidates):
    return compose_answer(QUESTION, candidates, Filters(), source_text=lambda _: doc.text)


def span_coverage(answer, keywords):
    return coverage(" ".join(b.span for b in answer.bullets), keywords)


def test_clear_winner_with_close_vector_and_covered_terms_is_high(doc):
    cands = ranked(doc)
    answer = answer_for(doc, cands)
    conf = assess(cands, span_coverage(answer, question_keywords(QUESTION)), rerank_status="skipped", dense_floor=0.89)
    assert conf.level == "high" and conf.rerank is None
    assert conf.inputs["legs_agree"] and conf.inputs["fused_margin"] > 0.3


def test_flat_list_far_vector_and_disagreeing_legs_is_low(doc):
    cands = ranked(doc, first_dense=0.86, margin=False, agree=False)
    answer = answer_for(doc, cands)
    keywords = [*question_keywords(QUESTION), *question_keywords("核电站 放射性 废物 处置")]
    conf = assess(cands, span_coverage(answer, keywords), rerank_status="skipped", dense_floor=0.89)
    assert conf.level == "low"
    cautious = with_caution(answer)
    assert cautious.answer_zh.split("\n")[1] == f"- {CAUTION}" and cautious.bullets == answer.bullets


def test_rerank_score_counts_when_gemini_ran(doc):
    cands = ranked(doc)
    cands[0] = replace(cands[0], rerank_score=2.0)
    keywords = question_keywords(QUESTION)
    conf = assess(cands, span_coverage(answer_for(doc, cands), keywords), rerank_status="ok", dense_floor=0.89)
    plain = assess(
        ranked(doc), span_coverage(answer_for(doc, ranked(doc)), keywords), rerank_status="skipped", dense_floor=0.89
    )
    assert conf.rerank == pytest.approx(0.2) and conf.overall < plain.overall


def test_abstention_is_low(doc):
    answer = compose_answer("量子计算机的专利保护期", ranked(doc), Filters(), source_text=lambda _: doc.text)
    assert answer.abstained
    assert assess([], 0.0, rerank_status="skipped", dense_floor=0.89).level == "low"
