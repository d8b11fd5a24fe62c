"""Turn the bytes of an uploaded regulation into plain text, one paragraph per line.

Formats: Markdown, plain text (UTF-8, UTF-8 with BOM, UTF-16 with BOM, GB18030), HTML (main content only),
PDF (pypdf; page-number footers removed, wrapped lines joined), DOCX (python-docx, tables kept in order) and,
with an OCR engine, page images (PNG, JPEG, TIFF) and PDF pages without a text layer (scans), mixed freely
with text pages. The text returned is what the index stores and what every quote is checked against; for
PDFs and images `ParsedText.pages` records where each page's text lies in it.
"""

from __future__ import annotations

import io
import zipfile

from regrag.text import images
from regrag.text.docx_text import parse_docx
from regrag.text.html_text import looks_like_html, parse_html
from regrag.text.images import IMAGE_FORMATS, OcrLimits
from regrag.text.parsed import ParsedText, UnreadableDocument
from regrag.text.pdf_text import parse_image, parse_pdf
from regrag.text.scans import OcrFunction

__all__ = ["FORMATS", "ParsedText", "UnreadableDocument", "decode_text", "detect_format", "parse_document"]

FORMATS = ("md", "txt", "html", "pdf", "docx", *IMAGE_FORMATS)
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
_BINARY = ("pdf", "docx", *IMAGE_FORMATS)
# a text file has no NUL byte in its first 4 KiB; UTF-16 (which has them) is recognised by its BOM before this
SNIFF_BYTES = 4096
# a decoding is prose when under 1 % of its first 20,000 characters are control characters: binary data decoded
# as GB18030 (which accepts almost any byte pair) is full of them, a regulation has none but \r \n \t \f
SAMPLE_CHARS = 20_000
MAX_CONTROL_SHARE = 0.01


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
    if b"\x00" in data[:SNIFF_BYTES]:
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
    sample = text[:SAMPLE_CHARS]
    if not sample.strip():
        return text, encoding
    control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\r\n\t\f")
    if control / len(sample) > MAX_CONTROL_SHARE:
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
        parsed = parse_pdf(name, data, ocr, limits)
    elif fmt == "docx":
        parsed = parse_docx(name, data)
    elif fmt in IMAGE_FORMATS:
        parsed = parse_image(name, data, fmt, ocr, limits)
    else:
        text, encoding = decode_text(name, data)
        if fmt == "html" or (fmt == "txt" and looks_like_html(text)):
            parsed = parse_html(text, encoding)
        else:
            parsed = ParsedText(text, fmt, encoding)
    if not parsed.text.strip():
        raise UnreadableDocument(f"{name}: no text could be extracted ({parsed.format})")
    return parsed
