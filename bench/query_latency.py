"""Query latency over the dev questions on an existing index, per stage, p50/p95.

    python bench/query_latency.py --data-dir DIR [--questions ../shared/eval/dev.jsonl] [--rounds 3]

The machine is noisy, so the same process also times a baseline (the lexical leg alone) and prints the
whole query as a ratio of it. The first round warms caches and the model and is not counted.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _common import DEFAULT_EVAL, peak_rss_mb, summary

from regrag.config import Settings
from regrag.pipeline.filters import parse_filters
from regrag.pipeline.lexical import query_tokens
from regrag.pipeline.retrieve import effective_filters
from regrag.wiring import build_app


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, default=Path(".regrag"))
    ap.add_argument("--questions", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--embedder", default="e5", choices=("e5", "hash"))
    args = ap.parse_args()

    app = build_app(Settings.from_env({"LOG_LEVEL": "WARNING"}, data_dir=args.data_dir, embedder=args.embedder))
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    stats = app.s.store.stats()
    print(f"index: {stats['documents']} documents, {stats['chunks']} chunks, {app.s.embedder.model_id}")

    totals: list[float] = []
    baseline: list[float] = []
    stages: dict[str, list[float]] = {}
    for round_no in range(args.rounds + 1):
        for q in questions:
            body = {"question": q["question"], "filters": q.get("filters") or {}}
            t = time.perf_counter()
            response = app.query(body)
            total = (time.perf_counter() - t) * 1000
            filters = effective_filters(parse_filters(body["filters"]))
            t = time.perf_counter()
            app.s.lexical.search(query_tokens(q["question"]), filters, 50)
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
    print(f"baseline (lexical leg alone) {summary(baseline)}; whole query = {ratio:.1f}x baseline (p50)")
    print(f"peak RSS          {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
