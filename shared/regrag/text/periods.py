"""How often a text says something recurs: a period after 每 (每年, 每季度, 每两年, 每个月, 每日).

A question that states one (排污许可证每年要年检, 每季度向应急管理部门报送…报告) presumes a duty that recurs that
often; the rule that sets such a duty states its period too (每日按照电费总额的1‰至3‰加收违约金, 每年向…报送上年度的
能源利用状况报告). Periods compare by value: 每两年, 每二年 and 每2年 are one period, as are 每日 and 每天.

The periods are the time units of data/units.tsv (年, 个月 / 月, 日 / 天, 小时 …, by their symbol) and three of
the calendar that measure no figure in a regulation but do say how often one reports: 季度 (季), 周 (星期; an
everyday time unit in the note of 中华人民共和国法定计量单位) and 年度 (the year, as 每年度 writes it).
"""

from __future__ import annotations

import re
from functools import cache

from regrag.text.numerals import ARABIC, FIGURE_DIGITS, parse_numeral
from regrag.text.units import alternation, units

Period = tuple[int, str]  # (how many, the unit's symbol): 每两年 → (2, "a")

_CALENDAR = {"季度": "quarter", "季": "quarter", "周": "week", "星期": "week", "年度": "a"}


@cache
def _symbols() -> dict[str, str]:
    """Each period's name → its symbol: the time units of data/units.tsv, then the calendar's."""
    return {u.name: u.symbol for u in units() if u.quantity == "time"} | _CALENDAR


@cache
def _period() -> re.Pattern[str]:
    # 每 + an optional count (每两年, 每2年) + the period, with the measure word 个 either side (每个月, 每两个月)
    return re.compile(
        rf"每个?(?P<count>[{ARABIC}]{{1,3}}|[{FIGURE_DIGITS}]{{1,3}})?个?(?P<unit>{alternation(tuple(_symbols()))})"
    )


def stated_periods(text: str) -> dict[str, Period]:
    """Each period `text` states after 每, as written (每两年) → its value ((2, "a")), in the order written."""
    out: dict[str, Period] = {}
    for found in _period().finditer(text):
        count = found.group("count")
        if count is None:
            value = 1
        elif count.isdigit():
            value = int(count)
        else:
            value = parse_numeral(count)
        out.setdefault(found.group(0), (value, _symbols()[found.group("unit")]))
    return out
