"""The 8-bit shortlist of large corpus runs: the dense search through it finds what the exact scan finds, with
exact scores, under every kind of filter, and survives the snapshot's trip to disk."""

from __future__ import annotations

import numpy as np
import pytest

from regrag.adapters.local import coarse, snapshot_files
from regrag.adapters.local.snapshot_build import build_snapshot
from regrag.domain.bm25 import Bm25Params
from regrag.domain.models import Filters

DIM = 32
CORPORA = ("a", "b", "c")


def _table(n=6000, seed=11):
    """n chunks over three corpora; vectors clustered (as article embeddings are: many near neighbours)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIM)).astype(np.float32)
    vecs = centres[rng.integers(0, 40, n)] + 0.35 * rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = [
        (
            i + 1,
            f"k{i:05d}",
            CORPORA[i % 3],
            ("gd", "sd", "js")[int(rng.integers(3))],
            "general",
            "grid",
            "local",
            f"d{i // 7}",
            20100101 + int(rng.integers(10)) * 10000,
            (99991231, 20200101)[int(rng.integers(2))],
        )
        for i in range(n)
    ]
    vectors = [(i + 1, vecs[i].astype("<f4").tobytes()) for i in range(n)]
    return rows, vectors, rng.standard_normal((12, DIM)).astype(np.float32)


def _build(rows, vectors, min_rows):
    return build_snapshot(1, rows, vectors, DIM, [], {}, Bm25Params(), coarse_min_rows=min_rows)


FILTERS = [
    Filters(),
    Filters(corpus=("a",)),
    Filters(corpus=("c", "b")),
    Filters(corpus=("a",), province=("gd",), as_of="2016-06-01"),
    Filters(province=("sd",), date_from="2014-01-01"),
    Filters(corpus=("b",), province=("js",), as_of="2011-01-01"),  # few rows pass: the exact path
]


@pytest.mark.parametrize("filters", FILTERS)
@pytest.mark.parametrize("k", [1, 10, 50])
def test_the_shortlist_finds_what_the_exact_scan_finds(filters, k):
    rows, vectors, queries = _table()
    exact = _build(rows, vectors, min_rows=10**9)
    shortlisted = _build(rows, vectors, min_rows=1000)
    assert not exact.coarse and len(shortlisted.coarse) == 3  # each corpus run of 2,000 rows has its index
    for query in queries:
        query /= np.linalg.norm(query)
        want, got = exact.dense(query, filters, k), shortlisted.dense(query, filters, k)
        assert [h.chunk_id for h in got] == [h.chunk_id for h in want]
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-6)  # re-scored exactly


def test_the_shortlist_keeps_only_rows_that_pass_the_filter():
    rows, vectors, queries = _table()
    snap = _build(rows, vectors, min_rows=1000)
    start, stop = snap.corpus_runs["a"]
    eligible = np.zeros(stop - start, dtype=bool)
    eligible[::5] = True
    found = coarse.shortlist(snap.coarse[(start, stop)], queries[0], eligible, coarse.size(10))
    assert found.size == coarse.size(10) and eligible[found].all()
    few = np.zeros(stop - start, dtype=bool)
    few[[3, 7]] = True
    assert sorted(coarse.shortlist(snap.coarse[(start, stop)], queries[0], few, 50).tolist()) == [3, 7]


def test_the_saved_snapshot_keeps_the_shortlist_indexes(tmp_path):
    rows, vectors, queries = _table()
    snap = _build(rows, vectors, min_rows=1000)
    assert snapshot_files.save(snap, tmp_path, {"s": 1})
    loaded = snapshot_files.load(tmp_path, 1, {"s": 1})
    assert loaded is not None and set(loaded.coarse) == set(snap.coarse)
    assert loaded.row_reader is not None  # re-scoring reads rows with pread, not through the mapping
    for filters in FILTERS:
        assert loaded.dense(queries[1], filters, 20) == snap.dense(queries[1], filters, 20)


def test_the_row_reader_reads_the_rows_the_mapping_holds(tmp_path):
    matrix = np.random.default_rng(2).standard_normal((500, DIM)).astype(np.float32)
    np.save(tmp_path / "v.npy", matrix)
    mapped = np.load(tmp_path / "v.npy", mmap_mode="r")
    reader = coarse.RowReader(str(mapped.filename), int(mapped.offset), DIM)
    for rows in ([0], [499], [3, 4, 5, 9, 10, 200, 498, 499], list(range(500)), []):
        got = reader.rows(np.asarray(rows, dtype=np.int64))
        assert got.shape == (len(rows), DIM) and np.array_equal(got, matrix[rows])
