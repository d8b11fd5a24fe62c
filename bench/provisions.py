"""How every article of a corpus reads into units (regrag.text.provisions): lead-ins, items, and the two shapes a
quote must never take alone: a lead-in with no items after it, an item with no lead-in before it.

    python bench/provisions.py [--corpus ../shared/corpus] [--examples 10]

A lead-in with no items is quoted with the paragraphs after it (query/quote.py); an item with no lead-in is quoted
alone, which `regrag eval` counts as a fragment. The examples name the document and the start of the unit.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from _common import DEFAULT_CORPUS, corpus_documents
from regrag.text.legal import ARTICLE_RE
from regrag.text.provisions import ITEM, LEAD_IN, read_provisions


def articles(text: str) -> list[str]:
    """Each article of a document: from its label to the next label or heading."""
    starts = [m.start("label") for m in ARTICLE_RE.finditer(text)]
    if not starts:
        return []
    out = []
    for a, b in zip(starts, [*starts[1:], len(text)], strict=True):
        heading = text.find("\n#", a, b)
        out.append(text[a : heading if heading > 0 else b])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--examples", type=int, default=10)
    args = parser.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    for path in corpus_documents(args.corpus):
        for article in articles(path.read_text(encoding="utf-8")):
            counts["articles"] += 1
            prov = read_provisions(article)
            for i, unit in enumerate(prov.units):
                counts[unit.kind] += 1
                if unit.kind == LEAD_IN and not prov.items_of(i):
                    counts["lead-ins without items"] += 1
                    examples["lead-ins without items"].append(f"{path.stem}: {prov.span(i)[:40]}")
                if unit.kind == ITEM and unit.lead_in is None:
                    counts["items without a lead-in"] += 1
                    examples["items without a lead-in"].append(f"{path.stem}: {prov.span(i)[:40]}")
    for name in ("articles", LEAD_IN, ITEM, "lead-ins without items", "items without a lead-in"):
        print(f"{name:24} {counts[name]}")
    for name, found in examples.items():
        print(f"\n{name} (first {args.examples}):")
        for line in found[: args.examples]:
            print("  " + line)


if __name__ == "__main__":
    main()
