"""How often the corpus writes a figure in each unit of shared/regrag/data/units.tsv: the table's corpus columns.

    python bench/corpus_units.py            # print unit, after Arabic digits, after Chinese numerals
    python bench/corpus_units.py --write    # and rewrite the corpus_arabic / corpus_chinese columns of units.tsv

A figure is what regrag.text.figures.FIGURE finds in a regulation's text (the product's own pattern), counted under
the unit it ends in: 5万元 under 万元, 五公顷 under 公顷. 百分之二十 is counted apart (it has no unit row). After
Chinese numerals only the units whose `chinese` column says yes are read, so the others count 0 there.
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path

from _common import DEFAULT_CORPUS, ROOT, corpus_documents
from regrag.text.figures import FIGURE
from regrag.text.numerals import ARABIC, FIGURE_DIGITS
from regrag.text.units import TEXT, units

TABLE = ROOT / "shared" / "regrag" / "data" / "units.tsv"
_ARABIC_LEAD = re.compile(rf"[{ARABIC}]+(?:[.．][{ARABIC}]+)?\s*")


def count(corpus: Path) -> tuple[collections.Counter[str], collections.Counter[str], int]:
    """(figures after Arabic digits by unit, after Chinese numerals by unit, 百分之 figures) in the corpus."""
    arabic: collections.Counter[str] = collections.Counter()
    chinese: collections.Counter[str] = collections.Counter()
    percent = 0
    for path in corpus_documents(corpus):
        for m in FIGURE.finditer(path.read_text(encoding="utf-8")):
            figure = m.group(0)
            if figure.startswith("百分之"):
                percent += 1
            elif lead := _ARABIC_LEAD.match(figure):
                arabic[figure[lead.end() :]] += 1
            else:
                chinese[_chinese_unit(figure)] += 1
    return arabic, chinese, percent


def _chinese_unit(figure: str) -> str:
    """五公顷 → 公顷, 五千伏 → 千伏, 五千克 → 克: the unit FIGURE read, the longest numeral before a unit that is read
    after Chinese numerals (the regex's greedy numeral, backtracked)."""
    names = {u.name for u in units() if u.reads(TEXT, chinese=True)}
    numeral = len(figure) - len(figure.lstrip(f"{FIGURE_DIGITS}点"))
    return next(figure[i:] for i in range(numeral, 0, -1) if figure[i:] in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--write", action="store_true", help="rewrite the corpus columns of data/units.tsv")
    args = parser.parse_args()
    arabic, chinese, percent = count(args.corpus)
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    out = []
    header_seen = False
    for line in lines:
        if line.startswith("#") or not line.strip():
            out.append(line)
            continue
        if not header_seen:
            header_seen = True
            out.append(line)
            continue
        row = line.split("\t")
        row[-2], row[-1] = str(arabic[row[0]]), str(chinese[row[0]])
        print(f"{row[0]}\t{row[-2]}\t{row[-1]}")
        out.append("\t".join(row))
    unknown = sorted((set(arabic) | set(chinese)) - {line.split("\t")[0] for line in out if "\t" in line})
    print(f"百分之…\t-\t{percent}")
    if unknown:
        print("units found but not in the table:", unknown)
    if args.write:
        TABLE.write_text("\n".join(out) + "\n", encoding="utf-8")
        print("wrote", TABLE)


if __name__ == "__main__":
    main()
