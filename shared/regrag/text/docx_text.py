"""DOCX to text: paragraphs and table rows in document order, the title from the Title or Heading 1 style; the
archive is checked against zip bombs before anything is inflated."""

from __future__ import annotations

import io
import zipfile

from regrag.text.parsed import ParsedText, UnreadableDocument

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


def parse_docx(name: str, data: bytes) -> ParsedText:
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
