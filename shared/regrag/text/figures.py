"""Figures in Chinese legal text and in questions: a number with its unit (提前7天, 五倍以下, 百分之五, 1000千瓦时).

A question may ask for a figure (多少 / 几天 / 比例), name the unit it wants it in (多少元 / 几个月 / 多少分贝), or
state figures itself (是否每五年更换 / 按两倍收购); a quote answers the first only with a figure in that unit, and
a question whose stated figures no quote states presumes a rule that is not the one quoted. Values compare as
numbers, so a question's 五年 and a statute's 5年 are equal.
"""

from __future__ import annotations

import functools
import re

from regrag.text.legal import chinese_to_int

# what a question asking for a number says (多少钱 / 几天 / 百分之几 / 比例 / 上限 / 标准是多少)
_ASKS_FIGURE = re.compile(r"多少|几[个天年月日次倍度元成]|百分之几|比例|上限|下限|多大|多长|多高|多久|税率|费率")
# a number with a unit (digits or Chinese numerals): what answers such a question
FIGURE = re.compile(
    r"[0-9０-９.．]+\s*(?:%|％|‰|个|日|天|年|月|小时|倍|元|万元|亿元|千瓦|兆瓦|万千瓦|千伏|伏|度|米|平方米|公里|吨|分钟|周岁|人|户)"
    r"|百分之[一二三四五六七八九十零〇百点]+"
    # Chinese numerals need a unit that is not also a word ending: 第三人 (a third party) is no figure
    r"|[一二三四五六七八九十两百千万]+(?:个工作日|个月|日|天|年|小时|倍|元|万元|千瓦|千伏|米|吨|分钟|周岁)"
)
# a figure a question states (每五年 / 两倍 / 三十天 / 20米): stricter than FIGURE on Chinese numerals, whose 元
# in a question is as often a word part (三元锂电池) as money
STATED_FIGURE = re.compile(
    r"[0-9０-９]+(?:[.．][0-9０-９]+)?\s*(?:%|％|个|日|天|年|月|小时|倍|元|万元|千瓦|兆瓦|万千瓦|千伏|伏|度|米|平方米|公里|吨|分钟|周岁)"
    r"|[一二三四五六七八九十两百千万]+(?:个工作日|个月|日|天|年|小时|倍|千瓦|千伏|米|吨|分钟|周岁|度)"
)
# the unit a question asks its figure in (多少元 / 几个月 / 多少分贝 / 百分之几): a quote stating 12月31日 or 72小时
# does not answer 每亩多少元 or 多少学时. Counts, persons and money asked as 多少钱 are left out: their answers
# are as often a formula (二倍的工资, 每满一年支付一个月工资) as a figure in the unit
_ASKED_UNIT = re.compile(
    r"(?:多少|几)(个工作日|个月|分贝|毫克|微克|千克|公斤|克|学时|小时|分钟|周岁|千瓦时|万千瓦|千瓦|兆瓦|千伏|平方米"
    r"|平方公里|公顷|亩|公里|米|吨|元|天|日|年|月|倍|度)|百分之(?:几|多少)"
)
# what else states a figure in the same unit (提前7天 / 七日; 1000千瓦时 / 1000度)
_SAME_UNIT = {
    "天": "天|日|个工作日",
    "日": "天|日|个工作日",
    "个工作日": "个工作日|日|天",
    "个月": "个?月",
    "月": "个?月",
    "元": "元|万元|亿元",
    "度": "度|千瓦时|℃",
    "千瓦时": "千瓦时|度",
    "吨": "万?吨",
    "%": "[%％‰]",
}
_LEADING_NUMBER = re.compile(r"[0-9０-９]+|[零〇一二三四五六七八九十两百千万]+")


def asks_figure(question: str) -> bool:
    """Whether a question asks for a number (多少 / 几天 / 比例 …, or a unit it wants one in)."""
    return bool(_ASKS_FIGURE.search(question) or _ASKED_UNIT.search(question))


def asked_units(question: str) -> tuple[str, ...]:
    """The units a question asks its figure in, in order ("%" for 百分之几); empty when it names none."""
    return tuple(m.group(1) or "%" for m in _ASKED_UNIT.finditer(question))


def _number(token: str) -> int | None:
    """'30', '３０', '三十', '两' → the integer; None for what is not a plain number."""
    try:
        return chinese_to_int(token)
    except ValueError:
        return None


def figure_values(text: str, pattern: re.Pattern[str] = FIGURE) -> set[int]:
    """The numbers of the figures in `text` (the number each figure starts with: 五年 → 5, 10千伏 → 10), so that a
    question's 五年 and a statute's 5年 compare equal."""
    values = set()
    for match in pattern.finditer(text):
        lead = _LEADING_NUMBER.match(match.group(0))
        value = _number(lead.group(0)) if lead else None
        if value is not None:
            values.add(value)
    return values


def stated_figure_values(question: str) -> set[int]:
    """The values of the figures a question states itself (是否每五年更换 → {5})."""
    return figure_values(question, STATED_FIGURE)


def states_figure(text: str) -> bool:
    """Whether `text` states any number with a unit."""
    return bool(FIGURE.search(text))


def figure_in_units(units: tuple[str, ...], spans: str) -> bool:
    """Whether the quotes state a figure in one of the units asked for; True when none is named."""
    if not units:
        return True
    if "%" in units and "百分之" in spans:
        return True
    return any(_unit_figure(unit).search(spans) for unit in units)


def figure_in_asked_unit(question: str, spans: str) -> bool:
    """Whether the quotes state a figure in a unit the question asks for; True when it names no unit."""
    return figure_in_units(asked_units(question), spans)


@functools.cache
def _unit_figure(unit: str) -> re.Pattern[str]:
    # a search, so a decimal needs no pattern of its own: 0.5% contains 5%
    return re.compile(f"(?:{_LEADING_NUMBER.pattern})\\s*(?:{_SAME_UNIT.get(unit, re.escape(unit))})")
