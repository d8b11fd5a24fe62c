"""Where the question forms' wordings (shared/regrag/data/question_forms.tsv) stand in a corpus: each row counted
again, and every row whose source no longer holds flagged.

    python bench/form_words.py [--corpus ../shared/corpus]

A "corpus N/M" row says the statute uses the wording: it is counted in the corpus's documents (N of M) and flagged
when the count differs or is 0. An "everyday" row says the statute does not: flagged when a document uses it.
"question" and "figure" rows are how a question asks and what units.tsv builds; they are listed, not counted.
Exit 1 when a row is flagged.
"""

from __future__ import annotations

import re
import sys

from _common import corpus_texts_from_args
from regrag.query.forms import TIME_FIGURE, wordings

_COUNT = re.compile(r"corpus (\d+)/(\d+)")


def main() -> int:
    docs = corpus_texts_from_args(__doc__.splitlines()[0])
    flagged = 0
    for row in wordings():
        if row.pattern == TIME_FIGURE or row.source.split()[0] in ("question", "figure"):
            print(f"{row.form:12} {row.side:9} {row.pattern:24} {row.source}")
            continue
        pattern = re.compile(row.pattern)
        found = sum(1 for d in docs if pattern.search(d))
        stated = _COUNT.match(row.source)
        wrong = (stated is not None and (found == 0 or (int(stated[1]), int(stated[2])) != (found, len(docs)))) or (
            row.source == "everyday" and found > 0
        )
        flagged += wrong
        mark = "  <- flagged" if wrong else ""
        print(f"{row.form:12} {row.side:9} {row.pattern:24} {row.source:16} found {found}/{len(docs)}{mark}")
    print(f"{flagged} row(s) flagged")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
