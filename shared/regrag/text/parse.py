"""Turn the bytes of an uploaded regulation into plain text, one paragraph per line.

Formats: Markdown, plain text (UTF-8, UTF-8 with BOM, UTF-16 with BOM, GB18030), HTML (main content only),
PDF (pypdf; page-number footers removed, wrapped lines joined) and DOCX (python-docx, tables kept in order).
The text returned is what the index stores and what every quote is checked against.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from typing import Any

FORMATS = ("md", "txt", "html", "pdf", "docx")
_EXTENSIONS = {
    "md": "md",
    "markdown": "md",
    "txt": "txt",
    "text": "txt",
    "html": "html",
    "htm": "html",
    "pdf": "pdf",
    "docx": "docx",
}


class UnsupportedDocument(ValueError):
    """The bytes cannot be read as a regulation: empty, binary, unknown format or undecodable."""


@dataclass(frozen=True)
class ParsedText:
    """Plain text of a document and what the format said about it."""

    text: str
    format: str
    encoding: str
    title_hint: str | None = None


def detect_format(name: str, data: bytes) -> str:
    """The document format from its content where that is unambiguous (PDF, DOCX), else from the extension."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                if "word/document.xml" in zf.namelist():
                    return "docx"
        except zipfile.BadZipFile:
            pass
        raise UnsupportedDocument(f"{name}: a ZIP archive that is not a DOCX document")
    ext = name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
    fmt = _EXTENSIONS.get(ext)
    if fmt is None:
        raise UnsupportedDocument(
            f"{name}: unsupported file type '.{ext}' (supported: .md, .txt, .html, .htm, .pdf, .docx)"
            if ext
            else f"{name}: no file extension; cannot tell the format"
        )
    if fmt in ("pdf", "docx"):
        raise UnsupportedDocument(f"{name}: named .{ext} but the content is not a {fmt.upper()} file")
    return fmt


def decode_text(name: str, data: bytes) -> tuple[str, str]:
    """Decode text bytes: BOM first (UTF-8, UTF-16), then strict UTF-8, then GB18030.

    Returns (text, encoding). Raises UnsupportedDocument for binary data or bytes that no encoding explains.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        return _checked(name, data[3:].decode("utf-8", errors="strict"), "utf-8-sig")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _checked(name, data.decode("utf-16"), "utf-16")
    if b"\x00" in data[:4096]:
        raise UnsupportedDocument(f"{name}: binary content (NUL bytes), not a text document")
    try:
        return _checked(name, data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return _checked(name, data.decode("gb18030"), "gb18030")
    except UnicodeDecodeError as exc:
        raise UnsupportedDocument(
            f"{name}: not valid UTF-8 or GB18030 (byte {exc.start}); re-save the file as UTF-8"
        ) from exc


def _checked(name: str, text: str, encoding: str) -> tuple[str, str]:
    """Reject decodings that are technically valid but are not prose (binary read as GB18030, say)."""
    sample = text[:20000]
    if not sample.strip():
        return text, encoding
    control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\r\n\t\f")
    if control / len(sample) > 0.01:
        raise UnsupportedDocument(f"{name}: binary content ({encoding} decoding gives control characters)")
    return text, encoding


def parse_document(name: str, data: bytes) -> ParsedText:
    """Extract the text of a document; raise UnsupportedDocument with a reason a user can act on."""
    if not data or not data.strip():
        raise UnsupportedDocument(f"{name}: empty file")
    fmt = detect_format(name, data)
    if fmt == "pdf":
        parsed = _parse_pdf(name, data)
    elif fmt == "docx":
        parsed = _parse_docx(name, data)
    else:
        text, encoding = decode_text(name, data)
        if fmt == "html" or (fmt == "txt" and _looks_like_html(text)):
            parsed = _parse_html(text, encoding)
        else:
            parsed = ParsedText(text, fmt, encoding)
    if not parsed.text.strip():
        raise UnsupportedDocument(f"{name}: no text could be extracted ({parsed.format})")
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


def _parse_pdf(name: str, data: bytes) -> ParsedText:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        page_lines = [(page.extract_text() or "").split("\n") for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise UnsupportedDocument(f"{name}: unreadable PDF ({exc})") from exc
    lines = [ln.rstrip() for page in page_lines for ln in page if ln.strip() and not _PAGE_NUMBER_RE.match(ln)]
    if not lines:
        raise UnsupportedDocument(f"{name}: the PDF has no text layer (scanned pages need OCR first)")
    indented = sum(1 for ln in lines if ln[:1].isspace()) / len(lines)
    full_width = max(len(ln.strip()) for ln in lines)
    paragraphs: list[str] = []
    previous = ""
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
        if new or not paragraphs:
            paragraphs.append(stripped)
        else:
            paragraphs[-1] += stripped
        previous = stripped
    title = paragraphs[0] if paragraphs and len(paragraphs[0]) <= 80 else None
    return ParsedText("\n".join(paragraphs) + "\n", "pdf", "binary", title)


# --- DOCX -------------------------------------------------------------------------------------------------


def _parse_docx(name: str, data: bytes) -> ParsedText:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise UnsupportedDocument(f"{name}: unreadable DOCX ({exc})") from exc
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
