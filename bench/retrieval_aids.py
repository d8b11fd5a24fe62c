"""Fill the questions-answered index of an existing index, for measuring the aid with `regrag eval`.

    python bench/retrieval_aids.py subset --questions ../shared/eval/dev.jsonl --top 30 --random-fraction 0.2 \\
        --out subset.json
    python bench/retrieval_aids.py index --doc-ids subset.json      # or --all

Both read REGRAG_* from the environment like `regrag` does (REGRAG_DATA_DIR, REGRAG_VECTOR_CACHE, and for
`index` REGRAG_QUESTIONS_INDEX=true plus REGRAG_GENERATOR). Run them on a COPY of an index: `index` writes
question vectors into it.

`subset` picks the documents to index when embedding questions for the whole corpus is too slow: those in the
top `--top` candidates of every question (the full query path, flags as in the environment), plus a seeded random
`--random-fraction` of all documents (distractors from outside the top). `index` runs the same
`QuestionsIndexer.index_chunks` the embed stage runs, on the chunks already in the store (no re-ingest, so chunk
vectors and everything else stay as they are).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from _common import DEFAULT_EVAL
from regrag.api.routes import call
from regrag.config import Settings
from regrag.ops.evaluation import load_questions
from regrag.wiring import build_services


def cmd_subset(args: argparse.Namespace) -> int:
    services = build_services(Settings.from_env(os.environ))
    top: set[str] = set()
    for q in load_questions(args.questions):
        status, body = call(
            services.query, {"question": q["question"], "filters": q.get("filters") or {}, "top_k": args.top}
        )
        if status == 200:
            top.update(c["doc_id"] for c in body["candidates"])
    every = sorted(m.doc_id for m in services.store.list_documents())
    sampled = set(random.Random(args.seed).sample(every, round(args.random_fraction * len(every))))
    chosen = sorted(top | sampled)
    chunks = sum(len(services.store.document_chunks(d)) for d in chosen)
    summary = {
        "questions": str(args.questions),
        "top": args.top,
        "random_fraction": args.random_fraction,
        "seed": args.seed,
        "documents_total": len(every),
        "documents_in_top": len(top),
        "documents_sampled": len(sampled),
        "documents": len(chosen),
        "chunks": chunks,
        "doc_ids": chosen,
    }
    Path(args.out).write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k != "doc_ids"}, ensure_ascii=False))
    services.close()
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    services = build_services(Settings.from_env(os.environ))
    indexer = services.questions_indexer
    if indexer is None:
        print("set REGRAG_QUESTIONS_INDEX=true (and REGRAG_GENERATOR)", file=sys.stderr)
        return 2
    if args.all:
        doc_ids = sorted(m.doc_id for m in services.store.list_documents())
    else:
        doc_ids = json.loads(Path(args.doc_ids).read_text(encoding="utf-8"))["doc_ids"]
    started = time.perf_counter()
    totals = {"documents": 0, "chunks": 0, "questions": 0, "failed": 0}
    for n, doc_id in enumerate(doc_ids, 1):
        report = indexer.index_chunks(services.store.document_chunks(doc_id))
        totals["documents"] += 1
        totals["chunks"] += report.indexed
        totals["questions"] += report.questions
        totals["failed"] += sum(report.failed.values())
        elapsed = time.perf_counter() - started
        print(
            f"[{n}/{len(doc_ids)}] {doc_id}: {report.questions} questions; "
            f"{totals['questions'] / elapsed:.1f} questions/s overall",
            file=sys.stderr,
            flush=True,
        )
    totals["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(totals))
    services.close()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    subset = sub.add_parser("subset")
    subset.add_argument("--questions", type=Path, default=DEFAULT_EVAL)
    subset.add_argument("--top", type=int, default=30)
    subset.add_argument("--random-fraction", type=float, default=0.2)
    subset.add_argument("--seed", type=int, default=0)
    subset.add_argument("--out", required=True)
    index = sub.add_parser("index")
    which = index.add_mutually_exclusive_group(required=True)
    which.add_argument("--doc-ids", help="a `subset` output file")
    which.add_argument("--all", action="store_true")
    args = parser.parse_args()
    return cmd_subset(args) if args.command == "subset" else cmd_index(args)


if __name__ == "__main__":
    sys.exit(main())
