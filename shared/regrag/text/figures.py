"""Figures in Chinese legal text and in questions: a number with its unit (提前7天, 五倍以下, 百分之五, 1000千瓦时).

A question may ask for a figure (多少 / 几天 / 比例), name the unit it wants it in (多少元 / 几个月 / 多少分贝), or
state figures itself (是否每五年更换 / 按两倍收购); a quote answers the first only with a figure in that unit, and
a question whose stated figures no quote states presumes a rule that is not the one quoted. Values compare as
numbers, so a question's 五年 and a statute's 5年 are equal.
"""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass

from regrag.text.normalize import to_halfwidth
from regrag.text.numerals import ARABIC, FIGURE_DIGITS, PERCENT_DIGITS, approximate, parse_numeral
from regrag.text.units import (
    PERCENT,
    QUESTION,
    TEXT,
    alternation,
    answering_pattern,
    asked_units_pattern,
    figure_units,
    unit_at_end,
    unit_tags,
    units,
)

# the words that ask for a ratio (比例是多少, 税率是多少): a figure of quantity ratio in data/units.tsv (%, ‰, 倍)
# answers, not a tonnage or a day count (五千吨标准煤 is no 分成比例)
_ASKS_RATIO = re.compile(r"比例|税率|费率")
# what a question asking for a number says (多少钱 / 几天 / 百分之几 / 比例 / 上限 / 标准是多少)
# (几 before a unit of data/units.tsv is `_HOW_MANY`; 几次 and 几成 ask a count and a share, in no unit of the table)
_ASKS_FIGURE = re.compile(rf"多少|几[次成]|百分之几|{_ASKS_RATIO.pattern}|上限|下限|多大|多长|多高|多久")
# the number a figure starts with: digits (a decimal's integer part) or a Chinese numeral
_LEADING_NUMBER = re.compile(rf"[{ARABIC}]+|[{FIGURE_DIGITS}]+")
# a decimal reads as its integer part, written in digits (0.75米) or in words (零点七五米) alike
_ARABIC_NUMBER = rf"[{ARABIC}]+(?:[.．][{ARABIC}]+)?"
_CHINESE_NUMBER = rf"[{FIGURE_DIGITS}]+(?:点[{FIGURE_DIGITS}]+)?"


def _figure(where: str) -> re.Pattern[str]:
    """A number with a unit, in a regulation's text (TEXT) or in a question (QUESTION): Arabic digits with any unit
    of data/units.tsv, a Chinese numeral with a unit that is not also a word ending there (not, in a question,
    三元锂电池), or 百分之… A Chinese numeral after 第 is an ordinal, no figure in any unit: 第三人 is a party, not
    three people, so 不得少于两人 can count as a figure in 人."""
    return re.compile(
        rf"{_ARABIC_NUMBER}\s*(?:{figure_units(where, chinese=False)})"
        rf"|{PERCENT}[{PERCENT_DIGITS}]+"
        rf"|(?<![第{FIGURE_DIGITS}]){_CHINESE_NUMBER}(?:{figure_units(where, chinese=True)})"
    )


# a number with a unit in a regulation: what answers a question asking for a figure
FIGURE = _figure(TEXT)
# a figure a question states (每五年 / 两倍 / 三十天 / 20米)
STATED_FIGURE = _figure(QUESTION)
# the unit a question asks its figure in (多少元 / 几个月 / 多少分贝 / 百分之几): a quote stating 12月31日 or 72小时
# does not answer 每亩多少元 or 多少学时
_ASKED_UNIT = re.compile(rf"(?:多少|几)({asked_units_pattern()})|百分之(?:几|多少)")


# 几 before any unit of data/units.tsv asks for a number, in that unit or not (至少要有几人: 不得少于2人): the units
# not asked in (counts: 人, 户, 个) only leave the unit of the answer open (`asked_units`)
_HOW_MANY = re.compile(rf"几(?:{alternation(tuple(u.name for u in units()))})")


def asks_figure(question: str) -> bool:
    """Whether a question asks for a number (多少 / 几天 / 几人 / 比例 …, or a unit it wants one in)."""
    return bool(_ASKS_FIGURE.search(question) or _ASKED_UNIT.search(question) or _HOW_MANY.search(question))


def asked_units(question: str) -> tuple[str, ...]:
    """The units a question asks its figure in, in order ("%" for 百分之几; the ratio units for 比例 / 税率 / 费率
    when it names no unit); empty when it names none."""
    named = tuple(m.group(1) or "%" for m in _ASKED_UNIT.finditer(question))
    if named or not _ASKS_RATIO.search(question):
        return named
    return tuple(u.name for u in units() if u.quantity == "ratio")


def _number(token: str) -> int | None:
    """'30', '３０', '三十', '两' → the integer; None for what is not a plain number, and for a 概数 (三四年, 七八天):
    a range describes the asker's case (说要用三四年), it states no rule a quote must repeat."""
    if approximate(token):
        return None
    try:
        return parse_numeral(token)
    except ValueError:
        return None


# a day is 24 hours (法定计量单位 表4: 1 d = 24 h): a question's 停暖一天以上 is a statute's 超过二十四小时
HOURS_A_DAY = 24
_DAY, _HOUR = "d", "h"  # their symbols in data/units.tsv
# what a figure is compared by: its value and the symbols its unit answers for (units.tsv: its own and its family's)
Quantity = tuple[int, frozenset[str]]


# a unit written with 万 or 亿 before its base unit (万元, 万千瓦, 万吨) counts them in a figure's value, as a Chinese
# numeral with 万 in it does: 50万元 and 五十万元 are both 500000 (元), 五万千瓦 is 50000 (千瓦), and 10万元 is not 10元
_MYRIADS = {"万": 10_000, "亿": 100_000_000}
_DECIMAL = re.compile(rf"[{ARABIC}]+(?:[.．][{ARABIC}]+)?")


def _value(figure: str) -> int | None:
    """The number a figure starts with (五年 → 5, 10千伏 → 10, 154 → 154), after 百分之 in a percentage (百分之五十
    → 50, not the 百 of 百分之), times the 万 or 亿 its unit starts with (10万元 → 100000); None when it starts with
    no number or with a 概数 (`_number`). A decimal counts by its integer part, unless 万 or 亿 scales it (1.5万元 →
    15000)."""
    figure = figure.removeprefix(PERCENT)
    unit = unit_at_end(figure)
    scale = _MYRIADS.get(unit.group(0)[0], 1) if unit else 1
    number = figure[: unit.start()].strip() if unit else figure
    decimal = _DECIMAL.fullmatch(to_halfwidth(number).replace("．", "."))
    if scale > 1 and decimal:
        return int(float(decimal.group(0)) * scale)
    lead = _LEADING_NUMBER.match(number)
    value = _number(lead.group(0)) if lead else None
    return None if value is None else value * scale


def figure_values(text: str, pattern: re.Pattern[str] = FIGURE) -> set[int]:
    """The numbers of the figures in `text` (the number each figure starts with: 五年 → 5, 10千伏 → 10), so that a
    question's 五年 and a statute's 5年 compare equal."""
    return {value for match in pattern.finditer(text) if (value := _value(match.group(0))) is not None}


def _quantities(match: re.Match[str]) -> set[Quantity]:
    """A figure's value with its unit's symbols (五年 → (5, {a}), 154—330千伏's 330千伏 → (330, {kV})), and a count
    of days also in hours (一天 → (1, {d}) and (24, {h}))."""
    value = _value(match.group(0))
    if value is None:
        return set()
    tags = unit_tags(match.group(0))
    found = {(value, tags)}
    if _DAY in tags:
        found.add((value * HOURS_A_DAY, frozenset({_HOUR})))
    return found


def figure_quantities(text: str, pattern: re.Pattern[str] = FIGURE) -> set[Quantity]:
    """The figures of `text` as quantities (`_quantities`)."""
    return {found for match in pattern.finditer(text) for found in _quantities(match)}


# a range a regulation states: 154—330千伏 (the lower bound before a dash, its unit left out), 五米至五十米 /
# 1个月至3个月 / 百分之五至百分之十 (the lower bound before 至, with or without its unit) or 五万元以上二十万元以下
_LOWER_UNIT = rf"(?:{figure_units(TEXT, chinese=False)}|{figure_units(TEXT, chinese=True)})?"
_DASH_RANGE = re.compile(
    rf"(?:{PERCENT})?({_ARABIC_NUMBER}|{_CHINESE_NUMBER})\s*({_LOWER_UNIT})\s*(?:[—–~～－-]|至)\s*(?:{PERCENT})?$"
)
_BETWEEN = re.compile(r"\s*以上\s*[、，,]?\s*$")  # 一百公顷以上、七百公顷以下 as 五万元以上二十万元以下
_UP_TO = re.compile(r"\s*以下")


def figure_ranges(text: str) -> list[tuple[int, int, frozenset[str]]]:
    """The ranges `text` states, as (lower, upper, the unit's symbols): 154—330千伏 → (154, 330, {kV}),
    五万元以上二十万元以下 → (50000, 200000, {元 …}) (each bound read as figure_values reads a figure: by the number it
    starts with)."""
    ranges = []
    previous: tuple[int, int] | None = None  # the figure before: its end and value
    for match in FIGURE.finditer(text):
        upper = _value(match.group(0))
        if upper is None:
            previous = None
            continue
        dash = _DASH_RANGE.search(text, max(0, match.start() - 12), match.start())
        # a lower bound in another unit is no bound of this figure: 1月1日至2020年12月31日 is two days
        same_unit = dash is not None and (not dash.group(2) or unit_tags(dash.group(2)) & unit_tags(match.group(0)))
        # a lower bound written without its unit is in the upper bound's (5至10万元 is 50000 to 100000 元)
        upper_unit = unit_at_end(match.group(0))
        lower_unit = (dash.group(2) or (upper_unit.group(0) if upper_unit else "")) if dash else ""
        lower = _value(dash.group(1) + lower_unit) if dash and same_unit else None
        if lower is None and previous and _BETWEEN.fullmatch(text, previous[0], match.start()):
            lower = previous[1] if _UP_TO.match(text, match.end()) else None
        if lower is not None and lower < upper:
            ranges.append((lower, upper, unit_tags(match.group(0))))
        previous = (match.end(), upper)
    return ranges


def states_values(stated: frozenset[Quantity] | set[Quantity], text: str) -> bool:
    """Whether `text` states one of the figures a question states: the same number in a unit that answers for the
    same thing (五年 / 5年, 一天 / 24小时; not 1000千伏 / 1000米), one inside a range it states in such a unit
    (220千伏 in 154—330千伏, 十万元 in 五万元以上二十万元以下) or one a bound it states admits (卧室只有十七度 under
    卧室、起居室温度低于十八摄氏度、高于十六摄氏度的: the rule covers the asker's case)."""
    found = _Stated.of(text, range_ends_admit=True)
    return any(found.holds(value, tags) for value, tags in stated)


@dataclass(frozen=True)
class _Stated:
    """The figures a text states, read once: each figure, the ranges and the bounds. With `range_ends_admit`
    false, a range's ends (五千元以上 … 五万元以下) are no bounds of their own: a figure beyond the range is outside
    it, not admitted by one end."""

    found: set[Quantity]
    ranges: list[tuple[int, int, frozenset[str]]]
    bounds: list[Bound]

    @classmethod
    def of(cls, text: str, *, range_ends_admit: bool) -> _Stated:
        ranges = figure_ranges(text)
        bounds = figure_bounds(text)
        if not range_ends_admit:
            bounds = [b for b in bounds if not any(b.value in (low, high) and b.tags & t for low, high, t in ranges)]
        return cls(figure_quantities(text), ranges, bounds)

    @property
    def units(self) -> frozenset[str]:
        """The unit tags of every figure stated (a day's figures count in hours too)."""
        return frozenset().union(*(tags for _, tags in self.found))

    def holds(self, value: int, tags: frozenset[str]) -> bool:
        """The same number in a unit that answers for the same thing, or one a range or bound stated admits."""
        return any(value == v and tags & t for v, t in self.found) or self.admits(value, tags)

    def admits(self, value: int, tags: frozenset[str]) -> bool:
        """A figure inside a range stated, or one a bound stated admits, in a unit that answers for the same thing."""
        return any(low <= value <= high and tags & t for low, high, t in self.ranges) or any(
            b.admits(value) and tags & b.tags for b in self.bounds
        )


# the words that make a figure a bound, and which side of it they admit. 以上, 以下 and 以内 include the figure
# (刑法 第九十九条: 本法所称以上、以下、以内，包括本数); 超过, 不满, 低于 … exclude it
_BOUND_BEFORE = (
    ("不低于", "ge"), ("不少于", "ge"), ("不小于", "ge"),
    ("不超过", "le"), ("不高于", "le"), ("不多于", "le"), ("不大于", "le"),
    ("低于", "lt"), ("少于", "lt"), ("小于", "lt"), ("不足", "lt"), ("不满", "lt"), ("不到", "lt"),
    ("高于", "gt"), ("超过", "gt"), ("多于", "gt"), ("大于", "gt"),
)  # fmt: skip
# 不得 before a comparison negates it as 不 does (保存期限不得少于5年 is at least 5 years, 最长不得超过1年 at most
# one), where the words after 不得 alone would read the other way
_BOUND_WORDS = sorted(
    (*_BOUND_BEFORE, *((f"不得{word[1:]}", side) for word, side in _BOUND_BEFORE if word.startswith("不"))),
    key=lambda entry: -len(entry[0]),
)
_BOUND_AFTER = (("以上", "ge"), ("以下", "le"), ("以内", "le"))
_ADMITS = {"ge": operator.ge, "le": operator.le, "lt": operator.lt, "gt": operator.gt}


@dataclass(frozen=True)
class Bound:
    """A one-sided bound a text states (低于十八摄氏度 → lt 18 ℃)."""

    side: str  # ge, le, lt, gt
    value: int
    tags: frozenset[str]

    def admits(self, value: int) -> bool:
        return _ADMITS[self.side](value, self.value)


def figure_bounds(text: str) -> list[Bound]:
    """The bounds `text` states: a figure after 低于 / 不超过 … or before 以上 / 以下 / 以内."""
    bounds = []
    for match in FIGURE.finditer(text):
        value = _value(match.group(0))
        if value is None:
            continue
        before = text[max(0, match.start() - 4) : match.start()]
        side = next((s for word, s in _BOUND_WORDS if before.endswith(word)), None)
        side = side or next((s for word, s in _BOUND_AFTER if text.startswith(word, match.end())), None)
        if side:
            bounds.append(Bound(side, value, unit_tags(match.group(0))))
    return bounds


# a day of the calendar (2015年, 2025年4月, 二〇一五年): the day a question is about (query/temporal.py), not a figure
# it states
_CALENDAR_YEAR = re.compile(
    r"(?:(?:1[89]|20)\d{2}|[一二][〇零九][〇零一二三四五六七八九]{2})年"
    r"(?:\s*[0-9一二三四五六七八九十]{1,3}\s*月(?:\s*[0-9一二三四五六七八九十]{1,3}\s*[日号])?)?"
)


def _without_calendar(question: str) -> str:
    """The question without its days of the calendar: a calendar year is no figure it states (2015年时…: a rule
    quoted without 2015 is not a rule other than the one presumed)."""
    return _CALENDAR_YEAR.sub("", question)


def stated_figure_values(question: str) -> set[int]:
    """The values of the figures a question states itself (是否每五年更换 → {5})."""
    return figure_values(_without_calendar(question), STATED_FIGURE)


def stated_quantities(question: str, besides: tuple[str, ...] = ()) -> set[Quantity]:
    """The figures a question states itself as quantities (`_quantities`): what a quote must state to state what
    the question presumes (`states_values`). `besides`: units (those the question asks in) whose figures are left
    out, a day's figure with the hours it also reads as."""
    left_out = frozenset().union(*(unit_tags(unit) for unit in besides))
    return {
        found
        for match in STATED_FIGURE.finditer(_without_calendar(question))
        if not unit_tags(match.group(0)) & left_out
        for found in _quantities(match)
    }


def case_figures(question: str) -> frozenset[Quantity]:
    """The figures a question tells its case in, calendar dates aside, in any unit (一家从业人员120人的企业 → 120
    人): what a threshold of a rule admits or not (`admits_case`)."""
    return frozenset(figure_quantities(_without_calendar(question)))


def admits_case(case: frozenset[Quantity], text: str) -> bool:
    """Whether a range or a bound `text` states admits one of the case's figures, in its unit (120人 under
    从业人员超过一百人的; not under 一百人以下): the rule is the one for the asker's case. Not the same figure
    stated alone, which is as often another matter's (两人, 三十日)."""
    if not case:
        return False
    found = _Stated.of(text, range_ends_admit=True)
    return any(found.admits(value, tags) for value, tags in case)


def case_units(question: str) -> frozenset[str]:
    """The units (their symbols) of the figures a question states, calendar dates aside: 征收耕地40公顷 → {ha}."""
    return units_of_figures(_without_calendar(question))


def units_of_figures(text: str) -> frozenset[str]:
    """The units (their symbols) of the figures `text` states."""
    return frozenset().union(*(unit_tags(match.group(0)) for match in FIGURE.finditer(text)))


def states_figure(text: str) -> bool:
    """Whether `text` states any number with a unit."""
    return bool(FIGURE.search(text))


def figure_in_units(units: tuple[str, ...], spans: str) -> bool:
    """Whether the quotes state a figure in one of the units asked for; True when none is named."""
    if not units:
        return True
    if "%" in units and PERCENT in spans:
        return True
    return any(_unit_figure(unit).search(spans) for unit in units)


@functools.cache
def _unit_figure(unit: str) -> re.Pattern[str]:
    # a search, so a decimal needs no pattern of its own: 0.5% contains 5%
    return re.compile(f"(?:{_LEADING_NUMBER.pattern})\\s*(?:{answering_pattern(unit)})")


def unstated_figures(said: str, text: str) -> tuple[str, ...]:
    """The figures `said` states (calendar days aside), each in a unit `text` states a figure in, that `text` does
    not state, nor holds in a range it states (nor, outside a range, admits in a bound: 五倍以下): what a memo says
    an article provides (依《条例》第二十八条，应提前3天通知) that the article does not say (提前7天 / 24小时). A
    figure in a unit the article has none in (本项目50兆瓦) is the memo's own case, not something it attributes to
    the article. Stricter than `states_values`, which admits a question's case under either end of a range: a memo
    writing 最高可处200万元 of 10万元以上100万元以下 misstates the range."""
    article = _Stated.of(text, range_ends_admit=False)
    units = article.units
    return tuple(
        dict.fromkeys(
            match.group(0)
            for match in FIGURE.finditer(_without_calendar(said))
            if (quantities := _quantities(match))
            and any(tags & units for _, tags in quantities)
            and not any(article.holds(value, tags) for value, tags in quantities)
        )
    )


def figures_in_units_of(figures: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The figures of `text` in the units of `figures`, a day's figures with those in hours (what the article says
    where a memo says otherwise: 7天, 24小时 where it says 3天)."""
    units = frozenset().union(*(tags for f in figures for _, tags in figure_quantities(f)))
    return tuple(dict.fromkeys(m.group(0) for m in FIGURE.finditer(text) if unit_tags(m.group(0)) & units))
