"""What kind of provision a question asks for, read from how it asks: a vocabulary bridge that does not depend
on the question's nouns.

A lay question rarely shares its nouns with the statute (偷电 / 窃电, 老板不给钱 / 拖欠劳动报酬), but the form of
the question says which kind of article answers it: 怎么处罚 / 判几年 asks for a penalty provision (罚款, 有期徒刑,
吊销 …), 需要什么手续 for a procedure (申请, 审批, 备案 …), 什么是 for a definition (本法所称……是指), 赔多少 for
liability, 多久 / 几天 for a time limit. Each form is matched to the article's own wording (and the 法律责任 chapter
in its heading path), and candidates of the asked kind move up as one more ranking fused by RRF (query/score.py),
like the key-term coverage ranking: a preference, never a filter, and no score is compared.

The wordings live in data/question_forms.tsv, each with where it comes from (the corpus's own word, a question's
interrogative, an everyday word for a statute's term).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from regrag.data import table
from regrag.text.numerals import ARABIC, FIGURE_DIGITS
from regrag.text.units import quantity_units


@dataclass(frozen=True)
class Form:
    name: str
    asked: re.Pattern[str]  # in the question
    answered: re.Pattern[str]  # in the article text (heading path included)


DATA_FILE = "question_forms.tsv"
TIME_FIGURE = "{time_figure}"  # in the data file: a number in a unit of time
PENALTY = "penalty"  # the form of a question asking what an act is punished with (怎么处罚 / 罚多少)
# what a source column may say (the file's header explains each)
SOURCES = ("corpus", "question", "everyday", "figure")


@dataclass(frozen=True)
class Wording:
    """One row of question_forms.tsv."""

    form: str
    side: str  # asked | answered
    pattern: str
    source: str


def wordings(text: str | None = None) -> list[Wording]:
    """The rows of the data file (or of `text` in its format), in order, each checked: a bad row is an error
    naming it, not a form that silently never matches."""
    rows = []
    for row in table.rows(DATA_FILE, 4, text=text):
        cells = row.cells
        if cells[1] not in ("asked", "answered") or not cells[3].startswith(SOURCES):
            raise row.error("form, asked|answered, pattern, source")
        if cells[2] != TIME_FIGURE:
            try:
                re.compile(cells[2])
            except re.error as exc:
                raise row.error(f"a regular expression ({exc})") from exc
        rows.append(Wording(*cells))
    return rows


def _pattern(rows: list[Wording], side: str) -> re.Pattern[str]:
    time_figure = rf"(?:[{ARABIC}]+|[{FIGURE_DIGITS}]+)\s*(?:{quantity_units('time')})"
    return re.compile("|".join(time_figure if r.pattern == TIME_FIGURE else r.pattern for r in rows if r.side == side))


@cache
def forms() -> tuple[Form, ...]:
    """The forms in the file's order, each with the wordings that ask for it and those that answer it."""
    rows = wordings()
    names = list(dict.fromkeys(r.form for r in rows))
    return tuple(
        Form(
            name,
            _pattern([r for r in rows if r.form == name], "asked"),
            _pattern([r for r in rows if r.form == name], "answered"),
        )
        for name in names
    )


def asked_forms(question: str) -> tuple[Form, ...]:
    return tuple(f for f in forms() if f.asked.search(question))
