"""The in-memory search: BM25 against a reference implementation of the formula, and filter masks."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from regrag.adapters.local.snapshot_build import build_snapshot
from regrag.domain.bm25 import Bm25Params
from regrag.domain.models import Filters

DOCS = [
    ["并网", "协议", "电网", "企业", "并网"],
    ["窃电", "处罚", "罚款"],
    ["电网", "调度", "并网", "运行", "电网", "电网"],
    ["环境", "影响", "评价", "报告书"],
]


def reference_bm25(query, docs, k1, b):
    """Robertson & Zaragoza's BM25 with Lucene's idf, written out term by term."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    scores = []
    for doc in docs:
        tf = Counter(doc)
        score = 0.0
        for term in query:
            df = sum(1 for d in docs if term in d)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


def snapshot(params, province=("gd", "sd", "gd", "national"), eff_to=(99991231,) * 4):
    vocab = {t: i for i, t in enumerate(sorted({t for d in DOCS for t in d}))}
    rows, terms = [], {}
    for i, doc in enumerate(DOCS):
        rows.append((i + 10, f"c{i}", "x", province[i], "general", "grid", "local", f"d{i}", 20200101 + i, eff_to[i]))
        counts = Counter(doc)
        ids = sorted(counts, key=vocab.get)
        terms[i + 10] = (
            len(doc),
            np.asarray([vocab[t] for t in ids], "<i4").tobytes(),
            np.asarray([counts[t] for t in ids], "<f4").tobytes(),
        )
    vectors = {i + 10: np.eye(4, dtype="<f4")[i].tobytes() for i in range(4)}
    return build_snapshot(7, rows, vectors.items(), 4, [(r, *v) for r, v in terms.items()], vocab, params)


@pytest.mark.parametrize("params", [Bm25Params(), Bm25Params(1.2, 0.75), Bm25Params(2.0, 1.0)])
@pytest.mark.parametrize("query", [["并网"], ["电网", "并网"], ["并网", "并网", "窃电"], ["不存在"]])
def test_bm25_matches_the_reference_formula(params, query):
    snap = snapshot(params)
    hits = snap.lexical(query, Filters(), 10)
    want = reference_bm25(query, DOCS, params.k1, params.b)
    got = {h.chunk_id: h.score for h in hits}
    for i, score in enumerate(want):
        if score > 0:
            assert got[f"c{i}"] == pytest.approx(score, rel=1e-5)
        else:
            assert f"c{i}" not in got
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_filters_mask_before_top_k():
    snap = snapshot(Bm25Params(), eff_to=(99991231, 99991231, 20200102, 99991231))
    assert [h.chunk_id for h in snap.lexical(["电网"], Filters(province=("gd",)), 1)] == ["c2"]
    # c3 is the nearest overall but not in gd: among gd chunks (both at cosine 0) the tie goes to the lower id
    assert [h.chunk_id for h in snap.dense(np.eye(4, dtype=np.float32)[3], Filters(province=("gd",)), 1)] == ["c0"]
    # c2 takes effect 2020-01-03 and stops 2020-01-02 in this fixture: never in force
    assert "c2" not in {h.chunk_id for h in snap.lexical(["电网"], Filters(as_of="2025-01-01"), 10)}
    assert snap.lexical(["电网"], Filters(province=("zz",)), 10) == []
    assert [h.chunk_id for h in snap.dense(np.eye(4, dtype=np.float32)[1], Filters(), 1)] == ["c1"]
    assert {h.chunk_id for h in snap.dense(np.eye(4, dtype=np.float32)[1], Filters(date_from="2020-01-03"), 4)} == {
        "c2",
        "c3",
    }


def _interleaved(n=300, corpora=("b", "a", "c"), seed=3, lex_order=None):
    """Chunks of three corpora inserted interleaved, with random vectors, terms, provinces and dates.
    `lex_order`: a sort key for the term rows (rowid, length, ids, counts) handed to the build."""
    rng = np.random.default_rng(seed)
    vocab = {f"t{i}": i for i in range(40)}
    rows, terms, vectors, table = [], {}, {}, []
    for i in range(n):
        rowid = 1000 - i  # row ids descend: the snapshot's order must not depend on them
        corpus, province = corpora[i % 3], ("gd", "sd")[int(rng.integers(2))]
        eff, eff_to = 20200101 + int(rng.integers(3)) * 10000, (99991231, 20210601)[int(rng.integers(2))]
        rows.append((rowid, f"k{i:04d}", corpus, province, "general", "grid", "local", f"d{i // 5}", eff, eff_to))
        counts = Counter(f"t{t}" for t in rng.integers(0, 40, 6))
        ids = sorted(counts, key=vocab.get)
        terms[rowid] = (
            sum(counts.values()),
            np.asarray([vocab[t] for t in ids], "<i4").tobytes(),
            np.asarray([counts[t] for t in ids], "<f4").tobytes(),
        )
        vec = rng.standard_normal(8).astype(np.float32)
        vectors[rowid] = (vec / np.linalg.norm(vec)).astype("<f4").tobytes()
        table.append((f"k{i:04d}", corpus, province, eff, eff_to, counts, vec / np.linalg.norm(vec)))
    lex = [(r, *v) for r, v in terms.items()]
    if lex_order is not None:
        corpus_of = {row[0]: row[2] for row in rows}
        lex.sort(key=lambda t: lex_order(corpus_of[t[0]], t[0]))
    return build_snapshot(1, rows, vectors.items(), 8, lex, vocab, Bm25Params()), table


@pytest.mark.parametrize(
    "filters",
    [
        Filters(),
        Filters(corpus=("a",)),
        Filters(corpus=("c", "b")),
        Filters(corpus=("a",), province=("gd",), as_of="2022-03-01"),
        Filters(corpus=("b",), date_from="2021-01-01"),
        Filters(corpus=("zz",)),
    ],
)
def test_searches_by_corpus_run_find_what_a_scan_of_every_row_finds(filters):
    """Each corpus is searched on its own run of rows; the result must be the scan of all rows, filtered."""
    snap, table = _interleaved()
    query = np.random.default_rng(9).standard_normal(8).astype(np.float32)
    tokens = ["t1", "t2", "t3", "t5", "t8"]

    def passes(corpus, province, eff, eff_to):
        day = int(filters.as_of.replace("-", "")) if filters.as_of else None
        return (
            (not filters.corpus or corpus in filters.corpus)
            and (not filters.province or province in filters.province)
            and (not filters.date_from or eff >= int(filters.date_from.replace("-", "")))
            and (day is None or eff <= day < eff_to)
        )

    eligible = [r for r in table if passes(*r[1:5])]
    dense_want = sorted((-float(r[6] @ query), r[0]) for r in eligible)[:20]
    got = snap.dense(query, filters, 20)
    assert [h.chunk_id for h in got] == [c for _, c in dense_want]
    assert [h.score for h in got] == pytest.approx([-s for s, _ in dense_want], rel=1e-5)
    full = {h.chunk_id: h.score for h in snap.lexical(tokens, Filters(), len(table))}  # BM25 over all rows
    lexical_want = sorted((-full[r[0]], r[0]) for r in eligible if r[0] in full)[:20]
    got = snap.lexical(tokens, filters, 20)
    assert [h.chunk_id for h in got] == [c for _, c in lexical_want]
    assert snap.lexical(tokens, filters, 20) == got  # served again from the per-run score cache


@pytest.mark.parametrize("batch", [1, 7, 4096])
@pytest.mark.parametrize(
    "lex_order",
    [None, lambda corpus, rowid: (corpus, rowid), lambda corpus, rowid: -rowid * 7919 % 1009],
    ids=["inserted", "snapshot-order", "scrambled"],
)
def test_the_build_gives_the_same_postings_whatever_order_and_batches_the_rows_come_in(monkeypatch, batch, lex_order):
    """The index reads term counts in the snapshot's row order (used as they are); any other order is put in
    row order first. Every order, read in batches of any size, gives the same arrays, each term's rows
    ascending."""
    import regrag.adapters.local.snapshot_build as snapshot_build

    def arrays(snap):
        return [snap.indptr, snap.posting_rows, snap.posting_weights, snap.idf, snap.vectors, snap.has_terms]

    want, _ = _interleaved()
    monkeypatch.setattr(snapshot_build, "_BATCH", batch)
    got, table = _interleaved(lex_order=lex_order)
    assert all(np.array_equal(a, b) for a, b in zip(arrays(got), arrays(want), strict=True))
    for term in range(len(got.indptr) - 1):
        rows = got.posting_rows[got.indptr[term] : got.indptr[term + 1]]
        assert np.all(rows[1:] > rows[:-1])
    assert got.posting_rows.size == sum(len(counts) for *_, counts, _ in table)  # one posting per distinct term
