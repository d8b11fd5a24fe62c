"""How well a saved question's words pick the documents that could change its answer (ingest/alerts.could_change):
the dev and lay-dev questions answered over a full index, the share of each question's words in the title and
text of the documents its answer cites, against the share of the corpus that passes each threshold.

    python bench/watch_prefilter.py --data-dir /tmp/full [--vector-cache /work/vcache/vectors.sqlite]

A threshold keeps a cited document when the document holds at least that share of the question's words; the
corpus column is, per question, the share of all documents that pass (how many saved questions an ingested
document would wake), averaged over the questions.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from _common import ROOT
from regrag.config import Settings
from regrag.domain.models import Filters
from regrag.domain.requests import QueryRequest
from regrag.query.answer import answer
from regrag.text.terms import question_words
from regrag.wiring import build_services

THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--vector-cache", type=Path)
    ap.add_argument("--eval", type=Path, default=ROOT.parent / "shared" / "eval")
    args = ap.parse_args()
    overrides = {"data_dir": args.data_dir, "embedder": "e5"}
    if args.vector_cache:
        overrides["vector_cache"] = args.vector_cache
    services = build_services(Settings.from_env({"LOG_LEVEL": "WARNING"}, **overrides))
    texts = {}
    for meta in services.store.list_documents():
        found = services.store.get_document(meta.doc_id)
        texts[meta.doc_id] = f"{meta.title}\n{found[1] if found else ''}"
    questions = [
        json.loads(line)["question"]
        for name in ("dev.jsonl", "lay-dev.jsonl")
        for line in (args.eval / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]

    def share(words: list[str], text: str) -> float:
        return sum(w in text for w in words) / len(words) if words else 1.0

    cited: list[float] = []
    passing: dict[float, list[float]] = {t: [] for t in THRESHOLDS}
    for question in questions:
        done = answer(QueryRequest(question, Filters()), services.read_path)
        words = question_words(question)
        cited += [share(words, texts[d]) for d in {b.citation.doc_id for b in done.answer.bullets}]
        shares = [share(words, t) for t in texts.values()]
        for t in THRESHOLDS:
            passing[t].append(sum(s >= t for s in shares) / len(shares))
    print(f"{len(questions)} questions, {len(cited)} (question, cited document) pairs, {len(texts)} documents")
    print("| share of the question's words | cited documents kept | corpus passing (mean per question) |")
    print("|---|---|---|")
    for t in THRESHOLDS:
        kept = sum(s >= t for s in cited) / len(cited)
        print(f"| ≥ {t:.1f} | {kept:.1%} | {statistics.mean(passing[t]):.1%} |")
    print(f"lowest share of a cited document: {min(cited):.2f}")


if __name__ == "__main__":
    main()
