"""The in-memory search snapshot alone, on synthetic chunks: how one search grows with the index.

    python bench/snapshot_search.py [--sizes 26636 106544 426176 1065440] [--corpora 8] [--queries 30]

Builds a `SearchSnapshot` of n chunks spread evenly over `--corpora` corpora (random unit vectors, 384-d;
about 60 BM25 postings per chunk drawn from a Zipf-like vocabulary of 50,000 terms, as segmented articles
are), then times, per query, a dense and a lexical search (top 50, in force on an as-of date):

- one: one corpus (`corpus=[c0]`);
- filtered: one corpus and a province;
- fan-out: each corpus searched on its own, as the retriever's fan-out does (`corpus=[c]` for every c).

Prints build time and p50/p95 per case, and each case's time as a ratio of the 1st size's (same process).
The figures isolate the arrays: no SQLite, no HTTP, no pipeline (bench/scale.py measures those end to end).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _common import pct
from regrag.adapters.local.snapshot_build import build_snapshot
from regrag.domain.bm25 import Bm25Params
from regrag.domain.models import Filters
from regrag.wiring.models import limit_blas_threads

DIM = 384
VOCAB = 50_000
TERMS_PER_CHUNK = 60
PROVINCES = ("广东", "江苏", "山东", "浙江", "四川", "河北", "全国")


def synthetic(n: int, corpora: int, seed: int = 7):  # type: ignore[no-untyped-def]
    """Table rows as SqliteSearchStore.snapshot() reads them."""
    rng = np.random.default_rng(seed)
    rows = [
        (i + 1, f"c{i:08d}", f"c{i % corpora}", PROVINCES[i % 7], "solar", "law", "nat", f"d{i // 40}", eff, 99991231)
        for i in range(n)
        for eff in [20000101 + (i % 20) * 10000]
    ]
    matrix = rng.standard_normal((n, DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    vectors = [(i + 1, matrix[i].astype("<f4").tobytes()) for i in range(n)]
    del matrix
    ranks = np.arange(1, VOCAB + 1, dtype=np.float64)
    p = 1.0 / ranks
    p /= p.sum()
    drawn = rng.choice(VOCAB, (n, TERMS_PER_CHUNK), p=p)
    terms = []
    for i in range(n):
        ids = np.unique(drawn[i]).astype("<i4")
        counts = rng.integers(1, 4, ids.size).astype("<f4")
        terms.append((i + 1, float(counts.sum()), ids.tobytes(), counts.tobytes()))
    vocab = {f"t{t}": t for t in range(VOCAB)}
    return rows, vectors, terms, vocab


def time_case(snapshot, queries, tokens, filter_sets) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for q, toks in zip(queries, tokens, strict=True):
        t = time.perf_counter()
        for f in filter_sets:
            snapshot.dense(q, f, 50)
            snapshot.lexical(toks, f, 50)
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    limit_blas_threads()  # as every served process does (regrag.wiring.models)
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[26_636, 106_544, 426_176])
    ap.add_argument("--corpora", type=int, default=8)
    ap.add_argument("--queries", type=int, default=30)
    args = ap.parse_args()
    rng = np.random.default_rng(11)
    queries = [v / np.linalg.norm(v) for v in rng.standard_normal((args.queries, DIM), dtype=np.float32)]
    tokens = [[f"t{t}" for t in rng.integers(0, 3000, 12)] for _ in range(args.queries)]
    as_of = "2024-03-01"
    cases = {
        "one": [Filters(corpus=("c0",), as_of=as_of)],
        "filtered": [Filters(corpus=("c0",), province=("广东",), as_of=as_of)],
        "fan-out": [Filters(corpus=(f"c{c}",), as_of=as_of) for c in range(args.corpora)],
    }
    print("| chunks | build s | " + " | ".join(f"{c} p50/p95 ms" for c in cases) + " | ratio to 1st size (p50) |")
    print("|---|---|" + "---|" * len(cases) + "---|")
    first: dict[str, float] = {}
    for n in args.sizes:
        rows, vectors, terms, vocab = synthetic(n, args.corpora)
        t = time.perf_counter()
        snapshot = build_snapshot(1, rows, vectors, DIM, terms, vocab, Bm25Params())
        build_s = time.perf_counter() - t
        del rows, vectors, terms
        cells, ratios = [], []
        for c, (name, filter_sets) in enumerate(cases.items()):
            time_case(snapshot, queries[:3], tokens[:3], filter_sets)  # warm
            # distinct queries in every case: the per-query score cache must not serve them
            fresh = [q + np.float32(1e-6 * (c + 1)) for q in queries]
            ms = time_case(snapshot, fresh, [[*t, f"t{c + 100}"] for t in tokens], filter_sets)
            p50, p95 = pct(ms, 50), pct(ms, 95)
            first.setdefault(name, p50)
            cells.append(f"{p50:.1f} / {p95:.1f}")
            ratios.append(f"{p50 / first[name]:.1f}×")
        print(f"| {n:,} | {build_s:.1f} | " + " | ".join(cells) + " | " + " · ".join(ratios) + " |", flush=True)
        del snapshot


if __name__ == "__main__":
    main()
