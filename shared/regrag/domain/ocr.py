"""What an OCR engine saw on a page, and where each page of a document sits in its stored text.

Coordinates are fractions of the page's width and height (0–1, origin top left), so boxes from engines that
work in pixels (RapidOCR) and in normalised vertices (Document AI) compare, and a viewer can draw them on a
page rendered at any size. `PageSpan` is what a stored document keeps per page: its character span in the
stored text, whether OCR produced it, the mean line confidence, and the lines with their boxes, so that any
quote (a substring of the stored text) maps back to its page or pages with `pages_for_span`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_BOX_SCALE = 1000  # boxes are stored as per-mille integers: compact JSON, 0.1 % precision is plenty


@dataclass(frozen=True)
class Box:
    """An axis-aligned box, as fractions of the page size: x0 ≤ x1 and y0 ≤ y1, all in [0, 1]."""

    x0: float
    y0: float
    x1: float
    y1: float

    @classmethod
    def around(cls, points: Sequence[tuple[float, float]], width: float = 1.0, height: float = 1.0) -> Box:
        """The box around polygon `points`, given in units of which the page is `width` × `height`."""
        if not points or width <= 0 or height <= 0:
            return cls(0.0, 0.0, 0.0, 0.0)
        xs = [min(max(x / width, 0.0), 1.0) for x, _ in points]
        ys = [min(max(y / height, 0.0), 1.0) for _, y in points]
        return cls(min(xs), min(ys), max(xs), max(ys))

    @property
    def height(self) -> float:
        """Height as a fraction of the page height."""
        return self.y1 - self.y0

    @property
    def width(self) -> float:
        """Width as a fraction of the page width."""
        return self.x1 - self.x0

    @property
    def centre_y(self) -> float:
        """Vertical centre, as a fraction of the page height."""
        return (self.y0 + self.y1) / 2

    def to_permille(self) -> list[int]:
        """[x0, y0, x1, y1] in thousandths of the page size."""
        return [round(v * _BOX_SCALE) for v in (self.x0, self.y0, self.x1, self.y1)]

    @classmethod
    def from_permille(cls, values: Sequence[int]) -> Box:
        """The box from [x0, y0, x1, y1] in thousandths of the page size (`to_permille`)."""
        x0, y0, x1, y1 = (v / _BOX_SCALE for v in values)
        return cls(x0, y0, x1, y1)


@dataclass(frozen=True)
class OcrLine:
    """One line of text as the engine read it, with its confidence (0–1) and its box on the page."""

    text: str
    confidence: float
    box: Box


@dataclass(frozen=True)
class OcrPage:
    """The lines an engine read on one page image, in the engine's order.

    Attributes:
        lines: the lines read, each with confidence and box.
        width: width of the image recognised, in pixels (0 when the engine does not say).
        height: height of the image recognised, in pixels (0 when the engine does not say).
        engine: which engine and model version read it, e.g. "rapidocr-3.10.0/PP-OCRv6-small" or
            "documentai:ocr123@pretrained-ocr-v2.1-2024-08-07"; kept with the page (PageSpan.engine).
    """

    lines: tuple[OcrLine, ...]
    width: int = 0
    height: int = 0
    engine: str = ""

    @property
    def text(self) -> str:
        """The lines' text, one per line, in the engine's order."""
        return "\n".join(line.text for line in self.lines)

    @property
    def confidence(self) -> float | None:
        """Mean line confidence, or None for a page without lines."""
        if not self.lines:
            return None
        return sum(line.confidence for line in self.lines) / len(self.lines)


@dataclass(frozen=True)
class LineSpan:
    """Where one OCR line ended up in the stored text: [start, end) and its box on the page."""

    start: int
    end: int
    box: Box
    confidence: float


@dataclass(frozen=True)
class PageSpan:
    """One page of a document: its [start, end) span in the stored text and how its text was obtained.

    Attributes:
        page: page number, from 1 (the PDF page index + 1, or the frame of a multi-page TIFF).
        start: offset of the page's first character in the stored text.
        end: offset just past its last character (start == end for a blank page).
        ocr: whether the text came from OCR (False: the PDF's text layer).
        confidence: mean OCR confidence of the page's lines kept in the text (None without OCR).
        lines: OCR lines kept, with their spans and boxes (empty for text-layer pages).
        engine: the engine and model version that read the page (OcrPage.engine; None without OCR), so that a
            page read before a model change can be told from one read after it.
    """

    page: int
    start: int
    end: int
    ocr: bool
    confidence: float | None = None
    lines: tuple[LineSpan, ...] = ()
    engine: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON form; each line is [start, end, x0, y0, x1, y1 (per mille), confidence]."""
        out: dict[str, Any] = {"page": self.page, "start": self.start, "end": self.end, "ocr": self.ocr}
        if self.engine:
            out["engine"] = self.engine
        if self.confidence is not None:
            out["confidence"] = round(self.confidence, 4)
        if self.lines:
            out["lines"] = [[ln.start, ln.end, *ln.box.to_permille(), round(ln.confidence, 3)] for ln in self.lines]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageSpan:
        """The span from its `to_dict` form (as stored with the document)."""
        lines = tuple(
            LineSpan(int(row[0]), int(row[1]), Box.from_permille(row[2:6]), float(row[6]))
            for row in data.get("lines", ())
        )
        confidence = data.get("confidence")
        return cls(
            page=int(data["page"]),
            start=int(data["start"]),
            end=int(data["end"]),
            ocr=bool(data.get("ocr", False)),
            confidence=None if confidence is None else float(confidence),
            lines=lines,
            engine=data.get("engine") or None,
        )


def pages_for_span(pages: Sequence[PageSpan], start: int, end: int) -> list[int]:
    """The numbers of the pages that a stored-text span [start, end) overlaps, in page order.

    An empty span (start == end) reports the page containing that offset. Offsets between two pages (the
    line break that joins them) belong to neither; a quote that covers only such characters gets the page
    before. Documents without page information (Markdown, DOCX) give [].
    """
    if not pages:
        return []
    if end <= start:
        end = start + 1
    hits = [p.page for p in pages if p.start < end and start < p.end]
    if hits:
        return hits
    before = [p for p in pages if p.end <= start and p.end > p.start]
    return [before[-1].page] if before else []


def lines_for_span(pages: Sequence[PageSpan], start: int, end: int) -> list[tuple[int, Box]]:
    """(page, box) of every OCR line that a stored-text span overlaps: what a viewer highlights."""
    return [
        (p.page, ln.box)
        for p in pages
        if p.start < end and start < p.end
        for ln in p.lines
        if ln.start < end and start < ln.end
    ]


def low_confidence_pages(pages: Sequence[PageSpan], threshold: float) -> list[int]:
    """OCR pages whose mean line confidence is below `threshold`."""
    return [p.page for p in pages if p.ocr and p.confidence is not None and p.confidence < threshold]


def page_url(url: str | None, pages: Sequence[int]) -> str | None:
    """The source URL pointing at the first page of a quote (`#page=N`, which PDF viewers open at), or the URL
    unchanged when there is no page; an existing fragment is replaced."""
    if not url or not pages:
        return url
    return f"{url.split('#', 1)[0]}#page={min(pages)}"
