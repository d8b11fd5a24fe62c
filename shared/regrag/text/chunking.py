"""Split a regulation into chunks along its legal structure.

The article (第X条, 第X条之一) is the unit of identity and citation. 编/分编/章/节 headings give each article a
heading path and never become chunks. An article longer than `max_chars` is split at 款 (paragraph), then at
sentence boundaries, and every part keeps the article label. Texts without articles fall back to paragraph
chunks labelled by their item numbers. Material after the last article (附表, 附件) becomes appendix chunks.

Everything runs on the normalised text; spans are reported in source offsets (`NormalizedText.to_source`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from regrag.text.legal import (
    APPENDIX_RE,
    ARTICLE_RE,
    HEADING_LEVELS,
    HEADING_RE,
    ITEM_RE,
    MARKDOWN_HEADING_RE,
    NAMED_HEADING_LEVEL,
    NAMED_HEADING_RE,
)
from regrag.text.normalize import NormalizedText, squash_spaces
from regrag.text.numerals import DATE, unnamed
from regrag.text.sentences import sentence_spans

KIND_ARTICLE = "article"
KIND_PREAMBLE = "preamble"
KIND_PARAGRAPH = "paragraph"
KIND_APPENDIX = "appendix"

DEFAULT_MAX_CHARS = 800

# a header line: one that starts with a date, or a date the version's history follows (…通过, …修正)
_PROMULGATION_RE = re.compile(
    rf"(?:^[ \t]*[（(]?{unnamed(DATE)})|(?:{unnamed(DATE)}.{{0,80}}(?:通过|公布|发布|修正|修订|批准|施行|颁布|废止))"
)
_COMMENT_RE = re.compile(r"^[ \t]*<!--.*-->[ \t]*$")
_INFO_END = "<!-- INFO END -->"


@dataclass(frozen=True)
class Line:
    """One line of the normalised text: its text and half-open span (normalised offsets, no newline)."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Segment:
    """A chunk before it becomes a domain object: what it is, where it is, and where it sits."""

    kind: str
    label: str
    part: int
    parts: int
    heading_path: tuple[str, ...]
    start: int  # source offsets
    end: int
    ordinal: int  # position of the unit (article, paragraph, appendix) in the document, from 0


@dataclass
class Structure:
    """What the chunker found besides the segments."""

    title: str | None = None
    header_lines: list[str] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)


@dataclass
class _Unit:
    kind: str
    label: str
    heading_path: tuple[str, ...]
    lines: list[Line]


def iter_lines(text: str) -> Iterator[Line]:
    """Lines of `text` with their offsets."""
    pos = 0
    for raw in text.split("\n"):
        yield Line(raw, pos, pos + len(raw))
        pos += len(raw) + 1


def _heading(line: str, markdown: bool) -> tuple[int, str] | None:
    """(level, heading text) if the line is a structural heading, else None."""
    m = HEADING_RE.match(line)
    if m:
        name = squash_spaces(m.group("name") or "")
        label = m.group("label")
        return HEADING_LEVELS[m.group("kind")], f"{label} {name}".strip()
    m = NAMED_HEADING_RE.match(line)
    if m:
        return NAMED_HEADING_LEVEL, m.group("name")
    if markdown:
        m = MARKDOWN_HEADING_RE.match(line)
        if m and len(m.group("marks")) >= 2 and not ARTICLE_RE.match(line):
            return NAMED_HEADING_LEVEL, squash_spaces(m.group("name"))
    return None


def _title_from(line: str) -> str:
    return squash_spaces(line.strip().lstrip("#").strip())


def split_structure(norm: NormalizedText, max_chars: int = DEFAULT_MAX_CHARS, markdown: bool = False) -> Structure:
    """Find title, header lines and chunk segments of a regulation.

    Args:
        norm: the normalised document text with its map to the source.
        max_chars: longest chunk; longer articles are split at 款, then sentence boundaries.
        markdown: whether `#` lines are headings (Markdown sources); numbered headings are found either way.
    """
    scanner = _Scanner(list(iter_lines(norm.text)), max_chars, markdown)
    scanner.scan()
    out = scanner.out
    paragraph_no = 0
    for ordinal, unit in enumerate(scanner.units):
        if unit.kind in (KIND_PREAMBLE, KIND_PARAGRAPH) and not unit.label:
            paragraph_no += 1
            unit.label = "序言" if unit.kind == KIND_PREAMBLE else f"第{paragraph_no}段"
        out.segments.extend(_split_unit(norm, unit, ordinal, max_chars))
    return out


class _Scanner:
    """One pass over the lines: title, header, then articles under their headings, appendices after them.

    State: whether the header is still running, whether an article (or the appendix) has started, the unit
    being filled and the current 编/章/节 heading path.
    """

    def __init__(self, lines: list[Line], max_chars: int, markdown: bool) -> None:
        self.lines, self.max_chars, self.markdown = lines, max_chars, markdown
        self.out = Structure()
        self.units: list[_Unit] = []
        self.path: dict[int, str] = {}
        self.has_marker = markdown and any(ln.text.strip() == _INFO_END for ln in lines)
        self.has_articles = any(ARTICLE_RE.match(ln.text) for ln in lines)
        self.in_header = True
        self.seen_article = False
        self.in_appendix = False
        self.current: _Unit | None = None

    def open_unit(self, kind: str, label: str, first: Line) -> _Unit:
        unit = _Unit(kind, label, tuple(self.path[k] for k in sorted(self.path)), [first])
        self.units.append(unit)
        self.current = unit
        return unit

    def scan(self) -> None:
        for ln in self.lines:
            stripped = ln.text.strip()
            if not stripped:
                continue
            if _COMMENT_RE.match(ln.text):
                if stripped == _INFO_END:
                    self.in_header = False
                continue
            if self.out.title is None:
                self.out.title = _title_from(ln.text)
                continue
            if self.in_header:
                # Without an explicit end marker the header is the run of promulgation lines after the title.
                if self.has_marker or _PROMULGATION_RE.search(ln.text):
                    self.out.header_lines.append(stripped)
                    continue
                self.in_header = False
            if self.in_appendix:
                self.appendix_line(ln)
            else:
                self.body_line(ln)

    def appendix_line(self, ln: Line) -> None:
        m = APPENDIX_RE.match(ln.text)
        if m and self.current is not None and len(self.current.lines) > 1:
            self.open_unit(KIND_APPENDIX, m.group("label").strip(), ln)
        else:
            assert self.current is not None
            self.current.lines.append(ln)

    def body_line(self, ln: Line) -> None:
        text = ln.text
        article = ARTICLE_RE.match(text)
        if article:
            self.seen_article = True
            self.open_unit(KIND_ARTICLE, article.group("label"), ln)
            return
        heading = _heading(text, self.markdown)
        if heading:
            level, name = heading
            self.path = {k: v for k, v in self.path.items() if k < level}
            self.path[level] = name
            self.current = None
            return
        if self.seen_article:
            m = APPENDIX_RE.match(text)
            if m:
                self.in_appendix = True
                self.path = {}
                self.open_unit(KIND_APPENDIX, m.group("label").strip(), ln)
                return
        current = self.current
        if current is not None and current.kind == KIND_ARTICLE:
            current.lines.append(ln)  # a further 款 or 项 of the article
            return
        # Text outside articles: a preamble before them, or the body of a text that has none.
        kind = KIND_PREAMBLE if self.has_articles else KIND_PARAGRAPH
        item = ITEM_RE.match(text)
        size = sum(len(x.text) for x in current.lines) if current is not None else 0
        if current is not None and current.kind == kind and not item and size + len(text) <= self.max_chars:
            current.lines.append(ln)
        else:
            self.open_unit(kind, item.group("label") if item else "", ln)


def _split_unit(norm: NormalizedText, unit: _Unit, ordinal: int, max_chars: int) -> list[Segment]:
    """Cut one unit into parts of at most `max_chars`, at paragraph, then sentence, then hard boundaries."""
    pieces: list[tuple[int, int]] = []  # normalised spans, each ≤ max_chars
    for ln in unit.lines:
        start = ln.start + (len(ln.text) - len(ln.text.lstrip()))
        end = ln.start + len(ln.text.rstrip())
        if end - start <= max_chars:
            pieces.append((start, end))
            continue
        for s, e in sentence_spans(norm.text[start:end]):
            s, e = start + s, start + e
            while e - s > max_chars:
                pieces.append((s, s + max_chars))
                s += max_chars
            pieces.append((s, e))

    parts: list[tuple[int, int]] = []
    for s, e in pieces:
        if parts and e - parts[-1][0] <= max_chars:
            parts[-1] = (parts[-1][0], e)
        else:
            parts.append((s, e))
    segments = []
    for i, (s, e) in enumerate(parts):
        src_start, src_end = norm.to_source(s, e)
        segments.append(Segment(unit.kind, unit.label, i, len(parts), unit.heading_path, src_start, src_end, ordinal))
    return segments
