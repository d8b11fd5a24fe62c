"""What the checksums cost on the paths that read the index at start: a saved snapshot's load, and the
snapshot build from the index's rows.

    python bench/checksums.py [--sizes 10000 100000] [--repeat 5]

Saved snapshot (bench/snapshot_search.py's synthetic chunks: 384-d vectors, ~60 postings each): saved once,
then loaded `--repeat` times (files in the page cache, as on a server restart) with the check and with the
check skipped; the check reads every file once (snapshot_files.damage). Build: the same chunks written to a
SqliteIndex, its snapshot built with each vector and term row checked against its CRC and with the check
skipped. Prints medians and the ratio checked / unchecked, in the same process.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from _common import ROOT  # noqa: F401 - puts shared/ on the path
from regrag.adapters.local import search_store, snapshot_files
from regrag.adapters.local.chunk_store import SqliteIndex
from regrag.adapters.local.index_file import terms_sum, vector_sum
from regrag.adapters.local.snapshot_build import build_snapshot
from regrag.domain.bm25 import Bm25Params
from regrag.wiring.models import limit_blas_threads
from snapshot_search import DIM, synthetic

SETTINGS = {"bench": True}


def median_s(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def load_costs(n: int, repeat: int, work: Path) -> tuple[float, float, int]:
    rows, vectors, terms, vocab = synthetic(n, 8)
    snapshot = build_snapshot(1, rows, vectors, DIM, terms, vocab, Bm25Params())
    folder = work / f"snap-{n}"
    assert snapshot_files.save(snapshot, folder, SETTINGS)
    size = sum(p.stat().st_size for p in (folder / "v1").iterdir())

    def load() -> None:
        assert snapshot_files.load(folder, 1, SETTINGS) is not None

    load()  # files into the page cache
    checked = median_s(load, repeat)
    with mock.patch.object(snapshot_files, "damage", lambda target, meta: None):
        unchecked = median_s(load, repeat)
    return checked, unchecked, size


def build_costs(n: int, repeat: int, work: Path) -> tuple[float, float]:
    rows, vectors, terms, vocab = synthetic(n, 8)
    db = SqliteIndex(work / f"index-{n}.sqlite", DIM, "bench")
    with db.atomically():
        con = db._con()
        con.executemany("INSERT INTO chunk_key(rowid, id) VALUES (?,?)", [(r[0], r[1]) for r in rows])
        con.executemany(
            "INSERT INTO restrict(rowid, corpus, province, asset, doc_class, level, doc_id, eff, eff_to) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [(r[0], *r[2:]) for r in rows],
        )
        con.executemany(
            "INSERT INTO vec_store(rowid, emb, sum) VALUES (?,?,?)", [(i, e, vector_sum(e)) for i, e in vectors]
        )
        con.executemany("INSERT INTO lex_vocab(id, term) VALUES (?,?)", [(i, t) for t, i in vocab.items()])
        con.executemany(
            "INSERT INTO lex(rowid, length, term_ids, counts, sum) VALUES (?,?,?,?,?)",
            [(i, length, ids, counts, terms_sum(length, ids, counts)) for i, length, ids, counts in terms],
        )
    del rows, vectors, terms
    checked = median_s(db._build_snapshot, repeat)
    with (
        mock.patch.object(search_store, "_vector_intact", lambda row: True),
        mock.patch.object(search_store, "_terms_intact", lambda row: True),
    ):
        unchecked = median_s(db._build_snapshot, repeat)
    db.close()
    return checked, unchecked


def main() -> None:
    limit_blas_threads()
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print("| chunks | saved files | load checked / unchecked | ratio | build checked / unchecked | ratio |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            work = Path(tmp)
            load_c, load_u, size = load_costs(n, args.repeat, work)
            build_c, build_u = build_costs(n, args.repeat, work)
            load = f"{load_c * 1000:.0f} / {load_u * 1000:.0f} ms | {load_c / load_u:.1f}×"
            build = f"{build_c:.2f} / {build_u:.2f} s | {build_c / build_u:.2f}×"
            print(f"| {n:,} | {size / 1e6:,.0f} MB | {load} | {build} |", flush=True)


if __name__ == "__main__":
    main()
