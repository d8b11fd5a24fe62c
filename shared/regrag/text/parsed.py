"""What parsing a document gives (ParsedText), and the error for bytes that are not a readable regulation."""

from __future__ import annotations

from dataclasses import dataclass

from regrag.domain.ocr import PageSpan


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
