"""PDF and page images to text: the text layer where a page has one (page-number footers removed, wrapped lines
joined into paragraphs), OCR where it has none, and the page spans of the result."""

from __future__ import annotations

import io
import re
from dataclasses import replace

from regrag.domain.ocr import PageSpan
from regrag.text import scans
from regrag.text.images import OcrLimits, ScanError
from regrag.text.numerals import HEADING_KINDS, HEADING_LABEL, LABEL_DIGITS, LABEL_NUMBER, unnamed
from regrag.text.ocr_text import PlacedLine, assemble, restore_article_starts
from regrag.text.parsed import ParsedText, UnreadableDocument
from regrag.text.scans import OcrFunction

_PAGE_NUMBER_RE = re.compile(r"^\s*(?:[—–\-－]+\s*\d+\s*[—–\-－]+|第\s*\d+\s*页(?:\s*[/共]\s*\d+\s*页?)?|\d+)\s*$")
# an article or heading label, or an item marker （一） / 一、 (not 1. : a wrapped line may start with a decimal)
_PARAGRAPH_START_RE = re.compile(
    rf"^\s*(?:第(?:{LABEL_NUMBER})(?:条|{HEADING_KINDS})|[（(][{LABEL_DIGITS}0-9]+[）)]|[{LABEL_DIGITS}]+、)"
)
_ENDS_SENTENCE = tuple("。！？；：:;!?")
# the first line is the title when it is no longer than this: the corpus's longest title has 34 characters, a
# first line of body text runs to the margin (28 characters a line in GB/T 9704, more in small type) and on
TITLE_MAX_CHARS = 80
# typeset with first-line indents when over a fifth of the text-layer lines start indented (every paragraph's
# first line, among two to four lines a paragraph); a line ran to the margin when it is 85 % of the widest
INDENTED_SHARE = 0.2
FULL_LINE = 0.85
_HEADING_LINE_RE = re.compile(rf"^\s*(?:{unnamed(HEADING_LABEL)}(?:\s|$)|(?:总则|分则|附则)\s*$)")


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
        ocr_lines, engines = scans.ocr_pdf_pages(data, kept, ocr, limits)
    except ScanError as exc:
        raise UnreadableDocument(f"{name}: {exc}") from exc
    if not any(kept[i] for i in range(len(kept)) if i not in ocr_lines) and not any(ocr_lines.values()):
        raise UnreadableDocument(f"{name}: the PDF has no text layer (scanned pages need OCR first)")
    placed = restore_article_starts(_place_lines(kept, ocr_lines))
    text, spans = assemble(placed, range(1, len(kept) + 1), {i + 1: engines.get(i, "") for i in ocr_lines})
    first = text.split("\n", 1)[0]
    title = first if first and len(first) <= TITLE_MAX_CHARS else None
    return ParsedText(text, "pdf", "binary", title, spans, first_engine(spans))


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
            wrapped = len(previous) >= FULL_LINE * full_width and not ends  # the line before ran to the margin
            if indented > INDENTED_SHARE:
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
        (placed_by_page, engines), count = scans.ocr_image_pages(data, ocr, limits)
    except ScanError as exc:
        raise UnreadableDocument(f"{name}: {exc}") from exc
    placed = restore_article_starts(_place_lines([[] for _ in range(count)], placed_by_page))
    text, spans = assemble(placed, range(1, count + 1), {i + 1: engines.get(i, "") for i in range(count)})
    first = text.split("\n", 1)[0]
    title = first if first and len(first) <= TITLE_MAX_CHARS else None
    return ParsedText(text, fmt, "binary", title, spans, first_engine(spans))


def first_engine(spans: tuple[PageSpan, ...]) -> str | None:
    """The document's OCR engine as ParsedText.ocr_engine keeps it: the first OCR'd page's (each page keeps its
    own in PageSpan.engine)."""
    return next((span.engine for span in spans if span.engine), None)
