"""Query latency over the dev questions on an existing index, per stage, p50/p95.

    python bench/query_latency.py --data-dir DIR [--questions ../shared/eval/dev.jsonl] [--rounds 3]

The machine is noisy, so the same process also times a fixed unit of work (a 26,636 × 384 float32
matrix-vector product, the size of the corpus's dense scan) between queries and prints the whole query as a
ratio of it. The query-embedding cache is off (`--cached` turns it on: a replay then skips the model), and the
first round warms the model and is not counted.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from _common import DEFAULT_EVAL, peak_rss_mb, summary
from regrag.api import endpoints
from regrag.config import Settings
from regrag.wiring import build_services


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, default=Path(".regrag"))
    ap.add_argument("--questions", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--embedder", default="e5", choices=("e5", "hash"))
    ap.add_argument("--cached", action="store_true", help="keep the query-embedding cache on")
    args = ap.parse_args()

    settings = Settings.from_env(
        {"LOG_LEVEL": "WARNING"},
        data_dir=args.data_dir,
        embedder=args.embedder,
        **({} if args.cached else {"query_cache_size": 0}),
    )
    services = build_services(settings)
    rng = np.random.default_rng(0)
    unit_matrix = rng.standard_normal((26636, 384), dtype=np.float32)
    unit_vector = rng.standard_normal(384, dtype=np.float32)
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    stats = services.store.stats()
    print(f"index: {stats['documents']} documents, {stats['chunks']} chunks, {services.embedder.model_id}")

    totals: list[float] = []
    baseline: list[float] = []
    stages: dict[str, list[float]] = {}
    for round_no in range(args.rounds + 1):
        for q in questions:
            body = {"question": q["question"], "filters": q.get("filters") or {}}
            t = time.perf_counter()
            response = endpoints.query(services, body)
            total = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            unit_matrix @ unit_vector
            base = (time.perf_counter() - t) * 1000
            if round_no == 0:
                continue  # warm-up
            totals.append(total)
            baseline.append(base)
            for stage, ms in response["timings_ms"].items():
                stages.setdefault(stage, []).append(float(ms))
    print(f"whole query       {summary(totals)}")
    for stage, values in sorted(stages.items()):
        print(f"  {stage:<22}{summary(values)}")
    ratio = sorted(totals)[len(totals) // 2] / max(1e-6, sorted(baseline)[len(baseline) // 2])
    print(f"unit of work (26,636 x 384 matvec) {summary(baseline)}; whole query = {ratio:.1f}x the unit (p50)")
    print(f"peak RSS          {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
