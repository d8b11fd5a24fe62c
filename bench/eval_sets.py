"""Both evaluation sets in one run, one Markdown row: what every ranking change reports.

    REGRAG_FORM_WEIGHT=0.5 python bench/eval_sets.py --data-dir /tmp/full --label "+ question forms 0.5"

Runs `regrag eval` (the full query path, rerank off unless RERANK is set) on the dev set and the lay dev set
(and any other question files given) with the settings in the environment, and prints nDCG@10, Recall@5,
Recall@10, MRR, unanswerable abstained and false abstention for each set.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from _common import DEFAULT_EVAL
from regrag.config import Settings
from regrag.ops.evaluation import evaluate, load_questions
from regrag.services import Services
from regrag.wiring import build_services

DEFAULT_SETS = (DEFAULT_EVAL, DEFAULT_EVAL.with_name("lay-dev.jsonl"))


def services(data_dir: Path) -> Services:
    """The product's services on an index, rerank off unless RERANK is set, quiet logs."""
    env = {"RERANK": "false", **os.environ, "LOG_LEVEL": "ERROR"}
    return build_services(Settings.from_env(env, data_dir=data_dir))


def row(services: Services, label: str, files: Sequence[Path]) -> str:
    """One Markdown row: the label, then each file's nDCG@10 / R@5 / R@10 / MRR and abstention."""
    cells = [label]
    for path in files:
        m = evaluate(services, load_questions(path))["metrics"]
        cells.append(
            f"{path.stem}: {m['ndcg@10']:.3f} / {m['recall@5']:.3f} / {m['recall@10']:.3f} / {m['mrr']:.3f}, "
            f"abst. {m['abstention_rate_unanswerable']:.2f}, false {m['false_abstention_rate']:.3f}"
        )
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions", nargs="*", type=Path)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    print(row(services(args.data_dir), args.label, args.questions or DEFAULT_SETS))


if __name__ == "__main__":
    main()
