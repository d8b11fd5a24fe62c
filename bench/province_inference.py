"""The province of a document without a sidecar, inferred from its text, against the corpus manifest's province.

    python bench/province_inference.py                       # ../shared/corpus (444 documents)
    python bench/province_inference.py shared/sample_corpus  # the sample (36)

For every document of a folder with manifest.jsonl, the sidecar is ignored and the province read the way ingest
reads it without one (regrag.text.places.issuing_place over the title, the header's promulgation lines and a
signature block), then compared with the manifest's. Three rules side by side:
- before: the rule ingest used until 2026-11 (a title opening with a province's name, 中华人民共和国… and 国务院…
  national) and `national` for everything else, unflagged;
- now, title and issuer lines: what ingest does;
- now, title only: the same for a file that has lost its header (a plain text of the articles).
A wrong province is a document cited for the wrong jurisdiction; an unknown one is flagged in the ingest summary
and kept out of every province's results, which is why it is counted apart.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

from regrag.text.chunking import split_structure  # noqa: E402
from regrag.text.inference import PROVINCES, signature_lines  # noqa: E402
from regrag.text.normalize import normalize  # noqa: E402
from regrag.text.places import issuing_place  # noqa: E402

CORPUS = Path(os.environ.get("REGRAG_BENCH_CORPUS", ROOT.parent / "shared" / "corpus"))


def before(title: str) -> str:
    """The previous rule: a province name or a national prefix opening the title, else national (unflagged)."""
    if title.startswith(("中华人民共和国", "国务院")):
        return "national"
    return next((code for name, code in PROVINCES.items() if title.startswith(name)), "national")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, nargs="?", default=CORPUS)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in (args.folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    counts: dict[str, Counter[str]] = {"before": Counter(), "now": Counter(), "now, title only": Counter()}
    misses: list[str] = []
    for row in rows:
        text = (args.folder / row["file"]).read_text(encoding="utf-8")
        norm = normalize(text)
        structure = split_structure(norm, markdown=True)
        title = structure.title or ""
        truth = row["province"]
        guesses = {
            "before": before(title),
            "now": issuing_place(title, [*structure.header_lines, *signature_lines(norm.text)]).province,
            "now, title only": issuing_place(title, []).province,
        }
        for rule, guess in guesses.items():
            outcome = "right" if guess == truth else "unknown (flagged)" if guess is None else "wrong"
            counts[rule][outcome] += 1
            if truth != "national" and guess == "national":
                counts[rule]["local taken for national"] += 1
            if outcome != "right" and rule != "before":
                misses.append(f"{rule}: {row['doc_id']} 《{title}》 {truth} → {guess or 'unknown'}")
    print(f"{len(rows)} documents of {args.folder} ({sum(r['province'] != 'national' for r in rows)} local)\n")
    print("| rule | right | wrong | of which local taken for national | unknown (flagged) |")
    print("|---|---|---|---|---|")
    for rule, c in counts.items():
        print(f"| {rule} | {c['right']} | {c['wrong']} | {c['local taken for national']} | {c['unknown (flagged)']} |")
    print("\n" + "\n".join(misses))


if __name__ == "__main__":
    main()
