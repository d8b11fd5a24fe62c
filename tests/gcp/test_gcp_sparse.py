"""Pure parts of the Vertex adapters, checked against references: restricts against the local index's filter
mask (the same selection on every random case), BM25 sparse vectors against the formula."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from contract.contracts import make_meta
from regrag.adapters.gcp.restricts import (
    EFFECTIVE,
    EFFECTIVE_TO,
    DatapointRestricts,
    QueryRestricts,
    datapoint_restricts,
    query_restricts,
)
from regrag.adapters.gcp.sparse import Lexicon, document_vector, query_vector, token_dimension
from regrag.adapters.local.search_store import restricts
from regrag.adapters.local.snapshot_build import build_snapshot
from regrag.domain.bm25 import Bm25Params
from regrag.domain.errors import InvalidInput
from regrag.domain.models import Filters

_OPS = {"LESS_EQUAL": lambda a, b: a <= b, "GREATER_EQUAL": lambda a, b: a >= b, "GREATER": lambda a, b: a > b}


def passes(point: DatapointRestricts, query: QueryRestricts) -> bool:
    """Vector Search's documented restrict semantics, for the one-token-per-namespace datapoints we write."""
    for namespace, allowed in query.allow.items():
        if point.tokens.get(namespace) not in allowed:
            return False
    return all(c.namespace in point.numbers and _OPS[c.op](point.numbers[c.namespace], c.value) for c in query.numeric)


def random_meta(rng: random.Random, i: int):
    day = lambda: f"{rng.randint(2000, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"  # noqa: E731
    effective = day() if rng.random() > 0.1 else None
    effective_to = day() if rng.random() > 0.6 else None
    return make_meta(
        f"doc-{i}",
        province=rng.choice(["gd", "sd", "national"]),
        asset=rng.choice(["solar", "wind", "coal"]),
        doc_class=rng.choice(["grid", "permit"]),
        regulation_level=rng.choice(["national_law", "local_regulation", "unknown"]),
        corpus=rng.choice(["guangdong", "national"]),
        effective_date=effective,
        effective_to=effective_to if effective and effective_to and effective_to > effective else None,
    )


def random_filters(rng: random.Random) -> Filters:
    pick = lambda values: tuple(rng.sample(values, rng.randint(0, 2)))  # noqa: E731
    day = lambda: f"{rng.randint(2000, 2030)}-{rng.randint(1, 12):02d}-01" if rng.random() > 0.5 else None  # noqa: E731
    date_from, date_to = day(), day()
    if date_from and date_to and date_from > date_to:
        date_from, date_to = date_to, date_from
    return Filters(
        province=pick(["gd", "sd", "national"]),
        asset=pick(["solar", "wind", "coal"]),
        regulation_level=pick(["national_law", "local_regulation"]),
        corpus=pick(["guangdong", "national"]),
        doc_id=tuple(f"doc-{rng.randint(0, 59)}" for _ in range(rng.randint(0, 1) * 3)),
        date_from=date_from,
        date_to=date_to,
        as_of=day(),
        include_superseded=rng.random() > 0.7,
    )


def test_restricts_select_exactly_what_the_local_index_selects():
    rng = random.Random(7)
    metas = [random_meta(rng, i) for i in range(60)]
    rows = []
    for rowid, m in enumerate(metas):
        r = restricts(m)
        rows.append(
            (rowid, m.doc_id, r["corpus"], r["province"], r["asset"], r["doc_class"], r["level"], r["doc_id"],
             r["eff"], r["eff_to"])
        )  # fmt: skip
    snapshot = build_snapshot(1, rows, (), None, (), {}, Bm25Params())
    points = {m.doc_id: datapoint_restricts(m) for m in metas}
    for m in metas:  # the same values on both sides
        local, ours = restricts(m), points[m.doc_id]
        assert (ours.numbers[EFFECTIVE], ours.numbers[EFFECTIVE_TO]) == (local["eff"], local["eff_to"])
        assert ours.tokens["regulation_level"] == local["level"] and ours.tokens["doc_id"] == local["doc_id"]
    checked = 0
    for _ in range(400):
        filters = random_filters(rng)
        expected = {snapshot.chunk_ids[i] for i in snapshot.mask(filters).nonzero()[0]}
        query = query_restricts(filters)
        assert {d for d, p in points.items() if passes(p, query)} == expected, filters
        checked += bool(expected)
    assert checked > 50  # the random cases are not all empty


def test_restricts_refuse_non_ascii_tokens():
    with pytest.raises(InvalidInput, match="ASCII"):
        datapoint_restricts(make_meta(province="广东"))
    with pytest.raises(InvalidInput, match="ASCII"):
        query_restricts(Filters(corpus=("广东",)))


def test_token_dimensions_are_stable_63_bit_integers():
    assert token_dimension("并网") == 5511503289554477453  # changing the hash would orphan every sparse vector
    dims = {token_dimension(f"词{i}") for i in range(10_000)}
    assert len(dims) == 10_000 and all(0 <= d < 2**63 for d in dims)


def test_sparse_dot_product_is_the_bm25_score():
    params = Bm25Params(k1=1.2, b=0.75, avgdl=6.0, title_weight=0.5)
    docs = [
        (["电网", "企业", "并网", "协议", "并网"], ["电力", "条例"]),
        (["禁止", "窃电"], ["电力", "条例"]),
        (["并网", "运行", "安全"], []),
    ]
    lexicon = Lexicon.count(docs, params.title_weight)
    query = ["并网", "协议", "并网", "不存在"]
    q = query_vector(query, lexicon).as_dict()
    for body, title in docs:
        d = document_vector(body, title, params).as_dict()
        got = sum(w * q.get(dim, 0.0) for dim, w in d.items())
        tf = Counter(body)
        for t in title:
            tf[t] += params.title_weight
        length = len(body) + params.title_weight * len(title)
        expected = 0.0
        for term in query:  # a repeated query term counts again, as in the local index
            df = lexicon.df.get(term, 0)
            idf = math.log(1 + (lexicon.chunks - df + 0.5) / (df + 0.5))
            f = tf.get(term, 0)
            expected += idf * f * (params.k1 + 1) / (f + params.k1 * (1 - params.b + params.b * length / params.avgdl))
        assert got == pytest.approx(expected, rel=1e-9)
    assert lexicon.chunks == 3 and lexicon.df["并网"] == 2 and lexicon.avgdl == pytest.approx((6 + 3 + 3) / 3)


def test_without_a_lexicon_every_idf_is_one():
    q = query_vector(["并网", "协议"], Lexicon())
    assert sorted(q.values) == [1.0, 1.0]
    assert not query_vector(["  "], Lexicon())
