"""Everyday words and abbreviations a question uses for what the statutes call otherwise (偷电 for 窃电, 环评 for
环境影响评价), with the statutes' words for them: data/lay_terms.tsv, each entry with where it comes from.

A key term written in one of these words is found in a text that holds any of its statute words
(query/question.py `Keyword.found_in`), so a question asked in everyday words is not weighed as sharing nothing
with the article that answers it. The table does not widen retrieval itself: a lexical leg searching the statute's
words was measured and not kept (bench/README.md, "What moved the numbers").
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from regrag.data import table

DATA_FILE = "lay_terms.tsv"
SOURCES = ("abbreviation", "everyday")
SEPARATOR = "、"


@cache
def statute_words(text: str | None = None) -> Mapping[str, tuple[str, ...]]:
    """Each lay word of the data file (or of `text` in its format) → the statutes' words for it. A row without
    statute words, with a source of another kind or repeating a lay word is an error naming it, not an entry that
    silently never matches. Read-only: the cached table is shared by every question."""
    found: dict[str, tuple[str, ...]] = {}
    for row in table.rows(DATA_FILE, 3, text=text):
        lay, words, source = row.cells
        statute = tuple(w for w in words.split(SEPARATOR) if w)
        if not lay or not statute or lay in statute or not source.startswith(SOURCES) or lay in found:
            raise row.error("a lay word, its statute words (、-separated, not itself), abbreviation|everyday source")
        found[lay] = statute
    return MappingProxyType(found)


def lay_words_in(text: str) -> list[str]:
    """The lay words of the table that `text` holds, in the table's order."""
    return [lay for lay in statute_words() if lay in text]
