"""The date of a lawyer's document, which is the day its citations are checked as of: 日期：2024年12月10日 (or
日期: 2024-12-10) at its top or bottom, else a line that is only a date among its first or last lines (the date
under the signature: 二〇二四年十二月十日, 2024-12-10, 2024/12/10, 2024.12.10). A date inside a sentence
(2025年3月修订的) is never the document's date."""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrag.text.numerals import DATE as DATE_PATTERN
from regrag.text.numerals import to_iso

EDGE_LINES = 6  # non-empty lines at each end where a document's date stands
_NUMERIC = r"(?P<y>[0-9]{4})\s*[-/.]\s*(?P<m>[0-9]{1,2})\s*[-/.]\s*(?P<d>[0-9]{1,2})"
_NUMERIC_2 = _NUMERIC.replace("?P<y>", "?P<y2>").replace("?P<m>", "?P<m2>").replace("?P<d>", "?P<d2>")
_ANY_DATE = rf"(?:{DATE_PATTERN}|{_NUMERIC_2})"
_LABELLED_RE = re.compile(rf"(?:日期|时间|落款|签发日期|发文日期)\s*[:：]\s*{_ANY_DATE}")
_DATE_LINE_RE = re.compile(rf"^[\s#*>]*(?:于|签发于)?\s*{_ANY_DATE}\s*(?:[（(][^）)]*[）)])?\s*$")


@dataclass(frozen=True)
class DocumentDate:
    date: str  # ISO
    text: str  # the words it was read from
    start: int
    end: int


def _iso(m: re.Match[str]) -> str | None:
    if m.group("y"):
        return to_iso(m.group("y"), m.group("m"), m.group("d"))
    return to_iso(m.group("y2"), m.group("m2"), m.group("d2"))


def document_date(text: str) -> DocumentDate | None:
    """The document's own date (module docstring), or None when it states none."""
    lines = []
    pos = 0
    for line in text.split("\n"):
        if line.strip():
            lines.append((pos, line))
        pos += len(line) + 1
    edges = lines[:EDGE_LINES] + lines[-EDGE_LINES:] if len(lines) > 2 * EDGE_LINES else lines
    for start, line in edges:
        m = _LABELLED_RE.search(line)
        if m and (day := _iso(m)):
            return DocumentDate(day, m.group(0), start + m.start(), start + m.end())
    # a line that is only a date: the one under the signature (bottom) first, then one under the heading
    for start, line in [*reversed(lines[-EDGE_LINES:]), *lines[:EDGE_LINES]]:
        m = _DATE_LINE_RE.match(line)
        if m and (day := _iso(m)):
            return DocumentDate(day, line.strip(), start, start + len(line))
    return None
