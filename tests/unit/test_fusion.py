import datetime as dt
from dataclasses import replace

from contract.contracts import make_chunk, make_meta
from regrag.domain.models import Filters, Hit
from regrag.domain.results import Candidate
from regrag.query.fusion import rrf_fuse
from regrag.query.orderings import by_applicability, question_scope, scope_first
from regrag.query.retrieve import effective_filters


def hits(*ids):
    return [Hit(cid, 1.0 / r, r) for r, cid in enumerate(ids, 1)]


def test_rrf_matches_the_formula():
    fused = rrf_fuse([hits("a", "b", "c"), hits("c", "a")], [1.0, 1.0], k=60)
    scores = {f.chunk_id: f.score for f in fused}
    assert abs(scores["a"] - (1 / 61 + 1 / 62)) < 1e-12
    assert abs(scores["c"] - (1 / 63 + 1 / 61)) < 1e-12
    assert abs(scores["b"] - 1 / 62) < 1e-12
    assert [f.chunk_id for f in fused] == ["a", "c", "b"]
    assert fused[0].ranks == (1, 2)


def test_weights_and_one_sided_hits():
    fused = rrf_fuse([hits("a"), hits("b")], [1.0, 2.0], k=60)
    assert [f.chunk_id for f in fused] == ["b", "a"]
    assert fused[0].ranks == (None, 1)


def test_ties_are_deterministic():
    a = rrf_fuse([hits("x", "y"), hits("y", "x")], [1, 1], 60)
    b = rrf_fuse([hits("y", "x"), hits("x", "y")], [1, 1], 60)
    assert [f.chunk_id for f in a] == [f.chunk_id for f in b]


def test_as_of_defaults_to_today_unless_superseded_versions_are_asked_for():
    today = dt.date(2026, 1, 2)
    assert effective_filters(Filters(), today).as_of == "2026-01-02"
    assert effective_filters(Filters(as_of="2015-01-01"), today).as_of == "2015-01-01"
    assert effective_filters(Filters(include_superseded=True), today).as_of is None


def candidate(cid, province, score):
    meta = make_meta(f"doc-{cid}", title=f"条例{cid}", province=province)
    return Candidate(replace(make_chunk(meta, 1), id=cid), score=score, fused_score=score)


def test_rules_of_other_provinces_rank_after_those_that_apply_where_the_question_is():
    ranked = [candidate("a", "sd", 0.9), candidate("b", "national", 0.8), candidate("c", "gd", 0.7),
              candidate("d", "js", 0.6), candidate("e", "sh", 0.5), candidate("f", "national", 0.4)]  # fmt: skip
    scope = question_scope("在江苏建分布式光伏要办什么手续？", Filters())
    assert scope.provinces == ("js",)
    out = scope_first(ranked, scope)
    assert [c.chunk.id for c in out] == ["b", "d", "f", "a", "c", "e"]  # nothing dropped, each group in order
    scores = [c.score for c in out]
    assert scores == sorted(scores, reverse=True)  # still a ranking score
    assert [c.fused_score for c in out] == [0.8, 0.6, 0.4, 0.9, 0.7, 0.5]  # the evidence is kept


def test_no_place_or_a_province_filter_leaves_the_order_alone():
    ranked = [candidate("a", "sd", 0.9), candidate("b", "national", 0.8)]
    assert scope_first(ranked, question_scope("分布式光伏并网条件", Filters())) == ranked
    assert not question_scope("在江苏建光伏", Filters(province=("sd",)))  # the filter decides
    assert not question_scope("在江苏建光伏", Filters(), enabled=False)


def test_without_a_place_national_rules_lead_where_scores_are_close():
    ranked = [candidate("a", "sh", 0.100), candidate("b", "national", 0.090), candidate("c", "gd", 0.060)]
    cfg = {"national_preference": 0.8}
    out, scope = by_applicability(ranked, "供电企业计划检修停电要提前几天通知？", Filters(), **cfg)
    assert not scope
    assert [c.chunk.id for c in out] == ["b", "a", "c"]  # 0.09 > 0.1 × 0.8 > 0.06 × 0.8
    assert [round(c.score, 3) for c in out] == [0.09, 0.08, 0.048]
    # a clear local winner keeps its place; 1.0 turns the preference off; a province filter decides alone
    strong = [candidate("a", "sh", 0.2), candidate("b", "national", 0.09)]
    assert [c.chunk.id for c in by_applicability(strong, "停电通知", Filters(), **cfg)[0]] == ["a", "b"]
    assert by_applicability(ranked, "停电通知", Filters(), national_preference=1.0)[0] == ranked
    assert by_applicability(ranked, "停电通知", Filters(province=("sh", "national")), **cfg)[0] == ranked
    assert by_applicability(ranked, "停电通知", Filters(), **cfg, corpus_weights={"shanghai": 3.0})[0] == ranked
    # a named place takes precedence over the preference
    out, scope = by_applicability(ranked, "广东的停电通知", Filters(), **cfg)
    assert scope.provinces == ("gd",) and [c.chunk.id for c in out] == ["b", "c", "a"]
