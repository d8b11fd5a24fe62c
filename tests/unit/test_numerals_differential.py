"""Differential test: the one numeral parser, date pattern, label patterns and unit table (regrag.text.numerals,
regrag.text.units) against the copies they replaced, on every numeral, date, label and figure of the corpus and of
the question sets.

The old implementations live only here, copied verbatim as the reference (`Old`). Every place where old and new
read a text differently is listed, with which was right and why, in tests/fixtures/numerals_disagreements.tsv; the
test fails on any disagreement the list does not hold and on any listed one that no longer occurs. It always runs
on shared/sample_corpus and bench/questions; on the whole corpus (../shared/corpus) and the eval sets
(../shared/eval) when they are here, as CI does not have them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from regrag.adapters.local import generator
from regrag.ingest import metadata
from regrag.query import forms, temporal
from regrag.text import chunking, dates, figures, legal, numerals, ocr_text, pdf_text, units
from regrag.text.normalize import normalize

from conftest import FIXTURES, ROOT, SAMPLE

CORPUS = ROOT.parent / "shared" / "corpus" / "docs"
EVAL = ROOT.parent / "shared" / "eval"
LISTED = FIXTURES / "numerals_disagreements.tsv"


# --- the reference: the old implementations, as they were before regrag.text.numerals ----------------------------


class Old:
    """Copies of the parsers and patterns that regrag.text.numerals and regrag.text.units replaced."""

    # text/legal.py
    NUMERAL = "零〇一二三四五六七八九十百千两"
    DIGITS: ClassVar = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
                        "七": 7, "八": 8, "九": 9}  # fmt: skip
    UNITS: ClassVar = {"十": 10, "百": 100, "千": 1000}
    ARTICLE_RE = re.compile(
        rf"^[ \t]*(?:#+[ \t]*)?(?P<label>第(?P<num>[{NUMERAL}]+|[0-9]+)条(?:之(?P<sub>[{NUMERAL}]+))?)(?=\s|$)",
        re.M,
    )
    HEADING_RE = re.compile(
        rf"^[ \t]*(?P<marks>#+[ \t]*)?(?P<label>第(?P<num>[{NUMERAL}]+|[0-9]+)(?P<kind>分编|编|章|节))"
        r"(?:[ \t]+(?P<name>[^\n。；，,;]{0,40}))?[ \t]*$",
        re.M,
    )
    APPENDIX_RE = re.compile(
        rf"^[ \t]*(?:#+[ \t]*)?(?P<label>附(?:件|表|录)?[{NUMERAL}0-9]*)[ \t]*(?:[:：][^\n。]{{0,40}})?$"
    )
    ITEM_RE = re.compile(rf"^[ \t]*(?P<label>[（(][{NUMERAL}0-9]+[）)]|[{NUMERAL}]+、|[0-9]+[、.．])")
    CROSS_REF_RE = re.compile(
        rf"(?P<scope>本法|本条例|本规定|本办法|本细则|本决定)?第(?P<num>[{NUMERAL}]+)条(?:之(?P<sub>[{NUMERAL}]+))?"
        rf"(?:第(?P<para>[{NUMERAL}]+)款)?"
    )

    @staticmethod
    def chinese_to_int(numeral: str) -> int:
        if numeral.isdigit():
            return int(numeral)
        if not numeral or any(ch not in Old.DIGITS and ch not in Old.UNITS and ch != "万" for ch in numeral):
            raise ValueError(f"not a Chinese numeral: {numeral!r}")
        total, section, current = 0, 0, 0
        for ch in numeral:
            if ch in Old.DIGITS:
                current = Old.DIGITS[ch]
            elif ch == "万":
                total += (section + current) * 10000
                section = current = 0
            else:
                section += (current or 1) * Old.UNITS[ch]
                current = 0
        return total + section + current

    # text/dates.py
    ARABIC = "0-9０-９"
    CN_DIGITS = "〇零○Ｏ一二三四五六七八九"
    YEAR = rf"[{ARABIC}]{{4}}|[{CN_DIGITS}]{{4}}"
    SMALL = rf"[{ARABIC}]{{1,2}}|[一二三四五六七八九十]{{1,3}}"
    DATE_PATTERN = rf"(?P<y>{YEAR})\s*年\s*(?P<m>{SMALL})\s*月\s*(?P<d>{SMALL})\s*日"
    DATE_RE = re.compile(DATE_PATTERN)
    YEAR_RE = re.compile(YEAR)
    # what reached the month and day parser (a count of days is compared in its clause: date_rows)
    SMALL_RE = re.compile(SMALL)
    CN_VALUES = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0, "○": 0, "Ｏ": 0}
    SELF = r"本(?:法|条例|规定|办法|细则|实施细则|实施办法|实施条例|规则|决定|决议|准则|通知|意见|条例实施细则)"
    PART = (
        r"(?:本(?:法|条例|规定|办法|细则))?第[^，。；：\s]{1,60}?[条章节款项](?:[^，。；：\s]{0,30}?(?:的规定|规定))?"
    )
    CLAUSE_RE = re.compile(
        rf"(?P<subject>(?:{SELF})\s*|{PART})(?:自|从|于)\s*"
        rf"(?:{DATE_PATTERN}|(?P<event>公布|发布|印发|颁布|通过|批准|公告)之日)\s*"
        rf"(?:起|后)?\s*(?:满?\s*(?P<days>[{ARABIC}一二三四五六七八九十百]+)\s*(?:日|天)(?:后|以后)?\s*)?"
        r"(?:施行|实施|生效|执行)(?!的)"
    )

    @staticmethod
    def small_number(text: str) -> int | None:
        text = text.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
        if text.isdigit():
            return int(text)
        if text == "十":
            return 10
        if "十" in text:
            tens, _, ones = text.partition("十")
            tens_value = Old.CN_VALUES.get(tens, 1) if tens else 1
            ones_value = Old.CN_VALUES.get(ones, 0) if ones else 0
            return tens_value * 10 + ones_value
        if len(text) == 1 and text in Old.CN_VALUES:
            return Old.CN_VALUES[text]
        return None

    @staticmethod
    def year(text: str) -> int | None:
        text = text.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
        if text.isdigit():
            return int(text)
        digits = [Old.CN_VALUES.get(c) for c in text]
        if any(d is None for d in digits):
            return None
        return int("".join(str(d) for d in digits))

    @staticmethod
    def parse_date_parts(year: str, month: str | None, day: str | None) -> tuple[int, int | None, int | None] | None:
        y = Old.year(year)
        m = Old.small_number(month) if month else None
        d = Old.small_number(day) if day else None
        if y is None or (month and m is None) or (day and d is None):
            return None
        return y, m, d

    # query/temporal.py
    NUM = r"[0-9０-９〇○零一二三四五六七八九十]"
    TEMPORAL_DATE_RE = re.compile(
        rf"(?P<y>{NUM}{{4}})\s*年(?:\s*(?P<m>{NUM}{{1,2}})\s*月(?:\s*(?P<d>{NUM}{{1,3}})\s*[日号])?)?"
        r"(?P<part>底|末|初|年底|年末|年初|上半年|下半年)?"
    )
    # text/inference.py (Arabic only; \d reads every Unicode digit) and text/chunking.py
    INFERENCE_DATE_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
    PROMULGATION_RE = re.compile(
        r"(?:^[ \t]*[（(]?\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日)"
        r"|(?:\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日.{0,80}(?:通过|公布|发布|修正|修订|批准|施行|颁布|废止))"
    )
    # text/ocr_text.py, text/pdf_text.py, adapters/local/generator.py, ingest/metadata.py
    OCR_LABEL_RE = re.compile(
        r"^(第[零〇一二三四五六七八九十百千两0-9]+(?:条(?:之[一二三四五六七八九十]+)?|章|节|编|分编))(?=[^\s，。；、：,.;:）)])"
    )
    PDF_PARAGRAPH_START_RE = re.compile(
        r"^\s*(?:第[零〇一二三四五六七八九十百千0-9]+[条章节编]|[（(][一二三四五六七八九十0-9]+[）)]|[一二三四五六七八九十]+、)"
    )
    PDF_HEADING_LINE_RE = re.compile(
        r"^\s*(?:第[零〇一二三四五六七八九十百千0-9]+[章节编](?:\s|$)|(?:总则|分则|附则)\s*$)"
    )
    GENERATOR_NUMERAL = "零〇一二三四五六七八九十百千两0-9"
    GENERATOR_ARTICLE_RE = re.compile(rf"^\s*第[{GENERATOR_NUMERAL}]+条(?:之[{GENERATOR_NUMERAL}]+)?\s*")
    GENERATOR_HEADING_RE = re.compile(rf"^\s*第[{GENERATOR_NUMERAL}]+[编章节]\s*")
    METADATA_PART_RE = re.compile(r"第[^，。；、\s]+?[编章节]")

    @staticmethod
    def restore_label_space(paragraph: str) -> str:
        m = Old.OCR_LABEL_RE.match(paragraph)
        if not m:
            return paragraph
        label = m.group(1)
        if not label.endswith("条") and (len(paragraph) > 30 or any(ch in "。；，：！？;,:!?" for ch in paragraph)):
            return paragraph
        return f"{label} {paragraph[len(label) :]}"

    # text/figures.py
    FIGURE = re.compile(
        r"[0-9０-９.．]+\s*(?:%|％|‰|个|日|天|年|月|小时|倍|元|万元|亿元|千瓦|兆瓦|万千瓦|千伏|伏|度|米|平方米|公里|吨|分钟|周岁|人|户)"
        r"|百分之[一二三四五六七八九十零〇百点]+"
        r"|[一二三四五六七八九十两百千万]+(?:个工作日|个月|日|天|年|小时|倍|元|万元|千瓦|千伏|米|吨|分钟|周岁)"
    )
    STATED_FIGURE = re.compile(
        r"[0-9０-９]+(?:[.．][0-9０-９]+)?\s*(?:%|％|个|日|天|年|月|小时|倍|元|万元|千瓦|兆瓦|万千瓦|千伏|伏|度|米|平方米|公里|吨|分钟|周岁)"
        r"|[一二三四五六七八九十两百千万]+(?:个工作日|个月|日|天|年|小时|倍|千瓦|千伏|米|吨|分钟|周岁|度)"
    )
    ASKS_FIGURE = re.compile(r"多少|几[个天年月日次倍度元成]|百分之几|比例|上限|下限|多大|多长|多高|多久|税率|费率")
    ASKED_UNITS = (
        "个工作日|个月|分贝|毫克|微克|千克|公斤|克|学时|小时|分钟|周岁|千瓦时|万千瓦|千瓦|兆瓦|千伏|平方米"
        "|平方公里|公顷|亩|公里|米|吨|元|天|日|年|月|倍|度"
    )
    ASKED_UNIT = re.compile(rf"(?:多少|几)({ASKED_UNITS})|百分之(?:几|多少)")
    SAME_UNIT: ClassVar = {
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
    LEADING_NUMBER = re.compile(r"[0-9０-９]+|[零〇一二三四五六七八九十两百千万]+")
    # query/forms.py: what a time limit is written in
    TIME_LIMIT_RE = re.compile(r"[0-9一二三四五六七八九十]+个?(?:日|天|月|年|小时|工作日)|期限|日内|提前")

    @staticmethod
    def figure_values(text: str, pattern: re.Pattern[str]) -> set[int]:
        values = set()
        for match in pattern.finditer(text):
            lead = Old.LEADING_NUMBER.match(match.group(0))
            if lead:
                with contextlib.suppress(ValueError):
                    values.add(Old.chinese_to_int(lead.group(0)))
        return values

    @staticmethod
    def figure_in_unit(unit: str, spans: str) -> bool:
        if unit == "%" and "百分之" in spans:
            return True
        pattern = f"(?:{Old.LEADING_NUMBER.pattern})\\s*(?:{Old.SAME_UNIT.get(unit, re.escape(unit))})"
        return re.search(pattern, spans) is not None


# --- what old and new read, check by check ------------------------------------------------------------------------

_NUMERAL_RUN = re.compile(r"[0-9０-９零〇○Ｏ一二三四五六七八九十百千万两]+")
# every unit the old check knew a question to ask in; one it did not know (几个小时) left the check vacuous, which
# question_rows compares
_UNITS_ASKED = sorted({*Old.ASKED_UNITS.split("|"), "%"})


@dataclass(frozen=True)
class Row:
    """One way old and new disagree: the check, what was read (a numeral, a date, a line's label …) and what each
    side made of it. `where` lists the documents or question sets it occurs in."""

    check: str
    found: str
    old: str
    new: str


def _safe(function, *args):  # type: ignore[no-untyped-def]
    try:
        return function(*args)
    except ValueError:
        return "ValueError"


def _groups(m: re.Match[str] | None, *names: str) -> str:
    return "-" if m is None else "|".join(f"{n}={m.group(n)}" for n in names)


def numeral_rows(text: str) -> Iterator[Row]:
    """Every numeral run: the old label/figure parser and the old date-part parsers against parse_numeral."""
    for run in sorted(set(_NUMERAL_RUN.findall(text))):
        new = _safe(numerals.parse_numeral, run)
        old = _safe(Old.chinese_to_int, run)
        if old != "ValueError" and old != new:
            yield Row("chinese_to_int", run, str(old), str(new))
        small = Old.small_number(run) if Old.SMALL_RE.fullmatch(run) else None
        if small is not None and small != new:
            yield Row("date small number", run, str(small), str(new))
        year = Old.year(run) if Old.YEAR_RE.fullmatch(run) else None
        if year is not None and year != new:
            yield Row("date year", run, str(year), str(new))


def _iso_old(m: re.Match[str]) -> str | None:
    parts = Old.parse_date_parts(m.group("y"), m.group("m"), m.group("d"))
    if parts is None or parts[1] is None or parts[2] is None:
        return None
    try:
        return dt.date(parts[0], parts[1], parts[2]).isoformat()
    except ValueError:
        return None


def date_rows(text: str) -> Iterator[Row]:
    """Dates: text/dates.py's, text/inference.py's and query/temporal.py's patterns, chunking's header lines and
    the count of days of an entry-into-force clause."""
    old = {m.span(): (m.group(0), _iso_old(m)) for m in Old.DATE_RE.finditer(text)}
    new = {
        m.span(): (m.group(0), numerals.to_iso(m.group("y"), m.group("m"), m.group("d")))
        for m in numerals.DATE_RE.finditer(text)
    }
    for span in old.keys() | new.keys():
        a, b = old.get(span, ("", None)), new.get(span, ("", None))
        if a[1] != b[1]:
            yield Row("date", a[0] or b[0], str(a[1]), str(b[1]))
    arabic = {m.span(): m.group(0) for m in Old.INFERENCE_DATE_RE.finditer(text)}
    for span in arabic.keys() | new.keys():
        if span not in new or span not in arabic:
            found = arabic.get(span) or new[span][0]
            yield Row("inference date", found, "date" if span in arabic else "-", "date" if span in new else "-")
    a_matches = {m.span(): m for m in Old.TEMPORAL_DATE_RE.finditer(text)}
    b_matches = {m.span(): m for m in temporal._DATE_RE.finditer(text)}
    for span in a_matches.keys() | b_matches.keys():
        a, b = a_matches.get(span), b_matches.get(span)
        pa = Old.parse_date_parts(a.group("y"), a.group("m"), a.group("d")) if a else "-"
        pb = numerals.parse_date_parts(b.group("y"), b.group("m"), b.group("d")) if b else "-"
        if (pa, a and a.group("part")) != (pb, b and b.group("part")):
            yield Row("temporal date", text[span[0] : span[1]], str(pa), str(pb))
    for line in text.split("<!-- INFO END -->")[0].splitlines() if "<!-- INFO END -->" in text else ():
        a, b = bool(Old.PROMULGATION_RE.search(line)), bool(chunking._PROMULGATION_RE.search(line))
        if a != b:
            yield Row("header line", line[:60], str(a), str(b))
    old_days = {
        m.span(): Old.small_number(m.group("days")) if m.group("days") else None for m in Old.CLAUSE_RE.finditer(text)
    }
    new_days = {
        m.span(): _safe(numerals.parse_numeral, m.group("days")) if m.group("days") else None
        for m in dates.CLAUSE_RE.finditer(text)
    }
    for span in old_days.keys() | new_days.keys():
        a, b = old_days.get(span, "-"), new_days.get(span, "-")
        if a != b:
            yield Row("days after promulgation", text[span[0] : span[1]], str(a), str(b))


_GLUED = re.compile(
    rf"^[ \t]*({numerals.unnamed(numerals.ARTICLE_LABEL)}|{numerals.unnamed(numerals.HEADING_LABEL)})\s+"
)


def _spaced(before: str, after: str) -> str:
    return "space restored" if after != before else "as read"


def label_rows(text: str) -> Iterator[Row]:
    """Article, heading, item and appendix labels, cross-references, and the label patterns of the OCR and PDF
    readers, the local generator and the date exceptions' parts, line by line of the normalised text."""
    for line in normalize(text).text.splitlines():
        for name, a, b, groups in (
            ("article", Old.ARTICLE_RE, legal.ARTICLE_RE, ("label", "num", "sub")),
            ("heading", Old.HEADING_RE, legal.HEADING_RE, ("label", "num", "kind", "name")),
            ("appendix", Old.APPENDIX_RE, legal.APPENDIX_RE, ("label",)),
            ("item", Old.ITEM_RE, legal.ITEM_RE, ("label",)),
        ):
            x, y = _groups(a.match(line), *groups), _groups(b.match(line), *groups)
            if x != y:
                yield Row(name, line[:40], x, y)
        old_refs = [
            (m.span(), Old.chinese_to_int(m.group("num")), m.group("sub"), m.group("para"))
            for m in Old.CROSS_REF_RE.finditer(line)
        ]
        new_refs = [
            (m.span(), numerals.parse_numeral(m.group("num")), m.group("sub"), m.group("para"))
            for m in legal.CROSS_REF_RE.finditer(line)
        ]
        if old_refs != new_refs:
            yield Row("cross reference", line[:40], str(old_refs), str(new_refs))
        glued = _GLUED.sub(r"\1", line)  # the label as OCR returns it, the space lost
        for variant in {line, glued}:
            a_text, b_text = Old.restore_label_space(variant), ocr_text.restore_label_space(variant)
            if a_text != b_text:  # by the label's shape (第九条之九): one row for every such label
                label = _GLUED.match(line)
                shape = re.sub(f"[{numerals.LABEL_DIGITS}]+", "九", label.group(1) if label else variant[:8])
                yield Row("ocr label space", shape, _spaced(variant, a_text), _spaced(variant, b_text))
        for name, a, b in (
            ("pdf paragraph start", Old.PDF_PARAGRAPH_START_RE, pdf_text._PARAGRAPH_START_RE),
            ("pdf heading line", Old.PDF_HEADING_LINE_RE, pdf_text._HEADING_LINE_RE),
        ):
            if bool(a.match(line)) != bool(b.match(line)):
                yield Row(name, line[:40], str(bool(a.match(line))), str(bool(b.match(line))))
        for name, a, b in (
            ("generator article", Old.GENERATOR_ARTICLE_RE, generator._ARTICLE_LABEL),
            ("generator heading", Old.GENERATOR_HEADING_RE, generator._HEADING_NUMBER),
        ):
            if a.sub("", line, count=1) != b.sub("", line, count=1):
                yield Row(name, line[:40], a.sub("", line, count=1)[:20], b.sub("", line, count=1)[:20])
    for m in dates.CLAUSE_RE.finditer(text):  # the parts an entry-into-force clause names (本法第五章自…施行)
        scope = m.group("subject")
        a_parts = Old.METADATA_PART_RE.findall(scope)
        b_parts = [p.group(0) for p in metadata._HEADING_LABEL_RE.finditer(scope)]
        if a_parts != b_parts:
            yield Row("date exception parts", scope, str(a_parts), str(b_parts))


def _shape(token: str) -> str:
    """A figure with its number written as 9 (digits) or 九 (a Chinese numeral): 5公顷 and 10公顷 read alike."""
    return re.sub(f"[{numerals.FIGURE_DIGITS}]+", "九", re.sub(r"[0-9０-９.．]+", "9", token))


# the old reader took 万 and 亿 before a unit's base (万元, 万千瓦) as part of the unit, valuing 10万元 at 10 beside
# 十万元 at 100000; the new one counts them in the value (10万元 → 100000, so 50万元 equals 五十万元 and 10万元 is
# not 10元). The old values are scaled alike before comparing, so that this one change is not a row per amount
_MYRIAD_AFTER_DIGITS = re.compile(r"([0-9０-９]+(?:[.．][0-9０-９]+)?)\s*([万亿])")


def _old_values(text: str, pattern: re.Pattern[str]) -> set[int]:
    values = set()
    for m in pattern.finditer(text):
        found = Old.figure_values(m.group(0), pattern)
        scaled = _MYRIAD_AFTER_DIGITS.match(m.group(0))
        if scaled:
            found = {int(float(scaled.group(1).replace("．", ".")) * (10_000 if scaled.group(2) == "万" else 10**8))}
        values |= found
    return values


def figure_text_rows(text: str) -> Iterator[Row]:
    """Figures in a regulation's text, sentence by sentence: each figure's value (a figure gained or lost by its
    shape, 9公顷), whether the sentence states one in each unit a question can ask for, and the time limits of
    question forms."""
    for sentence in re.split(r"(?<=[。；\n])", text):
        for token in {m.group(0) for p in (Old.FIGURE, figures.FIGURE) for m in p.finditer(sentence)}:
            x, y = _old_values(token, Old.FIGURE), figures.figure_values(token)
            if x != y:
                yield (
                    Row("figure", token, str(sorted(x)), str(sorted(y)))
                    if x and y
                    else Row("figure", _shape(token), "figure" if x else "-", "figure" if y else "-")
                )
        for unit in _UNITS_ASKED:
            if not any(ch in sentence for ch in _unit_finals(unit)):
                continue  # neither side can find a figure in this unit (a shortcut: the checks below are slow)
            x, y = Old.figure_in_unit(unit, sentence), figures.figure_in_units((unit,), sentence)
            if x != y:
                yield Row(f"figure in {unit}", _shape(_unit_token(unit, sentence)), str(x), str(y))
        a, b = (
            Old.TIME_LIMIT_RE.search(sentence),
            next(f for f in forms.forms() if f.name == "time_limit").answered.search(sentence),
        )
        if bool(a) != bool(b):
            yield Row("time limit", _shape((a or b).group(0)), str(bool(a)), str(bool(b)))  # type: ignore[union-attr]


@functools.cache
def _unit_finals(unit: str) -> frozenset[str]:
    """The last characters of every unit either side accepts for `unit` (with 百分之 for %)."""
    old = re.sub(r"[?\[\]]", "", Old.SAME_UNIT.get(unit, unit)).split("|")
    new = units.answering_pattern(unit).replace("\\", "").split("|")
    return (
        frozenset(name[-1] for name in [*old, *new, "百分之"] if name)
        if unit == "%"
        else frozenset(name[-1] for name in [*old, *new] if name)
    )


def _unit_token(unit: str, sentence: str) -> str:
    for pattern in (
        f"(?:{Old.LEADING_NUMBER.pattern})\\s*(?:{Old.SAME_UNIT.get(unit, re.escape(unit))})",
        figures._unit_figure(unit).pattern,
    ):
        m = re.search(pattern, sentence)
        if m:
            return m.group(0)
    return sentence[:20]


def question_rows(question: str) -> Iterator[Row]:
    """What a question asks and states: a figure asked, the units asked in, the values of the figures it states."""
    a, b = bool(Old.ASKS_FIGURE.search(question) or Old.ASKED_UNIT.search(question)), figures.asks_figure(question)
    if a != b:
        yield Row("asks figure", question, str(a), str(b))
    units_a = tuple(m.group(1) or "%" for m in Old.ASKED_UNIT.finditer(question))
    if units_a != figures.asked_units(question):
        yield Row("asked units", question, str(units_a), str(figures.asked_units(question)))
    x, y = _old_values(question, Old.STATED_FIGURE), figures.stated_figure_values(question)
    if x != y:
        yield Row("stated figures", question, str(sorted(x)), str(sorted(y)))


# --- the sources and the comparison -------------------------------------------------------------------------------


def _documents(folder: Path) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))}


def _questions(files: list[Path]) -> dict[str, str]:
    out = {}
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                out[f"{path.stem}/{q['id']}"] = q["question"]
    return out


def disagreements(documents: dict[str, str], questions: dict[str, str]) -> dict[Row, set[str]]:
    """Every disagreement, with the documents or question sets it occurs in."""
    found: dict[Row, set[str]] = {}
    for doc_id, text in documents.items():
        for rows in (numeral_rows(text), date_rows(text), label_rows(text), figure_text_rows(text)):
            for row in rows:
                found.setdefault(row, set()).add(doc_id)
    for key, question in questions.items():
        for rows in (numeral_rows(question), date_rows(question), question_rows(question)):
            for row in rows:
                found.setdefault(row, set()).add(key.split("/")[0])
    return found


@functools.cache
def listed() -> dict[Row, tuple[str, str, str]]:
    """The reviewed disagreements: Row → (where, right, why)."""
    out = {}
    lines = [line for line in LISTED.read_text(encoding="utf-8").splitlines() if line.strip() and line[0] != "#"]
    for line in lines[1:]:  # the first names the columns
        check, found, old, new, where, right, why = line.split("\t")
        out[Row(check, found, old, new)] = (where, right, why)
    return out


def _compare(documents: dict[str, str], questions: dict[str, str]) -> None:
    found = disagreements(documents, questions)
    scanned = set(documents) | {key.split("/")[0] for key in questions}
    expected = {}
    for row, (where, right, why) in listed().items():
        assert right in ("old", "new", "neither") and why, row
        here = set(where.split(",")) & scanned
        if here:
            expected[row] = here
    unlisted = {row: sorted(where) for row, where in found.items() if row not in expected}
    gone = {row: sorted(where) for row, where in expected.items() if row not in found}
    moved = {
        row: (sorted(expected[row]), sorted(where)) for row, where in found.items() if expected.get(row, where) != where
    }
    assert not unlisted, f"old and new disagree where the list does not say which is right: {unlisted}"
    assert not gone, f"listed disagreements that no longer occur: {gone}"
    assert not moved, f"listed disagreements found in other documents (listed, found): {moved}"


def test_the_sample_corpus_and_the_bench_questions_read_as_listed() -> None:
    _compare(_documents(SAMPLE / "docs"), _questions(sorted((ROOT / "bench" / "questions").glob("*.jsonl"))))


@pytest.mark.skipif(
    not CORPUS.is_dir() or not EVAL.is_dir(), reason="the shared corpus and eval sets are not here (CI)"
)
def test_the_whole_corpus_and_the_eval_sets_read_as_listed() -> None:
    files = sorted(EVAL.glob("*.jsonl")) + sorted((ROOT / "bench" / "questions").glob("*.jsonl"))
    _compare(_documents(CORPUS), _questions(files))


def main() -> None:  # pragma: no cover - prints the table for review: python tests/unit/test_numerals_differential.py
    documents = _documents(CORPUS if CORPUS.is_dir() else SAMPLE / "docs")
    questions = _questions(sorted(EVAL.glob("*.jsonl")) + sorted((ROOT / "bench" / "questions").glob("*.jsonl")))
    rows = disagreements(documents, questions)
    counts = Counter(r.check for r in rows)
    print(counts)
    for row, where in sorted(rows.items(), key=lambda kv: (kv[0].check, kv[0].found)):
        print(row.check, row.found.replace("\n", " "), row.old, row.new, ",".join(sorted(where)[:5]), sep="\t")


if __name__ == "__main__":
    main()
