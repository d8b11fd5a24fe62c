"""Chunk-map requests per operation at 200 / 2,000 / 20,000 document heads (GCP path, counted, not timed).

    python bench/gcp_heads.py [--sizes 200 2000 20000]

A synthetic chunk map of N heads in the in-memory twin of the GCS layer (the adapter's own Objects contract),
then from a cold GcsChunkStore the operations of tests/gcp/test_gcp_heads_at_scale.py, plus what the delete and
the query path's corpus list cost before this change (a listing of every head: `list_documents`, `stats`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from fakes.counting_objects import CountingObjects
from gcp.test_gcp_heads_at_scale import operations, populate
from regrag.adapters.gcp.chunk_store import GcsChunkStore


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[200, 2000, 20000])
    args = ap.parse_args()
    print("| heads | operation | reads | writes | deletes | lists | objects listed |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        started = time.perf_counter()
        objects = populate(n)
        built = time.perf_counter() - started
        with tempfile.TemporaryDirectory() as tmp:
            rows = operations(objects, Path(tmp))
        for label, action in (
            ("before: delete listed every head", "list_documents"),
            ("before: corpora = stats", "stats"),
        ):
            counted = CountingObjects(objects)
            getattr(GcsChunkStore(counted, dimension=4, model_id="m"), action)()
            rows[label] = dict(counted.calls)
        for name, c in rows.items():
            print(
                f"| {n:,} | {name} | {c.get('read', 0)} | {c.get('write', 0)} | {c.get('delete', 0)} | "
                f"{c.get('list', 0)} | {c.get('listed objects', 0):,} |",
                flush=True,
            )
        print(f"(built {n:,} heads in {built:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
