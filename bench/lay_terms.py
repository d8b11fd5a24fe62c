"""Where the lay terms (shared/regrag/data/lay_terms.tsv) and the people words (people_words.tsv) stand in a corpus:
each row's words counted again, and every row whose counts no longer hold flagged.

    python bench/lay_terms.py [--corpus ../shared/corpus]

Each row's source ends with how many documents use the lay word and each statute word (环评 1/444; 环境影响评价
65/444). A row is flagged when a count differs, or when a statute word is in no document: an entry whose statute
word the corpus never uses bridges to nothing. A people word's source ends with how many documents use it (corpus
0/444); it is flagged when that differs, or when more than one document uses it: a word the statutes use is one an
article can hold, so it must stay a key term. Exit 1 when a row is flagged.
"""

from __future__ import annotations

import re
import sys

from _common import corpus_texts_from_args
from regrag.data import table
from regrag.text import people
from regrag.text.lay_terms import DATA_FILE, statute_words

_COUNT = re.compile(r"(\S+) (\d+)/(\d+)")


def main() -> int:
    docs = corpus_texts_from_args(__doc__.splitlines()[0])
    flagged = 0
    for row in table.rows(DATA_FILE, 3):
        lay, _, source = row.cells
        stated = {m[1]: (int(m[2]), int(m[3])) for m in _COUNT.finditer(source)}
        found = {w: sum(w in d for d in docs) for w in (lay, *statute_words()[lay])}
        wrong = any(stated.get(w) != (n, len(docs)) for w, n in found.items()) or any(
            n == 0 for w, n in found.items() if w != lay
        )
        flagged += wrong
        counts = ", ".join(f"{w} {n}/{len(docs)}" for w, n in found.items())
        print(f"{lay:8} {counts}{'  <- flagged' if wrong else ''}")
    for row in table.rows(people.DATA_FILE, 2):
        word, source = row.cells
        stated_count = _COUNT.search(source)
        n = sum(word in d for d in docs)
        wrong = stated_count is None or (int(stated_count[2]), int(stated_count[3])) != (n, len(docs)) or n > 1
        flagged += wrong
        print(f"{word:8} {n}/{len(docs)}{'  <- flagged' if wrong else ''}")
    print(f"{flagged} row(s) flagged")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
