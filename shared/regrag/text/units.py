"""Units of measure as Chinese legal text and questions write them, read from one table (data/units.tsv).

Each row says what a unit is (`symbol`: units with one symbol are one unit written two ways, 天 and 日), which
other units answer a question asked in it (`family`: 7个工作日 answers 几天, 5万元 answers 多少元), after which
numerals it makes a figure in a regulation and in what a question states, whether a question can ask for a figure
in it (多少元 / 几个月), and where the entry came from (GB 3100-1993 and the 1984 法定计量单位 for SI and legal
units, a dictionary, or the corpus, with how often it occurs there). `regrag.text.figures` builds its figure
patterns from it, `regrag.text.dates` its count of days, and `regrag.query.forms` what a time limit is written in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from regrag.data import table

TEXT, QUESTION = "text", "question"
_STATED = ("both", "arabic", "no")
PERCENT = "百分之"  # how Chinese writes a percentage (GB 3101-1993's %): 百分之五十 is 50 %


@dataclass(frozen=True)
class Unit:
    """One row of data/units.tsv (its header comment describes the columns)."""

    name: str
    symbol: str
    quantity: str
    family: tuple[str, ...]
    chinese: bool  # a figure after Chinese numerals in a regulation's text
    stated: str  # after which numerals a question's figure in it is one it states: both, arabic, no
    asked: bool
    source: str
    corpus_arabic: int
    corpus_chinese: int

    @property
    def tags(self) -> frozenset[str]:
        """The symbols a figure in this unit answers for: its own and its family's."""
        return frozenset((self.symbol, *self.family))

    def reads(self, where: str, *, chinese: bool) -> bool:
        """Whether a number followed by this unit is a figure in a regulation's text (TEXT) or one a question
        states (QUESTION), after Chinese numerals or after Arabic digits."""
        if where == TEXT:
            return self.chinese or not chinese
        return self.stated == "both" or (self.stated == "arabic" and not chinese)


@cache
def units() -> tuple[Unit, ...]:
    """Every unit of data/units.tsv, in file order; ValueError names a malformed row."""
    out = []
    for row in table.rows("units.tsv", 10)[1:]:  # the first row names the columns
        cells = row.cells
        if cells[4] not in ("yes", "no") or cells[5] not in _STATED or cells[6] not in ("yes", "no"):
            raise row.error("chinese yes|no, stated " + "|".join(_STATED) + ", asked yes|no")
        name, symbol, quantity, family, chinese, stated, asked, source, arabic_count, chinese_count = cells
        out.append(
            Unit(name, symbol, quantity, tuple(f for f in family.split(",") if f), chinese == "yes", stated,
                 asked == "yes", source, int(arabic_count), int(chinese_count))
        )  # fmt: skip
    names = [u.name for u in out]
    if len(set(names)) != len(names):
        raise ValueError("units.tsv: a unit is listed twice")
    return tuple(out)


def alternation(names: list[str] | tuple[str, ...]) -> str:
    """A regex alternation of unit names, longest first, so 千瓦时 is read before 千瓦 and 个月 before 月."""
    return "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))


@cache
def _by_name() -> dict[str, Unit]:
    return {u.name: u for u in units()}


@cache
def unit_pattern(name: str) -> str:
    """The ways of writing the unit `name` (日 → 日|天); the name alone when the table does not know it."""
    unit = _by_name().get(name)
    if unit is None:
        return re.escape(name)
    return alternation([u.name for u in units() if u.symbol == unit.symbol])


@cache
def answering_pattern(name: str) -> str:
    """The units a figure that answers a question asked in `name` may be written in: its own ways and its
    family's (天 → 天|日|个工作日, 元 → 元|万元|亿元, 千瓦时 → 千瓦时|度)."""
    unit = _by_name().get(name)
    if unit is None:
        return re.escape(name)
    return alternation([u.name for u in units() if u.tags & unit.tags])


@cache
def figure_units(where: str, *, chinese: bool) -> str:
    """The units that make a figure in a regulation's text (TEXT) or one a question states (QUESTION), after
    Chinese numerals or after Arabic digits (`Unit.reads`)."""
    return alternation([u.name for u in units() if u.reads(where, chinese=chinese)])


@cache
def asked_units_pattern() -> str:
    """The units a question can ask its figure in (多少元 / 几个月 / 多少分贝)."""
    return alternation([u.name for u in units() if u.asked])


@cache
def quantity_units(quantity: str) -> str:
    """The units of one quantity (time: 天|日|个月|小时 …)."""
    return alternation([u.name for u in units() if u.quantity == quantity])


@cache
def _unit_at_end() -> re.Pattern[str]:
    return re.compile(f"(?:{alternation(list(_by_name()))})$")


def unit_at_end(figure: str) -> re.Match[str] | None:
    """Where the unit a figure ends in is written, the longest one the table knows (五万千瓦 → 万千瓦, not 千瓦)."""
    return _unit_at_end().search(figure)


def unit_tags(figure: str) -> frozenset[str]:
    """The symbols the unit a figure ends in answers for (5年 → {a}, 7个工作日 → {workday, d}, 百分之五 → {%});
    empty when it ends in no unit of the table."""
    if figure.startswith(PERCENT):
        return frozenset({"%"})
    found = unit_at_end(figure)
    return _by_name()[found.group(0)].tags if found else frozenset()
