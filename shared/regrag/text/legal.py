"""Legal structure of Chinese regulations: 编/分编/章/节 headings, 第X条 articles, numerals, cross-references.

All patterns run on normalised text (see `normalize`), where U+3000 and NBSP are already plain spaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMERAL = "零〇一二三四五六七八九十百千两"
_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_MYRIAD = "万"  # not in article labels (_NUMERAL); in figures: 一万二千五百元

# An article starts a line: optional indent or Markdown marks, 第X条 (or 第X条之Y), then whitespace or the end
# of the line. The trailing whitespace is what tells "第二十条 电力..." (an article) from "第二十条规定的..." (a
# reference that a PDF line wrap happened to put at the start of a line).
ARTICLE_RE = re.compile(
    rf"^[ \t]*(?:#+[ \t]*)?(?P<label>第(?P<num>[{_NUMERAL}]+|[0-9]+)条(?:之(?P<sub>[{_NUMERAL}]+))?)(?=\s|$)",
    re.M,
)
# A numbered heading: 第X编 / 第X分编 / 第X章 / 第X节, then a short name without sentence punctuation.
HEADING_RE = re.compile(
    rf"^[ \t]*(?P<marks>#+[ \t]*)?(?P<label>第(?P<num>[{_NUMERAL}]+|[0-9]+)(?P<kind>分编|编|章|节))"
    r"(?:[ \t]+(?P<name>[^\n。；，,;]{0,40}))?[ \t]*$",
    re.M,
)
# Headings without a number that regulations use; outside Markdown they count only as a line of their own.
NAMED_HEADING_RE = re.compile(r"^[ \t]*(?P<marks>#+[ \t]*)?(?P<name>总则|分则|附则|序言)[ \t]*$")
MARKDOWN_HEADING_RE = re.compile(r"^[ \t]*(?P<marks>#{1,6})[ \t]+(?P<name>\S.*?)[ \t]*$")
# Material after the last article: 附： / 附件 / 附表二 / 附录 / 附件：名称, on a line of its own.
APPENDIX_RE = re.compile(
    rf"^[ \t]*(?:#+[ \t]*)?(?P<label>附(?:件|表|录)?[{_NUMERAL}0-9]*)[ \t]*(?:[:：][^\n。]{{0,40}})?$"
)
# Numbered items used by texts without articles: （一） (一) 一、 1. 1、
ITEM_RE = re.compile(rf"^[ \t]*(?P<label>[（(][{_NUMERAL}0-9]+[）)]|[{_NUMERAL}]+、|[0-9]+[、.．])")
# "依照本法第二十条", "本条例第三十五条第二款", "第十条、第十一条": references inside a sentence.
CROSS_REF_RE = re.compile(
    rf"(?P<scope>本法|本条例|本规定|本办法|本细则|本决定)?第(?P<num>[{_NUMERAL}]+)条(?:之(?P<sub>[{_NUMERAL}]+))?"
    rf"(?:第(?P<para>[{_NUMERAL}]+)款)?"
)

HEADING_LEVELS = {"编": 1, "分编": 2, "章": 3, "节": 4}
NAMED_HEADING_LEVEL = 3  # 总则 / 附则 stand where a 章 would


def chinese_to_int(numeral: str) -> int:
    """Convert a Chinese (or Arabic) numeral as used in article labels and figures to an int.

    Handles 十二 → 12, 二十 → 20, 一百零五 → 105, 一千二百六十 → 1260, 两千 → 2000, 一万二千五百 → 12500, and
    digit strings (full-width too). Raises ValueError on anything else.
    """
    if numeral.isdigit():
        return int(numeral)
    if not numeral or any(ch not in _DIGITS and ch not in _UNITS and ch != _MYRIAD for ch in numeral):
        raise ValueError(f"not a Chinese numeral: {numeral!r}")
    total, section, current = 0, 0, 0
    for ch in numeral:
        if ch in _DIGITS:
            current = _DIGITS[ch]
        elif ch == _MYRIAD:  # 一万二千: what came before counts in ten thousands
            total += (section + current) * 10000
            section = current = 0
        else:
            section += (current or 1) * _UNITS[ch]  # 十二: the leading 一 is implied
            current = 0
    return total + section + current


def int_to_chinese(value: int) -> str:
    """The numeral that regulations use in labels: 1 → 一, 10 → 十, 20 → 二十, 105 → 一百零五."""
    if value <= 0:
        raise ValueError("article numbers start at 1")
    digits = "零一二三四五六七八九"
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


def article_label(main: int, sub: int = 0) -> str:
    """ArticleNumber parts → the label as regulations write it: (20, 1) → '第二十条之一'."""
    label = f"第{int_to_chinese(main)}条"
    return f"{label}之{int_to_chinese(sub)}" if sub else label


@dataclass(frozen=True)
class CrossReference:
    """A reference to another article inside a sentence, with its span in the text it was found in."""

    label: str
    start: int
    end: int
    scope: str | None
    # the span of the article number alone (第二十条 in 本法第二十条第二款): what a link should cover
    label_start: int = 0
    label_end: int = 0


def find_cross_references(text: str) -> list[CrossReference]:
    """References to articles of the same document ('依照本法第二十条'), not article starts.

    A 第X条 that starts a line and is followed by whitespace is the article itself, not a reference.
    References to another act ('《电力法》第十条') are skipped: they name a different document.
    """
    refs: list[CrossReference] = []
    for m in CROSS_REF_RE.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not text[line_start : m.start()].strip(" \t#") and not m.group("scope"):
            after = text[m.end() : m.end() + 1]
            if after == "" or after.isspace():
                continue  # the article's own label
        before = text[max(0, m.start() - 1) : m.start()]
        if before == "》" and not m.group("scope"):
            continue  # 《某法》第十条: another document
        main = chinese_to_int(m.group("num"))
        sub = chinese_to_int(m.group("sub")) if m.group("sub") else 0
        label = article_label(main, sub)
        label_end = m.end("sub") if m.group("sub") else m.end("num") + 1  # + 1: the 条 after the number
        refs.append(CrossReference(label, m.start(), m.end(), m.group("scope"), m.start("num") - 1, label_end))
    return refs


_LOOSE_ARTICLE_RE = re.compile(
    rf"^\s*(?:第\s*)?(?P<num>[{_NUMERAL}]+|[0-9０-９]+)\s*(?:条)?\s*(?:之\s*(?P<sub>[{_NUMERAL}]+|[0-9０-９]+))?\s*$"
)


def canonical_article_label(raw: str) -> str | None:
    """An article as a user types it (第3条, 3, 第三条, 第十条之一, 10之1) → the label regulations use (第三条,
    第十条之一); None when it names no article number."""
    import unicodedata

    m = _LOOSE_ARTICLE_RE.match(unicodedata.normalize("NFKC", raw))
    if m is None:
        return None
    try:
        main = chinese_to_int(m.group("num"))
        sub = chinese_to_int(m.group("sub")) if m.group("sub") else 0
    except ValueError:
        return None
    return article_label(main, sub) if main > 0 else None
