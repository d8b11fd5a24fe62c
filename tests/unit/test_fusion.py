import datetime as dt
from dataclasses import replace

from contract.contracts import make_chunk, make_meta
from regrag.domain.models import Filters, Hit
from regrag.domain.results import Candidate, Features
from regrag.query.fusion import positions, rrf, rrf_fuse
from regrag.query.question import analyse, in_force_by_default
from regrag.query.score import ScoringConfig, score


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
    assert in_force_by_default(Filters(), today).as_of == "2026-01-02"
    assert in_force_by_default(Filters(as_of="2015-01-01"), today).as_of == "2015-01-01"
    assert in_force_by_default(Filters(include_superseded=True), today).as_of is None


def test_one_fusion_helper_adds_weighted_reciprocal_ranks_in_the_order_given():
    fused = rrf([(1.0, {"a": 1, "b": 2}), (0.5, {"b": 1})], k=20)
    assert fused == {"a": 1 / 21, "b": 1 / 22 + 0.5 / 21}
    assert positions(["x", "y", "x"]) == {"x": 1, "y": 2}  # the first occurrence counts


def candidate(cid, province, coverage=0.0):
    meta = make_meta(f"doc-{cid}", title=f"条例{cid}", province=province)
    return Candidate(replace(make_chunk(meta, 1), id=cid), score=0.0, features=Features(coverage=coverage))


def config(**overrides):
    values = {"rrf_k": 20, "coverage_weight": 0.0, "form_weight": 0.0, "place_scope": True, "national_preference": 0.8}
    return ScoringConfig(**{**values, **overrides})


def ordered(question, pool, filters=None, weights=None, **cfg):
    scored = score(analyse(question, filters or Filters()), pool, config(**cfg), weights)
    return [c.chunk.id for c in scored.candidates], scored


def test_rules_of_other_provinces_rank_after_those_that_apply_where_the_question_is():
    pool = [candidate("a", "sd"), candidate("b", "national"), candidate("c", "gd"),
            candidate("d", "js"), candidate("e", "sh"), candidate("f", "national")]  # fmt: skip
    ids, scored = ordered("在江苏建分布式光伏要办什么手续？", pool)
    assert scored.scope.provinces == ("js",)
    assert ids == ["b", "d", "f", "a", "c", "e"]  # nothing dropped, each group in retrieval order
    assert [c.features.applies for c in scored.candidates] == [True, True, True, False, False, False]
    assert [c.features.retrieval_rank for c in scored.candidates] == [2, 4, 6, 1, 3, 5]  # the evidence is kept


def test_no_place_or_a_province_filter_leaves_the_order_alone():
    pool = [candidate("a", "sd"), candidate("b", "national")]
    assert ordered("在江苏建光伏", pool, Filters(province=("sd",)))[0] == ["a", "b"]  # the filter decides
    assert not ordered("在江苏建光伏", pool, Filters(province=("sd",)))[1].scope
    assert ordered("在江苏建光伏", pool, place_scope=False, national_preference=1.0)[0] == ["a", "b"]


def test_without_a_place_national_rules_lead_where_scores_are_close():
    pool = [candidate("a", "sh"), candidate("b", "national"), candidate("c", "gd")]
    ids, scored = ordered("供电企业计划检修停电要提前几天通知？", pool)
    assert not scored.scope
    assert ids == ["b", "a", "c"]  # 1/22 > 1/21 × 0.8 > 1/23 × 0.8
    assert [round(c.score, 4) for c in scored.candidates] == [round(1 / 22, 4), round(0.8 / 21, 4), round(0.8 / 23, 4)]
    assert [c.features.place_factor for c in scored.candidates] == [1.0, 0.8, 0.8]
    # a clear local winner keeps its place; 1.0 turns the preference off; a province filter decides alone
    assert ordered("停电通知", pool[:2], rrf_k=1)[0] == ["a", "b"]  # 1/2 × 0.8 > 1/3
    assert ordered("停电通知", pool, national_preference=1.0)[0] == ["a", "b", "c"]
    assert ordered("停电通知", pool, Filters(province=("sh", "national")))[0] == ["a", "b", "c"]
    assert ordered("停电通知", pool, weights={"shanghai": 3.0})[0] == ["a", "b", "c"]
    # a named place takes precedence over the preference
    ids, scored = ordered("广东的停电通知", pool)
    assert scored.scope.provinces == ("gd",) and ids == ["b", "c", "a"]


def test_coverage_is_one_more_ranking_fused_with_the_retrieval_order():
    pool = [candidate("a", "national", 0.2), candidate("b", "national", 0.9), candidate("c", "national", 0.5)]
    ids, scored = ordered("停电通知", pool, coverage_weight=1.0)
    # a: 1/21 + 1/23, b: 1/22 + 1/21, c: 1/23 + 1/22
    assert ids == ["b", "a", "c"]
    assert {c.chunk.id: c.features.coverage_rank for c in scored.candidates} == {"b": 1, "c": 2, "a": 3}
