"""From OCR lines to regulation text: layout noise removed, wrapped lines rejoined, every character placed.

An engine returns boxes of text in reading order; a regulation needs paragraphs. This module
- merges fragments of one visual row (an engine often splits "第一章  总则" at the gap) with a space where the
  page shows a gap;
- drops layout noise: page numbers ("— 3 —", "-3-", "第3页", "3/10") at the top or bottom of a page, running
  headers and footers (the same line in the top or bottom band of at least half the pages), the 红头 issuer
  banner and 文号 above the title on the first page, short fragments lying on top of other text (seal residue)
  and lines below a confidence floor;
- decides where paragraphs start from the geometry: official documents indent each paragraph by two
  characters (GB/T 9704), so a line starts a paragraph when it is indented relative to the lines around it or
  the line before it stopped short of the right margin; anything else continues the paragraph, across page
  breaks too;
- undoes the engine's typical slips in Chinese text (`tidy_line`: specks read as dots, ASCII punctuation
  after Chinese characters, a final 。 read as "O");
- puts back the space after a paragraph's leading 第X条 / 第X章 label that OCR drops (the printed page has a
  gap there, and the chunker recognises an article by "第X条" followed by white space);
- keeps every article label: a line that opens with 第X条 is never dropped as unsure or as residue (a label
  read with low confidence is still the label; `scans` re-reads such lines), and a line that opens with the
  one article number the sequence lacks starts that article even where the geometry did not say so
  (`restore_article_starts`: otherwise its text is cited under the article before it).

`assemble` then joins placed lines of any source (OCR pages and PDF text-layer pages alike) into the stored
text and records each page's span and each OCR line's span, so quotes map back to pages and boxes.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from regrag.domain.ocr import Box, LineSpan, OcrLine, OcrPage, PageSpan
from regrag.text.numerals import ARTICLE_LABEL, HEADING_LABEL, LABEL_NUMBER, parse_numeral, unnamed

BAND = 0.12  # top and bottom bands (fractions of the page height) where headers, footers and folios live
MIN_CONFIDENCE = 0.5  # lines read with less confidence are dropped (stamps, smudges, noise)
RESIDUE_MAX_CHARS = 8  # a fragment this short lying on top of other text is seal or stamp residue
# The layout rules below, in line heights (the body type's) and page fractions; with them bench/ocr_accuracy.py finds
# every article label of its four GB/T 9704 fixtures (clean, 红头 with a seal, skewed and noisy, grey JPEG):
SAME_ROW = 0.5  # fragments whose centres are less than half a line height apart share a row
ON_TOP = 0.3  # a box covering 30 % of another lies on top of it (seal text over a line), not beside it
WORD_GAP = 0.5  # a gap wider than half a line height between fragments of a row is a space
BANNER_TOP = 0.4  # the 红头 banner and 文号 sit in the top 40 % of the first page,
BANNER_LINES = 3  # among its first three lines,
BANNER_HEIGHT = 1.4  # the banner in type at least 1.4 times the body's (二号 or larger over 三号)
INDENT = 0.8  # a first-line indent is two characters (GB/T 9704); 0.8 of one tells it from skew and jitter
SHORT_LINE = 1.5  # a line stopping 1.5 characters short of the right margin ends its paragraph
MARGIN_WINDOW = 5  # the left margin near a line: the lines within 5 of it (robust to a slight skew)
FEW_LINES = 4  # with fewer lines than this near a line, the document's left margin stands in for their own
RIGHT_MARGIN = 0.9  # the right margin: where 90 % of the page's lines end
LEFT_MARGIN = 0.1  # the document's left margin: where the leftmost 10 % of its lines begin

_FOLIO_RE = re.compile(
    r"^[\s\-—–－一_~·.、]*(?:\d{1,4}|第\s*\d{1,4}\s*页(?:\s*[/，,共]?\s*共?\s*\d{1,4}\s*页)?|\d{1,4}\s*/\s*\d{1,4})"
    r"[\s\-—–－一_~·.、]*$"
)
_BANNER_RE = re.compile(r"^[\u4e00-\u9fff（）()、]{2,40}(?:文件|公报|公告|通报|简报|便函|函)$")
_DOC_NUMBER_RE = re.compile(r"^[\u4e00-\u9fff]{1,15}\s*[〔\[［(（【]\s*\d{4}\s*[〕\]］)）】]\s*第?\s*\d{1,5}\s*号$")
# an article or heading label that OCR glued to the words after it
_LABEL_RE = re.compile(rf"^(?:{unnamed(ARTICLE_LABEL)}|{unnamed(HEADING_LABEL)})(?=[^\s，。；、：,.;:）)])")
_HEADING_MAX_CHARS = 30
# a line that opens with an article's label (the space after it may be lost: 第三条电力设施…)
_ARTICLE_START_RE = re.compile(rf"^第(?P<num>{LABEL_NUMBER})条(?!之)")
_CJK = "\u3400-\u9fff"
_EDGE_NOISE_RE = re.compile(r"^[.·•'`,，]+|[.·•'`]+$")
_DOT_NOISE_RE = re.compile(rf"(?<=[{_CJK}）)，。；：、])[.·•]+(?=[{_CJK}（(])")
_ASCII_PUNCT_RE = re.compile(rf"(?<=[{_CJK}）)])([,;:!?])")
_FULLWIDTH = {",": "，", ";": "；", ":": "：", "!": "！", "?": "？"}
_FINAL_O_RE = re.compile(rf"(?<=[{_CJK}])[Oo]$")
_SENTENCE_PUNCT = set("。；，：！？;,:!?")


@dataclass(frozen=True)
class PlacedLine:
    """A line ready to be joined into the stored text.

    Attributes:
        text: the line's text (no newline).
        page: page number, from 1.
        starts_paragraph: whether a new paragraph begins here (False: it continues the line before).
        box: where the line is on its page (OCR lines), else None.
        confidence: OCR confidence (0–1), else None.
    """

    text: str
    page: int
    starts_paragraph: bool
    box: Box | None = None
    confidence: float | None = None


def reading_order(page: OcrPage) -> list[OcrLine]:
    """The page's lines top to bottom, fragments of one visual row merged left to right.

    Two boxes share a row when their vertical centres are closer than half the smaller height and they do not
    lie on top of each other (seal text over a line stays a line of its own, for `remove_noise`). A gap wider
    than half a line height between fragments becomes one space.
    """
    lines = sorted((ln for ln in page.lines if ln.text.strip()), key=lambda ln: (ln.box.centre_y, ln.box.x0))
    rows: list[list[OcrLine]] = []
    for ln in lines:
        if rows:
            last = rows[-1][-1]
            same_row = abs(ln.box.centre_y - last.box.centre_y) < SAME_ROW * min(ln.box.height, last.box.height)
            if same_row and not _overlap(ln.box, last.box) > ON_TOP:  # text on top of text (a seal) stays apart
                rows[-1].append(ln)
                continue
        rows.append([ln])
    merged: list[OcrLine] = []
    for row in rows:
        row.sort(key=lambda ln: ln.box.x0)
        text = row[0].text.strip()
        for prev, ln in itertools.pairwise(row):
            gap = ln.box.x0 - prev.box.x1
            text += (" " if gap > WORD_GAP * max(prev.box.height, ln.box.height) else "") + ln.text.strip()
        box = Box(
            min(b.box.x0 for b in row), min(b.box.y0 for b in row),
            max(b.box.x1 for b in row), max(b.box.y1 for b in row),
        )  # fmt: skip
        confidence = sum(b.confidence * len(b.text) for b in row) / max(1, sum(len(b.text) for b in row))
        merged.append(OcrLine(text, confidence, box))
    return merged


def _in_band(box: Box) -> bool:
    return box.y1 <= BAND or box.y0 >= 1 - BAND


def _repeat_key(text: str) -> str:
    """A header's identity across pages: no spaces, numbers replaced (running headers often carry them)."""
    return re.sub(r"\d+", "#", "".join(text.split()))


def _overlap(a: Box, b: Box) -> float:
    """Area of a ∩ b as a fraction of the smaller box."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min(a.width * a.height, b.width * b.height)
    return (w * h) / smaller if smaller > 0 else 0.0


def remove_noise(
    pages: Sequence[tuple[int, Sequence[OcrLine]]], *, min_confidence: float = MIN_CONFIDENCE
) -> list[list[OcrLine]]:
    """Drop page numbers, running headers and footers, the first page's banner, residue and unsure lines.

    Args:
        pages: (page number, lines in reading order — see `reading_order`) of each OCR'd page, in order.
        min_confidence: lines read with less confidence are dropped.

    Returns:
        The kept lines of each page, in the order given.
    """
    repeated: Counter[str] = Counter()
    for _, lines in pages:
        repeated.update({_repeat_key(ln.text) for ln in lines if _in_band(ln.box)})
    need = max(2, (len(pages) + 1) // 2)  # on at least half the pages, and never a line seen once
    running = {key for key, count in repeated.items() if count >= need}
    out: list[list[OcrLine]] = []
    for number, lines in pages:
        kept = []
        for ln in lines:
            text = ln.text.strip()
            label = bool(_ARTICLE_START_RE.match(text))  # never noise: losing it glues two articles together
            if ln.confidence < min_confidence and not label:
                continue
            if _in_band(ln.box) and (_FOLIO_RE.match(text) or _repeat_key(text) in running):
                continue
            if (
                not label
                and len(text) <= RESIDUE_MAX_CHARS
                and any(
                    other is not ln and len(other.text) > len(text) and _overlap(ln.box, other.box) > ON_TOP
                    for other in lines
                )
            ):
                continue
            kept.append(ln)
        out.append(_drop_banner(kept) if number == 1 else kept)
    return out


def _drop_banner(lines: list[OcrLine]) -> list[OcrLine]:
    """The 红头 issuer line ("国家能源局文件", in large type) and the 文号 under it, above the title."""
    heights = [ln.box.height for ln in lines]
    body = statistics.median(heights) if heights else 0.0
    out = []
    for i, ln in enumerate(lines):
        text = "".join(ln.text.split())
        at_top = ln.box.y0 < BANNER_TOP and i < BANNER_LINES
        if at_top and _BANNER_RE.match(text) and ln.box.height >= BANNER_HEIGHT * body:
            continue
        if at_top and _DOC_NUMBER_RE.match(text):
            continue
        out.append(ln)
    return out


def place_lines(
    page_number: int, lines: Sequence[OcrLine], *, margin: float | None = None, aspect: float = 297 / 210
) -> list[PlacedLine]:
    """Mark the lines of one cleaned OCR page that start a paragraph (see the module docstring).

    Args:
        page_number: the page, from 1.
        lines: the page's kept lines in reading order.
        margin: the document's left margin (fraction of the width), used where too few lines are near a line
            to tell its own margin (a page with one or two lines).
        aspect: page height / width, to turn a line height (a fraction of the height) into a character width
            (a fraction of the width).
    """
    if not lines:
        return []
    em = statistics.median(ln.box.height for ln in lines) * aspect  # a square character, in width fractions
    right = _percentile([ln.box.x1 for ln in lines], RIGHT_MARGIN)
    placed = []
    for i, ln in enumerate(lines):
        window = lines[max(0, i - MARGIN_WINDOW) : i + MARGIN_WINDOW + 1]
        left = min(other.box.x0 for other in window)  # the margin near this line (robust to a small skew)
        if len(window) < FEW_LINES and margin is not None:
            left = min(left, margin)
        indented = ln.box.x0 - left > INDENT * em
        previous_short = i > 0 and lines[i - 1].box.x1 < right - SHORT_LINE * em
        # A page that opens at the margin continues the last paragraph of the page before.
        starts = indented or previous_short
        placed.append(PlacedLine(tidy_line(ln.text), page_number, starts, ln.box, ln.confidence))
    return placed


def article_number(text: str) -> int | None:
    """N when `text` opens with 第N条 (第三条电力设施… → 3); None otherwise."""
    m = _ARTICLE_START_RE.match(text.strip())
    if not m:
        return None
    try:
        return parse_numeral(m.group("num"))
    except ValueError:
        return None


def restore_article_starts(lines: Sequence[PlacedLine]) -> list[PlacedLine]:
    """OCR lines that open with the article number the sequence lacks, made to start that article.

    Where the geometry failed (a skewed page's drifting margin hides an indent; the short last line of the
    article before was lost), the label is read but sits inside the paragraph before it, and the chunker
    cites its text under the article before. A line is made to start its article only when the sequence makes
    it certain: it is an OCR line that opens with 第N条, no paragraph starts with 第N条, the article started
    last is N−1 and a later paragraph starts with a higher number. A reference that a line wrap put at the
    start of a line (…依照本条例 / 第十二条的规定…) names an article the document has: it is never moved.
    """
    numbers = [article_number(ln.text) if ln.starts_paragraph else None for ln in lines]
    present = {n for n in numbers if n is not None}
    later_max: list[int] = []  # the highest article number starting a paragraph after each line
    highest = 0
    for n in reversed(numbers):
        later_max.append(highest)
        highest = max(highest, n or 0)
    later_max.reverse()
    out: list[PlacedLine] = []
    last = 0
    for ln, n, after in zip(lines, numbers, later_max, strict=True):
        if n is not None:
            last = n
        elif ln.box is not None:
            candidate = article_number(ln.text)
            if candidate is not None and candidate == last + 1 and candidate not in present and after > candidate:
                ln = PlacedLine(ln.text, ln.page, True, ln.box, ln.confidence)
                present.add(candidate)
                last = candidate
        out.append(ln)
    return out


def left_margin(pages: Sequence[Sequence[OcrLine]]) -> float | None:
    """The document's left margin: a low percentile of where its lines begin (fraction of the width)."""
    starts = [ln.box.x0 for lines in pages for ln in lines]
    return _percentile(starts, LEFT_MARGIN) if starts else None


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def tidy_line(text: str) -> str:
    """Undo the engine's typical slips in Chinese text: dots that are specks (between two characters, or at
    either end of a line), ASCII ,;:!? after a Chinese character (the page has the full-width mark), and a
    final 。 read as "O". A regulation's Chinese text has none of these, so nothing real is changed."""
    text = _EDGE_NOISE_RE.sub("", text.strip())
    text = _DOT_NOISE_RE.sub("", text)
    text = _ASCII_PUNCT_RE.sub(lambda m: _FULLWIDTH[m.group(1)], text)
    return _FINAL_O_RE.sub("。", text)


def restore_label_space(paragraph: str) -> str:
    """ "第一条为了……" → "第一条 为了……"; "第一章总则" → "第一章 总则" (only short heading-like lines)."""
    m = _LABEL_RE.match(paragraph)
    if not m:
        return paragraph
    label = m.group(0)
    if "条" not in label and (  # an article (第二十条之一 too) always; a heading only when it is short
        len(paragraph) > _HEADING_MAX_CHARS or any(ch in _SENTENCE_PUNCT for ch in paragraph)
    ):
        return paragraph  # "第一章规定的……" is a sentence, not a heading
    return f"{label} {paragraph[len(label) :]}"


def assemble(
    lines: Sequence[PlacedLine], page_numbers: Sequence[int], ocr_pages: Mapping[int, str]
) -> tuple[str, tuple[PageSpan, ...]]:
    """Join placed lines into the stored text (one paragraph per line) and record where every page went.

    Args:
        lines: all lines of the document in order, each marked with its page.
        page_numbers: every page of the document, in order (pages without lines get an empty span).
        ocr_pages: the pages whose lines came from OCR, each with the engine that read it ("" if unknown).

    Returns:
        (text ending in a newline, one PageSpan per page).
    """
    paragraphs: list[list[PlacedLine]] = []
    for ln in lines:
        if ln.starts_paragraph or not paragraphs:
            paragraphs.append([ln])
        else:
            paragraphs[-1].append(ln)
    parts: list[str] = []
    spans: dict[int, list[int]] = {}
    line_spans: dict[int, list[LineSpan]] = {}
    confidences: dict[int, list[float]] = {}
    pos = 0
    for para in paragraphs:
        for i, ln in enumerate(para):
            text = _with_label_space(ln, para) if i == 0 else ln.text
            start, end = pos, pos + len(text)
            parts.append(text)
            pos = end
            span = spans.setdefault(ln.page, [start, end])
            span[1] = end
            if ln.box is not None and ln.confidence is not None:
                line_spans.setdefault(ln.page, []).append(LineSpan(start, end, ln.box, ln.confidence))
                confidences.setdefault(ln.page, []).append(ln.confidence)
        parts.append("\n")
        pos += 1
    text = "".join(parts)
    return text, _page_spans(page_numbers, ocr_pages, spans, confidences, line_spans)


def _with_label_space(ln: PlacedLine, para: Sequence[PlacedLine]) -> str:
    """A paragraph's first OCR line with the space after its article label (第X条) that OCR dropped; a text
    layer keeps the spaces the PDF has."""
    text = ln.text
    if ln.box is None:
        return text
    whole = "".join(p.text for p in para)
    fixed = restore_label_space(whole)
    label_end = fixed.index(" ") if fixed != whole else len(text) + 1
    return text[:label_end] + " " + text[label_end:] if label_end <= len(text) else text


def _page_spans(
    page_numbers: Sequence[int],
    ocr_pages: Mapping[int, str],
    spans: dict[int, list[int]],
    confidences: dict[int, list[float]],
    line_spans: dict[int, list[LineSpan]],
) -> tuple[PageSpan, ...]:
    """One PageSpan per page; a page without lines gets an empty span where the previous page ended."""
    pages = []
    previous_end = 0
    for number in page_numbers:
        start, end = spans.get(number, [previous_end, previous_end])
        previous_end = end
        values = confidences.get(number)
        pages.append(
            PageSpan(
                page=number,
                start=start,
                end=end,
                ocr=number in ocr_pages,
                confidence=sum(values) / len(values) if values else None,
                lines=tuple(line_spans.get(number, ())),
                engine=ocr_pages.get(number) or None,
            )
        )
    return tuple(pages)
