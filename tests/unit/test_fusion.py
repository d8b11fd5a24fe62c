import datetime as dt

from regrag.domain.models import Filters, Hit
from regrag.pipeline.retrieve import effective_filters, rrf_fuse


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
