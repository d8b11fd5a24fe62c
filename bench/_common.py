"""Helpers shared by the benchmarks (not part of the product)."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

DEFAULT_CORPUS = Path(os.environ.get("REGRAG_BENCH_CORPUS", ROOT.parent / "shared" / "corpus"))
DEFAULT_EVAL = Path(os.environ.get("REGRAG_BENCH_EVAL", ROOT.parent / "shared" / "eval" / "dev.jsonl"))


def corpus_documents(corpus: Path) -> list[Path]:
    """The Markdown documents of a corpus folder (its docs/*.md), in name order; a folder without any is an error
    that says so, not a table of zeros."""
    found = sorted((corpus / "docs").glob("*.md"))
    if not found:
        sys.exit(
            f"no documents in {corpus / 'docs'} (a corpus folder holds docs/*.md; --corpus or REGRAG_BENCH_CORPUS)"
        )
    return found


def corpus_texts_from_args(description: str) -> list[str]:
    """The texts of the corpus named by a script's only option, --corpus (the development corpus by default): what
    the scripts that recount a data file's words in a corpus read."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    return [p.read_text(encoding="utf-8") for p in corpus_documents(args.corpus)]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def summary(values: list[float]) -> str:
    return f"p50 {statistics.median(values):.1f} ms, p95 {pct(values, 95):.1f} ms, n={len(values)}"
