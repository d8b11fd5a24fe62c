"""The citation check's caution on figures a memo's own words give an article (evidence.unstated_figures): how
many altered figures it flags, and how many right ones it flags wrongly. Prints figures (bench/README.md).

    python bench/check_figures.py --data-dir /work/full3 [--memos bench/questions/paraphrase-memos] [-v]

The memos (memo-NN.md, each with memo-NN.json: {date, citations: [{text, doc_id, article, sentence, altered,
figures_attributed, wrong_figures, note}]}) paraphrase the article each sentence cites, without quotation marks,
with a figure altered in about half of them. A citation counts as flagged when its finding has unstated_figures;
it is matched to its sentence by where the reference starts. Needs an index of the corpus the memos cite (the
whole corpus for paraphrase-memos: bench/ingest_corpus.py).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from _common import ROOT
from regrag.check.run import check_text
from regrag.config import Settings
from regrag.wiring import build_services


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True, help="REGRAG_DATA_DIR of an index holding the cited documents")
    parser.add_argument("--memos", type=Path, default=ROOT / "bench" / "questions" / "paraphrase-memos")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each citation flagged wrongly or missed")
    args = parser.parse_args()
    services = build_services(Settings.from_env({"REGRAG_DATA_DIR": args.data_dir, "LOG_LEVEL": "ERROR"}))
    counts: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for memo in sorted(args.memos.glob("memo-*.md")):
        text = memo.read_text(encoding="utf-8")
        keys = json.loads(memo.with_suffix(".json").read_text(encoding="utf-8"))
        report = check_text(text, services.store, as_of=keys["date"])
        for cited in keys["citations"]:
            at = text.find(cited["sentence"])
            found = [c for c in report["citations"] if at <= c["start"] < at + len(cited["sentence"])]
            if at < 0 or not found:
                counts["not located"] += 1
                continue
            finding = found[0]
            statuses[finding["status"]] += 1
            flagged = "unstated_figures" in finding["evidence"]
            kind = "altered" if cited["altered"] else "right"
            counts[f"{kind} flagged" if flagged else f"{kind} not flagged"] += 1
            if args.verbose and flagged != cited["altered"]:
                said = finding["evidence"].get("unstated_figures")
                print(f"  {'missed' if cited['altered'] else 'false alarm'}: {cited['sentence']} | {said}")
    altered = counts["altered flagged"] + counts["altered not flagged"]
    right = counts["right flagged"] + counts["right not flagged"]
    print(f"memos: {args.memos}")
    print(f"altered figures flagged: {counts['altered flagged']} of {altered}")
    print(f"right figures flagged (false alarms): {counts['right flagged']} of {right}")
    print(f"not located: {counts['not located']}; statuses: {dict(statuses)}")
    services.close()


if __name__ == "__main__":
    main()
