"""What 10,000 watches cost an ingest: the same documents ingested into copies of one index, without watches and
with them, in the same process, and the ratio of the two.

    python bench/watches.py [--corpus ../shared/corpus] [--watches 10000] [--questions 1000] [--others 20]
                            [--base /tmp/watch-base] [--rounds 2]

The index holds the corpus except the documents ingested in the measured runs: the newer version of each of the
corpus's version chains (so watches on the older ones record alerts, as they would) and `--others` documents
picked at random (seed 7). The watches are `--watches` in all: `--questions` saved questions (the dev and
lay-dev questions, each with several filter sets), the rest document and article watches on random documents
and articles, the older versions of the chains among them. Each run starts from a copy of the index, makes its
watches through ops.watches.add_watch (timed apart) and ingests the documents through the real path (bucket →
ingest → embed → upsert); the upsert stage's alerts.record_changes is timed on its own. The hashing embedder
keeps the runs to minutes (the cost measured here is the watches', not the model's).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import DEFAULT_CORPUS, ROOT, peak_rss_mb
from regrag.config import Settings
from regrag.entrypoints import handlers
from regrag.entrypoints.cli.ingest import discover
from regrag.ingest import alerts
from regrag.ingest.ingest import SIDECAR_SUFFIX
from regrag.inputs.parse import WatchRequest, parse_filters
from regrag.ops import watches as watch_ops
from regrag.views.version_diff import articles_of
from regrag.wiring import build_services

EVAL = ROOT.parent / "shared" / "eval"
FILTER_SETS: list[dict[str, Any]] = [
    {},
    {"province": ["national"]},
    {"province": ["gd", "national"]},
    {"province": ["sd", "national"]},
    {"province": ["js", "national"]},
    {"doc_class": ["grid"]},
    {"doc_class": ["permit"]},
    {"regulation_level": ["national_law"]},
    {"asset": ["solar"]},
    {"province": ["sh", "national"], "doc_class": ["grid"]},
]


def settings(data: Path, max_reasks: int = Settings.watch_max_reasks) -> Settings:
    return Settings.from_env({"LOG_LEVEL": "WARNING"}, data_dir=data, embedder="hash", watch_max_reasks=max_reasks)


def ingest(services: Any, uploads: list[Any], *, batch: bool = True) -> dict[str, Any]:
    """Each upload through bucket → ingest → embed → upsert, then what `regrag ingest` does after its writes
    (prepare the search snapshot, ask the saved questions the batch noted). `batch=False`: no batch, as event-driven
    deployments run (each upsert asks its saved questions itself)."""
    times = []
    context = services.question_backlog.batch() if batch and services.question_backlog else contextlib.nullcontext()
    started = time.perf_counter()
    with context:
        for up in uploads:
            begun = time.perf_counter()
            if up.sidecar:
                services.blobs.write(up.name + SIDECAR_SUFFIX, up.sidecar)
            services.blobs.write(up.name, up.path.read_bytes())
            handlers.ingest_name(services, up.name)  # a rejected file (gd-0064: empty body) is recorded, not raised
            times.append(time.perf_counter() - begun)
    if services.prepare_search is not None:
        services.prepare_search()
    after = time.perf_counter()
    watch_ops.ask_backlog(services)
    return {"total_s": time.perf_counter() - started, "per_doc": times, "after_s": time.perf_counter() - after}


def make_watches(services: Any, total: int, questions: int, older: list[str], rng: random.Random) -> dict[str, int]:
    """`questions` saved questions and `total - questions` document and article watches (the older versions of
    the chains first), through ops.watches.add_watch; counts by kind."""
    texts = [
        json.loads(line)["question"]
        for name in ("dev.jsonl", "lay-dev.jsonl")
        for line in (EVAL / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    made = {"document": 0, "article": 0, "question": 0}
    pairs = [(q, f) for f in FILTER_SETS for q in texts]
    rng.shuffle(pairs)
    for n in range(questions):
        question, filters = pairs[n % len(pairs)]
        owner = f"user-{n // len(pairs)}@example.com"
        request = WatchRequest(question=question, filters=parse_filters(filters), owner=owner)
        made["question"] += watch_ops.add_watch(services, request)["created"]
    docs = [m.doc_id for m in services.store.list_documents()]
    labels: dict[str, list[str]] = {}
    for n in range(total - questions):
        doc_id = older[n] if n < len(older) else rng.choice(docs)
        if n % 3 == 0:
            request = WatchRequest(doc_id=doc_id, owner=f"user-{n}@example.com")
        else:
            if doc_id not in labels:
                labels[doc_id] = [a.label for a in articles_of(services.store.document_chunks(doc_id))] or [""]
            label = rng.choice(labels[doc_id])
            request = WatchRequest(doc_id=doc_id, article=label or None, owner=f"user-{n}@example.com")
        body = watch_ops.add_watch(services, request)
        made[body["watch"]["kind"]] += body["created"]
    return made


class Timed:
    """alerts.record_changes with its time kept (upsert.py calls it through the module, so this replaces it)."""

    def __init__(self) -> None:
        self.inner = alerts.record_changes
        self.seconds: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds.append(time.perf_counter() - started)


def run(
    base: Path, uploads: list[Any], total: int, questions: int, older: list[str], batch: bool, max_reasks: int
) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="regrag-watch-run-"))
    shutil.rmtree(data)
    shutil.copytree(base, data)
    services = build_services(settings(data, max_reasks))
    try:
        started = time.perf_counter()
        made = make_watches(services, total, questions, older, random.Random(7)) if total else {}
        setup = time.perf_counter() - started
        timed = Timed()
        alerts.record_changes = timed  # type: ignore[assignment]
        try:
            done = ingest(services, uploads, batch=batch)
        finally:
            alerts.record_changes = timed.inner  # type: ignore[assignment]
        recorded = services.watches.list_alerts(limit=100_000) if services.watches else []
        kinds: dict[str, int] = {}
        for a in recorded:
            kinds[a.kind] = kinds.get(a.kind, 0) + 1
        return {
            "watches": made,
            "setup_s": setup,
            "ingest_s": done["total_s"],
            "per_doc_ms": [t * 1000 for t in done["per_doc"]],
            "alerts_s": sum(timed.seconds) + (done["after_s"] if total else 0.0),
            "alerts": kinds,
        }
    finally:
        services.close()
        shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--watches", type=int, default=10_000)
    ap.add_argument("--questions", type=int, nargs="+", default=[1_000])
    ap.add_argument("--others", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-reasks", type=int, nargs="+", default=[20], help="REGRAG_WATCH_MAX_REASKS of the runs")
    ap.add_argument("--per-document", action="store_true", help="also without a batch (as event-driven stages run)")
    ap.add_argument("--base", type=Path, help="the base index (built there when missing)")
    args = ap.parse_args()

    uploads = list(discover([str(args.corpus)], None))
    records = [
        json.loads(line)
        for line in (args.corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    newer = [r["doc_id"] for r in records if r.get("supersedes")]
    older = [r["supersedes"] for r in records if r.get("supersedes")]
    rng = random.Random(7)
    rest = sorted({r["doc_id"] for r in records} - set(newer) - set(older))
    held = set(newer) | set(rng.sample(rest, args.others))
    measured = [u for u in uploads if u.doc_id in held]
    base = args.base or Path(tempfile.mkdtemp(prefix="regrag-watch-base-"))
    if not (base / "index.sqlite").exists():
        started = time.perf_counter()
        services = build_services(settings(base))
        ingest(services, [u for u in uploads if u.doc_id not in held])
        print(f"base index: {services.store.stats()['documents']} documents in {time.perf_counter() - started:.0f} s")
        services.close()
    print(f"measured: {len(measured)} documents ingested ({len(newer)} newer versions of the corpus's chains)")

    results: dict[str, list[dict[str, Any]]] = {}
    default = Settings.watch_max_reasks
    configs = [("no watches", 0, 0, True, default)]
    for q in args.questions:
        for m in args.max_reasks:
            label = f"{args.watches:,} watches ({q:,} questions), regrag ingest, {m} questions/document"
            configs.append((label, args.watches, q, True, m))
        if args.per_document:
            label = f"{args.watches:,} watches ({q:,} questions), per document, {default} questions/document"
            configs.append((label, args.watches, q, False, default))
    for _ in range(args.rounds):
        for name, total, questions, batch, max_reasks in configs:
            results.setdefault(name, []).append(run(base, measured, total, questions, older, batch, max_reasks))
            last = results[name][-1]
            ingest_s, alerts_s, setup_s = last["ingest_s"], last["alerts_s"], last["setup_s"]
            print(f"  {name}: ingest {ingest_s:.2f} s, alerts {alerts_s:.2f} s, setup {setup_s:.0f} s")

    baseline = statistics.mean(r["ingest_s"] for r in results["no watches"])
    print()
    print(
        "| run | watches made | ingest of the documents | per document p50 / max | ratio | in record_changes "
        "| alerts recorded |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, runs in results.items():
        ingest_s = statistics.mean(r["ingest_s"] for r in runs)
        per_doc = [t for r in runs for t in r["per_doc_ms"]]
        made = runs[0]["watches"]
        made_text = ", ".join(f"{k} {v:,}" for k, v in made.items()) if made else "—"
        print(
            f"| {name} | {made_text} (made in {statistics.mean(r['setup_s'] for r in runs):.0f} s) "
            f"| {ingest_s:.2f} s (runs: {', '.join(format(r['ingest_s'], '.2f') for r in runs)}) "
            f"| {statistics.median(per_doc):.0f} / {max(per_doc):.0f} ms | {ingest_s / baseline:.2f}× "
            f"| {statistics.mean(r['alerts_s'] for r in runs):.2f} s | {runs[0]['alerts'] or '—'} |"
        )
    print(f"\npeak RSS {peak_rss_mb():.0f} MB; base index {base}")


if __name__ == "__main__":
    main()
