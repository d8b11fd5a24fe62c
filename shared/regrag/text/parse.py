"""Turn the bytes of an uploaded regulation into plain text, one paragraph per line.

Formats: Markdown, plain text (UTF-8, UTF-8 with BOM, UTF-16 with BOM, GB18030), HTML (main content only),
PDF (pypdf; page-number footers removed, wrapped lines joined), DOCX (python-docx, tables kept in order) and,
with an OCR engine, page images (PNG, JPEG, TIFF) and PDF pages without a text layer (scans), mixed freely
with text pages. The text returned is what the index stores and what every quote is checked against; for
PDFs and images `ParsedText.pages` records where each page's text lies in it.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, replace
from typing import Any

from regrag.domain.ocr import PageSpan
from regrag.text import images, scans
from regrag.text.images import OcrLimits, ScanError
from regrag.text.ocr_text import PlacedLine, assemble
from regrag.text.scans import OcrFunction

FORMATS = ("md", "txt", "html", "pdf", "docx", "png", "jpeg", "tiff")
_EXTENSIONS = {
    "md": "md",
    "markdown": "md",
    "txt": "txt",
    "text": "txt",
    "html": "html",
    "htm": "html",
    "pdf": "pdf",
    "docx": "docx",
    "png": "png",
    "jpg": "jpeg",
    "jpeg": "jpeg",
    "tif": "tiff",
    "tiff": "tiff",
}
_BINARY = ("pdf", "docx", "png", "jpeg", "tiff")


class UnreadableDocument(ValueError):
    """The bytes cannot be read as a regulation: empty, binary, unknown format or undecodable."""


@dataclass(frozen=True)
class ParsedText:
    """Plain text of a document and what the format said about it.

    Attributes:
        text: the stored text; quotes are checked against it.
        format: md, txt, html, pdf, docx, png, jpeg or tiff.
        encoding: the text encoding, or "binary".
        title_hint: a title the format itself gave (HTML h1, DOCX Title style, a PDF's first short line).
        pages: for PDFs and images, one span per page, in page order: where its text lies in `text`, whether
            OCR read it, its mean OCR confidence and the OCR lines' boxes; empty for other formats.
        ocr_engine: the engine that read OCR'd pages (OcrPage.engine), None when no page was OCR'd.
    """

    text: str
    format: str
    encoding: str
    title_hint: str | None = None
    pages: tuple[PageSpan, ...] = ()
    ocr_engine: str | None = None

    @property
    def ocr_pages(self) -> tuple[int, ...]:
        """The numbers of the pages whose text came from OCR."""
        return tuple(p.page for p in self.pages if p.ocr)


def detect_format(name: str, data: bytes) -> str:
    """The document format from its content where that is unambiguous (PDF, DOCX), else from the extension."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    sniffed = images.sniff_image(data)
    if sniffed is not None:
        return sniffed
    if data.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                if "word/document.xml" in zf.namelist():
                    return "docx"
        except zipfile.BadZipFile:
            pass
        raise UnreadableDocument(f"{name}: a ZIP archive that is not a DOCX document")
    ext = name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
    fmt = _EXTENSIONS.get(ext)
    if fmt is None:
        raise UnreadableDocument(
            f"{name}: unsupported file type '.{ext}' "
            "(supported: .md, .txt, .html, .htm, .pdf, .docx, .png, .jpg, .jpeg, .tif, .tiff)"
            if ext
            else f"{name}: no file extension; cannot tell the format"
        )
    if fmt in _BINARY:
        raise UnreadableDocument(f"{name}: named .{ext} but the content is not a {fmt.upper()} file")
    return fmt


def decode_text(name: str, data: bytes) -> tuple[str, str]:
    """Decode text bytes: BOM first (UTF-8, UTF-16), then strict UTF-8, then GB18030.

    Returns (text, encoding). Raises UnreadableDocument for binary data or bytes that no encoding explains.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        return _checked(name, data[3:].decode("utf-8", errors="strict"), "utf-8-sig")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _checked(name, data.decode("utf-16"), "utf-16")
    if b"\x00" in data[:4096]:
        raise UnreadableDocument(f"{name}: binary content (NUL bytes), not a text document")
    try:
        return _checked(name, data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return _checked(name, data.decode("gb18030"), "gb18030")
    except UnicodeDecodeError as exc:
        raise UnreadableDocument(
            f"{name}: not valid UTF-8 or GB18030 (byte {exc.start}); re-save the file as UTF-8"
        ) from exc


def _checked(name: str, text: str, encoding: str) -> tuple[str, str]:
    """Reject decodings that are technically valid but are not prose (binary read as GB18030, say)."""
    sample = text[:20000]
    if not sample.strip():
        return text, encoding
    control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\r\n\t\f")
    if control / len(sample) > 0.01:
        raise UnreadableDocument(f"{name}: binary content ({encoding} decoding gives control characters)")
    return text, encoding


def parse_document(
    name: str, data: bytes, *, ocr: OcrFunction | None = None, limits: OcrLimits | None = None
) -> ParsedText:
    """Extract the text of a document; raise UnreadableDocument with a reason a user can act on.

    Args:
        name: the object name (its extension decides the format where the content does not).
        data: the file's bytes.
        ocr: reads one page image (PNG bytes) — `OcrEngine.recognize`; without it, images and PDF pages
            without a text layer are refused.
        limits: pages, pixels and time per page allowed (defaults: `OcrLimits()`); over a limit the document
            is refused with a message naming the limit.
    """
    if not data or not data.strip():
        raise UnreadableDocument(f"{name}: empty file")
    limits = limits or OcrLimits()
    fmt = detect_format(name, data)
    if fmt == "pdf":
        parsed = _parse_pdf(name, data, ocr, limits)
    elif fmt == "docx":
        parsed = _parse_docx(name, data)
    elif fmt in ("png", "jpeg", "tiff"):
        parsed = _parse_image(name, data, fmt, ocr, limits)
    else:
        text, encoding = decode_text(name, data)
        if fmt == "html" or (fmt == "txt" and _looks_like_html(text)):
            parsed = _parse_html(text, encoding)
        else:
            parsed = ParsedText(text, fmt, encoding)
    if not parsed.text.strip():
        raise UnreadableDocument(f"{name}: no text could be extracted ({parsed.format})")
    return parsed


def _looks_like_html(text: str) -> bool:
    head = text[:512].lstrip().lower()
    return head.startswith(("<!doctype html", "<html"))


# --- HTML -------------------------------------------------------------------------------------------------

_BLOCK_TAGS = {
    "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "br", "section", "article", "table",
    "ul", "ol", "blockquote", "pre", "dd", "dt", "hr", "header", "footer", "main",
}  # fmt: skip
_DROP_TAGS = {"script", "style", "noscript", "template", "nav", "aside", "form", "iframe", "button", "svg"}
_MAIN_SELECTORS = ("#zoom", "article", "main", ".article-content", ".content", "#content", ".TRS_Editor")


def _parse_html(text: str, encoding: str) -> ParsedText:
    from bs4 import BeautifulSoup  # imported here: only HTML needs it

    soup = BeautifulSoup(text, "html.parser")
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    main: Any = None
    for selector in _MAIN_SELECTORS:
        main = soup.select_one(selector)
        if main is not None and len(main.get_text(strip=True)) > 50:
            break
        main = None
    if main is None:
        main = _densest_block(soup)
    title = None
    h1 = main.find("h1") if main is not None else None
    if h1 is not None:
        title = h1.get_text(strip=True)
    else:
        meta = soup.find("meta", attrs={"name": "ArticleTitle"})
        if meta is not None and meta.get("content"):
            title = str(meta["content"]).strip()
        elif soup.title is not None and soup.title.string:
            title = re.split(r"[_|｜-]", soup.title.string.strip())[0].strip() or None
    lines: list[str] = []
    buf: list[str] = []

    def flush() -> None:
        line = "".join(buf).strip()
        if line:
            lines.append(line)
        buf.clear()

    def walk(node: object) -> None:
        from bs4 import NavigableString, Tag
        from bs4.element import Comment

        if isinstance(node, Comment):
            return
        if isinstance(node, NavigableString):
            buf.append(re.sub(r"[ \t\r\n]+", " ", str(node)))
            return
        if isinstance(node, Tag):
            block = node.name in _BLOCK_TAGS
            if block:
                flush()
            if node.name in ("td", "th") and buf:
                buf.append("\t")
            for child in node.children:
                walk(child)
            if block:
                flush()

    walk(main if main is not None else soup)
    flush()
    return ParsedText("\n".join(lines) + "\n", "html", encoding, title)


def _densest_block(soup: object) -> object:
    """The block with the most paragraph text, when no known content container exists."""
    best, best_len = None, 0
    for div in soup.find_all(["div", "section", "td", "body"]):  # type: ignore[attr-defined]
        direct = sum(len(p.get_text(strip=True)) for p in div.find_all("p", recursive=False))
        if direct > best_len:
            best, best_len = div, direct
    return best if best is not None else soup


# --- PDF --------------------------------------------------------------------------------------------------

_PAGE_NUMBER_RE = re.compile(r"^\s*(?:[—–\-－]+\s*\d+\s*[—–\-－]+|第\s*\d+\s*页(?:\s*[/共]\s*\d+\s*页?)?|\d+)\s*$")
_PARAGRAPH_START_RE = re.compile(
    r"^\s*(?:第[零〇一二三四五六七八九十百千0-9]+[条章节编]|[（(][一二三四五六七八九十0-9]+[）)]|[一二三四五六七八九十]+、)"
)
_ENDS_SENTENCE = tuple("。！？；：:;!?")
_HEADING_LINE_RE = re.compile(r"^\s*(?:第[零〇一二三四五六七八九十百千0-9]+[章节编](?:\s|$)|(?:总则|分则|附则)\s*$)")


def _parse_pdf(name: str, data: bytes, ocr: OcrFunction | None, limits: OcrLimits) -> ParsedText:
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
    placed = _place_lines(kept, ocr_lines)
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


def _parse_image(name: str, data: bytes, fmt: str, ocr: OcrFunction | None, limits: OcrLimits) -> ParsedText:
    if ocr is None:
        raise UnreadableDocument(f"{name}: a {fmt.upper()} image needs OCR, and no OCR engine is configured")
    try:
        (placed_by_page, engine), count = scans.ocr_image_pages(data, ocr, limits)
    except ScanError as exc:
        raise UnreadableDocument(f"{name}: {exc}") from exc
    placed = _place_lines([[] for _ in range(count)], placed_by_page)
    text, spans = assemble(placed, range(1, count + 1), set(range(1, count + 1)))
    first = text.split("\n", 1)[0]
    title = first if first and len(first) <= 80 else None
    return ParsedText(text, fmt, "binary", title, spans, engine)


# --- DOCX -------------------------------------------------------------------------------------------------


# A DOCX is a ZIP archive: its declared sizes are checked before anything is inflated, so a 1 GB entry hidden
# in a small file (a zip bomb) is refused instead of filling memory. A real regulation's document.xml is a few
# MB at most (the 民法典 as DOCX: about 2 MB).
MAX_DOCX_ENTRIES = 1000
MAX_DOCX_UNCOMPRESSED = 200_000_000
MAX_DOCX_RATIO = 200


def check_archive(name: str, data: bytes) -> None:
    """UnreadableDocument when the archive's entries are too many, too large, or compressed past any real text."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        raise UnreadableDocument(f"{name}: unreadable DOCX ({exc})") from exc
    if len(infos) > MAX_DOCX_ENTRIES:
        raise UnreadableDocument(f"{name}: {len(infos)} entries in the DOCX archive; the limit is {MAX_DOCX_ENTRIES}")
    total = sum(i.file_size for i in infos)
    if total > MAX_DOCX_UNCOMPRESSED:
        raise UnreadableDocument(
            f"{name}: the DOCX unpacks to {total / 1e6:.0f} MB; the limit is {MAX_DOCX_UNCOMPRESSED / 1e6:.0f} MB"
        )
    for info in infos:
        if info.compress_size and info.file_size / info.compress_size > MAX_DOCX_RATIO and info.file_size > 1_000_000:
            raise UnreadableDocument(
                f"{name}: {info.filename} is compressed {info.file_size // info.compress_size}:1 "
                f"(over {MAX_DOCX_RATIO}:1): refused as a zip bomb"
            )


def _parse_docx(name: str, data: bytes) -> ParsedText:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    check_archive(name, data)
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, SyntaxError) as exc:
        # SyntaxError: lxml's XMLSyntaxError (malformed or oversized XML inside the archive)
        raise UnreadableDocument(f"{name}: unreadable DOCX ({exc})") from exc
    lines: list[str] = []
    title = None
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(child, document)
            text = para.text.strip()
            if not text:
                continue
            style = (para.style.name if para.style is not None else "") or ""
            if title is None and style in ("Title", "Heading 1"):
                title = text
            lines.append(text)
        elif tag == "tbl":
            for row in Table(child, document).rows:
                cells = [cell.text.strip() for cell in row.cells]
                if any(cells):
                    lines.append("\t".join(cells))
    return ParsedText("\n".join(lines) + "\n", "docx", "utf-8", title)
