"""Everyday words for the people in the asker's own story (邻居, 老板, 孩子): data/people_words.tsv, each entry with
where it comes from. They say whose case a question tells, in words no statute uses (the statutes say 他人, 用户,
用人单位, 未成年人), so they are not key terms (query/question.py `_keywords`)."""

from __future__ import annotations

import re
from functools import cache

from regrag.data import table

DATA_FILE = "people_words.tsv"
# the word's entry in 同义词词林扩展版, class A (people), then how many documents of the development corpus use it
SOURCE = re.compile(r"cilin A[a-n]\d{2}[A-Z]\d{2}; corpus \d+/\d+")


@cache
def people_words(text: str | None = None) -> frozenset[str]:
    """The words of the data file (or of `text` in its format). A row without its thesaurus entry and corpus count,
    or one repeating a word, is an error naming it, not an entry that silently never matches."""
    found: set[str] = set()
    for row in table.rows(DATA_FILE, 2, text=text):
        word, source = row.cells
        if not word or not SOURCE.fullmatch(source) or word in found:
            raise row.error("a word and its source (cilin <code>; corpus N/M), once each")
        found.add(word)
    return frozenset(found)
