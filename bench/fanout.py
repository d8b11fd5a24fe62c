"""Fan-out latency: the same questions over 1, 3 and 5 corpora, as ratios of the one-corpus run.

    python bench/fanout.py --data-dir DIR [--questions ../shared/eval/dev.jsonl] [--rounds 3]

DIR must hold an index with several corpora. `--build` makes one from the corpus with one corpus per province
(national, gd, sd, sh, bj, zj, ha, cq), reusing vectors from `--vector-cache` (embedding the whole corpus
from scratch takes about 30 minutes). Each round asks every question once per corpus count, interleaved, so
machine noise hits all three alike; the first round is a warm-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _common import DEFAULT_CORPUS, DEFAULT_EVAL, pct
from regrag.api import endpoints
from regrag.config import Settings
from regrag.entrypoints import handlers
from regrag.entrypoints.cli.ingest import discover
from regrag.ingest.ingest import SIDECAR_SUFFIX
from regrag.wiring import build_services

PROVINCE_ORDER = ("national", "sd", "gd", "sh", "zj", "bj", "ha", "cq")


def build(services, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    for up in discover([str(corpus)], None):
        sidecar = json.loads(up.sidecar) if up.sidecar else {}
        sidecar["corpus"] = sidecar.get("province", "national")
        services.blobs.write(up.name + SIDECAR_SUFFIX, json.dumps(sidecar, ensure_ascii=False).encode())
        services.blobs.write(up.name, up.path.read_bytes())
        handlers.ingest_name(services, up.name)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--questions", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--vector-cache", type=Path)
    ap.add_argument(
        "--cached",
        action="store_true",
        help="keep the query-embedding cache on: times retrieval alone (the embedding is shared)",
    )
    args = ap.parse_args()

    overrides: dict[str, object] = {"data_dir": args.data_dir, "rerank": False}
    if not args.cached:
        overrides["query_cache_size"] = 0
    if args.vector_cache:
        overrides["vector_cache"] = args.vector_cache
    services = build_services(Settings.from_env({"LOG_LEVEL": "WARNING"}, **overrides))
    if args.build:
        build(services, args.corpus)
    names = [c["corpus"] for c in endpoints.corpora(services)["corpora"]]
    ordered = [p for p in PROVINCE_ORDER if p in names] + [n for n in names if n not in PROVINCE_ORDER]
    if len(ordered) < 5:
        raise SystemExit(f"need at least 5 corpora, the index has {ordered}")
    sizes = {n: ordered[:n] for n in (1, 3, 5)}
    print(
        f"index: {services.store.stats()['chunks']} chunks in {len(names)} corpora; 1 → {sizes[1]}, 3 → {sizes[3]}, "
        f"5 → {sizes[5]}"
    )
    questions = [json.loads(x)["question"] for x in args.questions.read_text(encoding="utf-8").splitlines() if x]
    timings: dict[int, list[float]] = {n: [] for n in sizes}
    for round_no in range(args.rounds + 1):
        for question in questions:
            for n, corpora in sizes.items():
                t = time.perf_counter()
                body = endpoints.query(services, {"question": question, "corpora": corpora})
                elapsed = (time.perf_counter() - t) * 1000
                assert all(s["status"] == "ok" for s in body["corpus_stats"]), body["corpus_stats"]
                if round_no:
                    timings[n].append(elapsed)
    base = statistics.median(timings[1])
    print("| corpora | p50 ms | p95 ms | p50 / one corpus |")
    print("|---|---|---|---|")
    for n, values in timings.items():
        p50 = statistics.median(values)
        print(f"| {n} | {p50:.1f} | {pct(values, 95):.1f} | {p50 / base:.2f} |")


if __name__ == "__main__":
    main()
