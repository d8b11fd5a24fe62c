"""The layout of an export, independent of its format: headings, paragraphs (text and links), verbatim quotes,
tables. Builders (answer.py, versions.py, check_report.py) make a Memo; docx.py and markdown.py write it.

A quote is kept as one block of verbatim text (its line breaks included): the writers never re-wrap, escape or
trim it, so the words a lawyer pastes are the regulation's own, character for character.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Link:
    text: str
    url: str


Inline = str | Link


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 1


@dataclass(frozen=True)
class Paragraph:
    """Text and links in a row; `label` is set in bold before them (引用：, 版本状态：); `small` for notes."""

    parts: tuple[Inline, ...]
    label: str | None = None
    small: bool = False


@dataclass(frozen=True)
class Quote:
    """A verbatim quote of a regulation, with its number in the list of quotes."""

    text: str
    number: int | None = None


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Rule:
    """A separator before the closing notes."""


Block = Heading | Paragraph | Quote | Table | Rule


@dataclass(frozen=True)
class Memo:
    title: str
    blocks: tuple[Block, ...] = field(default_factory=tuple)


def para(*parts: Inline, label: str | None = None, small: bool = False) -> Paragraph:
    return Paragraph(tuple(p for p in parts if p != ""), label, small)


DISCLAIMER = "引文均为法规原文的逐字摘录，请以官方公布的文本为准；本文件由 regrag 生成，不构成法律意见。"
