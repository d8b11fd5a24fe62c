"""Numbers as Chinese legal text writes them, in one place: the digit classes, the one numeral parser, the date
pattern and the article-label patterns. Every module that reads a Chinese number takes them from here.

Digit classes are bodies for a regex character class (`[{ARABIC}]`); which one a context takes is part of its
rule, so each is named after the context it serves:

- `ARABIC`: ASCII and full-width digits (0-9 ０-９). Normalised text (`normalize`) has folded the full-width ones;
  questions, header lines and clause texts are read as written, so the class keeps both.
- `LABEL_DIGITS`: article, heading and item labels (第二十条, 第一百零五条之一, 第三章, （十二）): 零〇, 一 to 九, 两,
  十百千. Labels stop below 万, and the look-alikes of 〇 (○, Ｏ) are typists' slips in years, never in a label.
- `YEAR_DIGITS`: years written digit by digit (二〇〇五年, 一九九三年): the zeros 零〇 and their look-alikes ○
  (U+25CB WHITE CIRCLE) and Ｏ (full-width Latin O), which typed texts put for 〇, and 一 to 九.
- `SMALL_DIGITS`: months, days and counts of days (十二月三十一日, 三十日后): 一 to 九 and 十.
- `FIGURE_DIGITS`: figures (五万元, 一百零五天, 两倍) and counts of days (三十日后施行): every Chinese digit and
  power a figure holds, 万 included. `PERCENT_DIGITS`: what follows 百分之 (百分之二十, 百分之零点五), 点 included.

`parse_numeral` reads any of them: Arabic digits, positional numerals (十二, 一百零五, 一万二千五百, 一亿二千万)
and digit-by-digit numerals (一九九三, 二〇〇五). The date and label patterns below are fragments with named
groups, for the line-anchored and sentence-level regexes of `regrag.text.legal`, `regrag.text.dates`,
`regrag.text.chunking`, the OCR and PDF readers and `regrag.query.temporal` to build on.
"""

from __future__ import annotations

import datetime as dt
import re

ARABIC = "0-9０-９"
_ZEROS = "零〇"
_LOOKALIKE_ZEROS = "○Ｏ"
_ONE_TO_NINE = "一二三四五六七八九"
_POWERS = "十百千"
LABEL_DIGITS = f"{_ZEROS}{_ONE_TO_NINE}{_POWERS}两"
YEAR_DIGITS = f"{_ZEROS}{_LOOKALIKE_ZEROS}{_ONE_TO_NINE}"
SMALL_DIGITS = f"{_ONE_TO_NINE}十"
FIGURE_DIGITS = f"{_ZEROS}{_ONE_TO_NINE}两{_POWERS}万"
PERCENT_DIGITS = f"{_ZEROS}{_ONE_TO_NINE}十百点"

_VALUES = {ch: value for value, ch in enumerate("〇" + _ONE_TO_NINE)} | {"零": 0, "○": 0, "Ｏ": 0, "两": 2}
_POWER_VALUES = {"十": 10, "百": 100, "千": 1000}
_MYRIAD, _HUNDRED_MILLION = "万", "亿"


def parse_numeral(numeral: str) -> int:
    """A number as legal text writes it → int; ValueError for anything else.

    Arabic digits, full-width too ('12', '１２'); positional Chinese numerals, the leading 一 of 十 implied and 零
    marking a gap (十二 → 12, 一百零五 → 105, 两千 → 2000, 一万二千五百 → 12500, 一亿二千万 → 120000000);
    numerals written digit by digit, as years are (一九九三 → 1993, 二〇〇五 → 2005, 二○○九 → 2009).
    """
    if numeral.isdecimal():
        return int(numeral)  # int() reads full-width digits too
    known = _VALUES.keys() | _POWER_VALUES.keys() | {_MYRIAD, _HUNDRED_MILLION}
    if not numeral or any(ch not in known for ch in numeral):
        raise ValueError(f"not a numeral: {numeral!r}")
    if len(numeral) > 1 and not any(ch in _POWER_VALUES or ch in (_MYRIAD, _HUNDRED_MILLION) for ch in numeral):
        if "两" in numeral:  # 两 is a count (两倍, 两千), never a digit of a year or a code
            raise ValueError(f"not a numeral: {numeral!r}")
        return int("".join(str(_VALUES[ch]) for ch in numeral))
    return _positional(numeral)


# 概数: two neighbouring digits written side by side give a range, not a number (GB/T 15835-2011 《出版物上数字用法》
# 4.1.1 d: 相邻的两个数字并列连用表示概数 — 三五天, 一两个小时, 四十五六岁, 五六万套). A year written digit by digit
# (一九九三) is four digits, and a code keeps its zeros (一〇一): neither is read as one.
_APPROXIMATE = re.compile(f"[{_ONE_TO_NINE}两][{_ONE_TO_NINE}两]")


def approximate(numeral: str) -> bool:
    """Whether a Chinese numeral is a 概数 (三四年 → 3 or 4 years, 七八十 → 70 to 80): no single value."""
    digit_by_digit = len(numeral) == 4 and all(ch in _VALUES for ch in numeral)
    return not digit_by_digit and _APPROXIMATE.search(numeral) is not None


def _positional(numeral: str) -> int:
    """十二 / 一百零五 / 一万二千五百 / 一万亿: digits times powers, summed within each 万 and 亿 group."""
    total = group = section = current = 0  # total: whole 亿s; group: below 亿; section: below 万
    for ch in numeral:
        if ch in _VALUES:
            current = _VALUES[ch]
        elif ch in _POWER_VALUES:
            section += (current or 1) * _POWER_VALUES[ch]  # 十二: the leading 一 is implied
            current = 0
        elif ch == _MYRIAD:  # 一万二千: what came before counts in ten thousands
            group += (section + current) * 10_000
            section = current = 0
        else:  # 亿: everything before counts in hundred millions (一万亿 = 10¹²)
            total = (total + group + section + current) * 100_000_000
            group = section = current = 0
    return total + group + section + current


def int_to_chinese(value: int) -> str:
    """The numeral that regulations use in labels: 1 → 一, 10 → 十, 20 → 二十, 105 → 一百零五 (up to 9999)."""
    if value <= 0:
        raise ValueError("article numbers start at 1")
    digits = "零" + _ONE_TO_NINE
    out: list[str] = []
    started = False
    zero_pending = False
    for unit_value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d, value = divmod(value, unit_value)
        if d:
            if zero_pending:
                out.append("零")
                zero_pending = False
            if not (unit == "十" and d == 1 and not started):
                out.append(digits[d])
            out.append(unit)
            started = True
        elif started:
            zero_pending = True
    return "".join(out)


# --- dates ----------------------------------------------------------------------------------------------------

# A year has four digits, all Arabic or all Chinese (二〇〇五, never 20〇5); a month or a day one or two Arabic
# digits or up to three Chinese ones (三十一).
YEAR = rf"[{ARABIC}]{{4}}|[{YEAR_DIGITS}]{{4}}"
MONTH_OR_DAY = rf"[{ARABIC}]{{1,2}}|[{SMALL_DIGITS}]{{1,3}}"
# 2024年7月1日, 二〇二一年一月一日, 2004 年 7 月 29 日: groups y, m, d
DATE = rf"(?P<y>{YEAR})\s*年\s*(?P<m>{MONTH_OR_DAY})\s*月\s*(?P<d>{MONTH_OR_DAY})\s*日"
DATE_RE = re.compile(DATE)


def unnamed(pattern: str) -> str:
    """A pattern with its named groups made non-capturing, to repeat it inside a larger one (a regex names each
    group once)."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def parse_date_parts(year: str, month: str | None, day: str | None) -> tuple[int, int | None, int | None] | None:
    """Year, month and day as written (Arabic, full-width or Chinese numerals) → ints; None when unreadable."""
    try:
        return parse_numeral(year), parse_numeral(month) if month else None, parse_numeral(day) if day else None
    except ValueError:
        return None


def to_iso(year: str, month: str, day: str) -> str | None:
    """A written date → 'YYYY-MM-DD', or None when it is not a real day."""
    parts = parse_date_parts(year, month, day)
    if parts is None or parts[1] is None or parts[2] is None:
        return None
    try:
        return dt.date(parts[0], parts[1], parts[2]).isoformat()
    except ValueError:
        return None


def find_dates(text: str) -> list[str]:
    """Every real date written in `text`, in order, as ISO strings."""
    found = (to_iso(m.group("y"), m.group("m"), m.group("d")) for m in DATE_RE.finditer(text))
    return [day for day in found if day]


# --- labels ---------------------------------------------------------------------------------------------------

# The number of a label: Chinese (第二十条) or Arabic (第20条), never the two mixed.
LABEL_NUMBER = rf"[{LABEL_DIGITS}]+|[0-9]+"
# 第二十条, 第二十条之一: groups label, num, sub
ARTICLE_LABEL = rf"(?P<label>第(?P<num>{LABEL_NUMBER})条(?:之(?P<sub>[{LABEL_DIGITS}]+))?)"
# 第一编, 第二分编, 第三章, 第四节: groups label, num, kind
HEADING_KINDS = "分编|编|章|节"
HEADING_LABEL = rf"(?P<label>第(?P<num>{LABEL_NUMBER})(?P<kind>{HEADING_KINDS}))"
# the numbered items of a list: （一） (一) 一、 1. 1、: group label
ITEM_LABEL = rf"(?P<label>[（(][{LABEL_DIGITS}0-9]+[）)]|[{LABEL_DIGITS}]+、|[0-9]+[、.．])"
