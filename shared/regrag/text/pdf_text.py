"""PDF and page images to text: the text layer where a page has one (page-number footers removed, wrapped lines
joined into paragraphs), OCR where it has none, and the page spans of the result."""

from __future__ import annotations

import io
import re
from dataclasses import replace

from regrag.text import scans
from regrag.text.images import OcrLimits, ScanError
from regrag.text.ocr_text import PlacedLine, assemble, restore_article_starts
from regrag.text.parsed import ParsedText, UnreadableDocument
from regrag.text.scans import OcrFunction

_PAGE_NUMBER_RE = re.compile(r"^\s*(?:[—–\-－]+\s*\d+\s*[—–\-－]+|第\s*\d+\s*页(?:\s*[/共]\s*\d+\s*页?)?|\d+)\s*$")
_PARAGRAPH_START_RE = re.compile(
    r"^\s*(?:第[零〇一二三四五六七八九十百千0-9]+[条章节编]|[（(][一二三四五六七八九十0-9]+[）)]|[一二三四五六七八九十]+、)"
)
_ENDS_SENTENCE = tuple("。！？；：:;!?")
_HEADING_LINE_RE = re.compile(r"^\s*(?:第[零〇一二三四五六七八九十百千0-9]+[章节编](?:\s|$)|(?:总则|分则|附则)\s*$)")


def parse_pdf(name: str, data: bytes, ocr: OcrFunction | None, limits: OcrLimits) -> ParsedText:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        count = len(reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise UnreadableDocument(f"{name}: unreadable PDF ({exc})") from exc
    if count > limits.max_pages:  # before any page is read
        raise UnreadableDocument(f"{name}: {count} pages; the limit is {limits.max_pages} pages (max_pages)")
    try:
        page_lines = [(page.extract_text() or "").split("\n") for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise UnreadableDocument(f"{name}: unreadable PDF ({exc})") from exc
    kept = [[ln.rstrip() for ln in page if ln.strip() and not _PAGE_NUMBER_RE.match(ln)] for page in page_lines]
    try:
        ocr_lines, engine = scans.ocr_pdf_pages(data, kept, ocr, limits)
    except ScanError as exc:
        raise UnreadableDocument(f"{name}: {exc}") from exc
    if not any(kept[i] for i in range(len(kept)) if i not in ocr_lines) and not any(ocr_lines.values()):
        raise UnreadableDocument(f"{name}: the PDF has no text layer (scanned pages need OCR first)")
    placed = restore_article_starts(_place_lines(kept, ocr_lines))
    text, spans = assemble(placed, range(1, len(kept) + 1), {index + 1 for index in ocr_lines})
    first = text.split("\n", 1)[0]
    title = first if first and len(first) <= 80 else None
    return ParsedText(text, "pdf", "binary", title, spans, engine)


def _place_lines(kept: list[list[str]], ocr_lines: dict[int, list[PlacedLine]]) -> list[PlacedLine]:
    """All lines in page order: text-layer lines with their paragraph starts decided from the typesetting
    (first-line indents, or lines that stop short of the margin), OCR'd pages' lines as placed, except that
    an OCR'd page's first line starts a paragraph when the page before ended a sentence or with a heading and
    the line opens with an article or item label (the geometry of the page before is not there to tell)."""
    text_lines = [ln for i, lines in enumerate(kept) if i not in ocr_lines for ln in lines]
    indented = sum(1 for ln in text_lines if ln[:1].isspace()) / len(text_lines) if text_lines else 0.0
    full_width = max((len(ln.strip()) for ln in text_lines), default=0)
    placed: list[PlacedLine] = []
    previous = ""
    for index, lines in enumerate(kept):
        if index in ocr_lines:
            page = list(ocr_lines[index])
            ended = previous.endswith(_ENDS_SENTENCE) or bool(_HEADING_LINE_RE.match(previous))
            if page and ended and _PARAGRAPH_START_RE.match(page[0].text):
                page[0] = replace(page[0], starts_paragraph=True)
            placed.extend(page)
            if page:
                previous = page[-1].text
            continue
        for ln in lines:
            stripped = ln.strip()
            ends = previous.endswith(_ENDS_SENTENCE)
            wrapped = len(previous) >= 0.85 * full_width and not ends  # the line before ran to the margin
            if indented > 0.2:
                # Typeset with a first-line indent: an indented line starts a paragraph unless the line before
                # ran to the right margin (centred title and header lines are indented too).
                new = ln[:1].isspace() and (not wrapped or bool(_PARAGRAPH_START_RE.match(ln)))
            else:
                new = ends or not wrapped or bool(_PARAGRAPH_START_RE.match(ln))
            placed.append(PlacedLine(stripped, index + 1, new))
            previous = stripped
    return placed


# --- images -----------------------------------------------------------------------------------------------


def parse_image(name: str, data: bytes, fmt: str, ocr: OcrFunction | None, limits: OcrLimits) -> ParsedText:
    if ocr is None:
        raise UnreadableDocument(f"{name}: a {fmt.upper()} image needs OCR, and no OCR engine is configured")
    try:
        (placed_by_page, engine), count = scans.ocr_image_pages(data, ocr, limits)
    except ScanError as exc:
        raise UnreadableDocument(f"{name}: {exc}") from exc
    placed = restore_article_starts(_place_lines([[] for _ in range(count)], placed_by_page))
    text, spans = assemble(placed, range(1, count + 1), set(range(1, count + 1)))
    first = text.split("\n", 1)[0]
    title = first if first and len(first) <= 80 else None
    return ParsedText(text, fmt, "binary", title, spans, engine)
