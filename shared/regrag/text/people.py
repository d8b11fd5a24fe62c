"""Everyday words for the people in the asker's own story (邻居, 老板, 我家孩子): data/people_words.tsv, each entry with
where it comes from. They say whose case a question tells, in words no statute uses (the statutes say 他人, 用户,
用人单位, 未成年人), so they are not key terms (query/question.py `_keywords`)."""

from __future__ import annotations

from functools import cache

from regrag.data import table

DATA_FILE = "people_words.tsv"
SOURCES = ("thesaurus: ", "possessive of ")


@cache
def people_words(text: str | None = None) -> frozenset[str]:
    """The words of the data file (or of `text` in its format). A row without a source of a known kind, or one
    repeating a word, is an error naming it, not an entry that silently never matches."""
    found: set[str] = set()
    for row in table.rows(DATA_FILE, 2, text=text):
        word, source = row.cells
        if not word or not source.startswith(SOURCES) or word in found:
            raise row.error("a word and its source (thesaurus: <kind> | possessive of 家), once each")
        found.add(word)
    return frozenset(found)
