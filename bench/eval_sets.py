"""Both evaluation sets in one run, one Markdown row: what every ranking change reports.

    REGRAG_FORM_WEIGHT=0.5 python bench/eval_sets.py --data-dir /tmp/full --label "+ question forms 0.5"

Runs `regrag eval` (the full query path, rerank off unless RERANK is set) on the dev set and the lay dev set
(and any other question files given) with the settings in the environment, and prints nDCG@10, Recall@5,
Recall@10, MRR, unanswerable abstained and false abstention for each set.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from _common import DEFAULT_EVAL
from regrag.config import Settings
from regrag.evaluation import evaluate, load_questions
from regrag.wiring import build_services


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions", nargs="*", type=Path)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    env = {"RERANK": "false", **os.environ, "LOG_LEVEL": "ERROR"}
    services = build_services(Settings.from_env(env, data_dir=args.data_dir))
    files = args.questions or [DEFAULT_EVAL, DEFAULT_EVAL.with_name("lay-dev.jsonl")]
    cells = [args.label]
    for path in files:
        report = evaluate(services, load_questions(path))
        m = report["metrics"]
        cells.append(
            f"{path.stem}: {m['ndcg@10']:.3f} / {m['recall@5']:.3f} / {m['recall@10']:.3f} / {m['mrr']:.3f}, "
            f"abst. {m['abstention_rate_unanswerable']:.2f}, false {m['false_abstention_rate']:.3f}"
        )
    print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
