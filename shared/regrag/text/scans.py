"""Scanned pages through an OCR engine: which PDF pages need it, the page images it gets, the time it may take.

The engine is a function (the seam `OcrFunction`; `OcrEngine.recognize` fits it), so this module never knows
which engine runs. Every page image is scaled to at most `OcrLimits.ocr_max_side_px`, has its red ink removed
(`images.remove_red_ink`), is turned upright (`images.deskew`) and goes to the engine as PNG; the lines that come
back are cleaned and placed by `regrag.text.ocr_text`. Failures are `ScanError`s whose message names the page and
the limit; the parser prefixes the document's name and reports them as an unsupported document.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from regrag.domain.ocr import OcrLine, OcrPage
from regrag.text import images
from regrag.text.images import OcrLimits, ScanError
from regrag.text.ocr_text import PlacedLine, left_margin, place_lines, reading_order, remove_noise

# The OCR seam: page image bytes (PNG) in, the lines read out. `OcrEngine.recognize` fits it.
OcrFunction = Callable[[bytes], OcrPage]
# Placed lines of the OCR'd pages by page index (from 0), and the engine (and model version) that read each.
OcrResult = tuple[dict[int, list[PlacedLine]], dict[int, str]]


class NoOcrEngine(ScanError):
    """A scanned page or an image, and no OCR engine to read it."""


class OcrTimeout(ScanError):
    """The engine took longer than `OcrLimits.page_timeout_s` on a page."""


def ocr_pdf_pages(
    data: bytes, page_lines: Sequence[Sequence[str]], ocr: OcrFunction | None, limits: OcrLimits
) -> OcrResult:
    """OCR the PDF pages whose text layer is (nearly) empty but which draw something; blank pages stay blank.

    Args:
        data: the PDF's bytes.
        page_lines: each page's text-layer lines (page numbers already removed).
        ocr: the engine, or None (then a page that needs OCR raises NoOcrEngine).
        limits: see `OcrLimits`.
    """
    scanned = [
        i for i, lines in enumerate(page_lines) if sum(len("".join(ln.split())) for ln in lines) < limits.min_text_chars
    ]
    if not scanned:
        return {}, {}
    pdf = images.open_pdf(data)
    scanned = [i for i in scanned if not images.page_is_blank(pdf, i)]
    if not scanned:
        return {}, {}
    if ocr is None:
        if all(not lines for lines in page_lines):
            raise NoOcrEngine("the PDF has no text layer (scanned pages need OCR first)")
        pages = ", ".join(str(i + 1) for i in scanned)
        raise NoOcrEngine(f"page(s) {pages} are scanned images without a text layer, and no OCR engine is configured")
    read = [(i + 1, recognize_page(images.render_pdf_page(pdf, i, limits), ocr, limits, i + 1)) for i in scanned]
    return place_pages(read, limits)


def ocr_image_pages(data: bytes, ocr: OcrFunction, limits: OcrLimits) -> tuple[OcrResult, int]:
    """OCR every page (frame) of an image upload; also returns the number of pages."""
    read = [(n, recognize_page(img, ocr, limits, n)) for n, img in enumerate(images.image_pages(data, limits), 1)]
    return place_pages(read, limits), len(read)


def recognize_page(img: Any, ocr: OcrFunction, limits: OcrLimits, page: int) -> OcrPage:
    """OCR one page image (scaled down, red ink removed, turned upright) within the time limit, its unsure lines
    read again. Line boxes are fractions of the upright page (a skewed scan's are off by at most the skew)."""
    upright, _ = images.deskew(images.remove_red_ink(images.fit(img, limits.ocr_max_side_px)))
    png = images.to_png(upright)
    read = _with_timeout(lambda: ocr(png), limits.page_timeout_s, f"OCR of page {page}")
    return reread_unsure_lines(read, upright, ocr, limits, page)


REREAD_SCALE = 2  # a line's crop is enlarged this much: a noisy glyph of 25 px reads better at 50
_REREAD_PAD = 0.4  # of the line's height, around its box


def reread_unsure_lines(read: OcrPage, upright: Any, ocr: OcrFunction, limits: OcrLimits, page: int) -> OcrPage:
    """The page with each line read below `limits.reread_below` read again from its own crop, enlarged, and the
    better of the two readings kept (text and confidence; the box stays the page's). On a whole page the engine
    scales the page down and reads a noisy line among hundreds; alone and twice the size, its strokes are
    clearer. A label line read with low confidence (第十二条 at 0.4) would otherwise be dropped as noise, and the
    article's text cited under the article before it. The least sure lines first, at most
    `limits.max_rereads_per_page`."""
    from PIL import Image

    unsure = sorted(
        (i for i, ln in enumerate(read.lines) if ln.confidence < limits.reread_below and ln.text.strip()),
        key=lambda i: read.lines[i].confidence,
    )[: limits.max_rereads_per_page]
    if not unsure:
        return read
    lines = list(read.lines)
    width, height = upright.size
    for i in unsure:
        line = lines[i]
        pad = _REREAD_PAD * line.box.height * height
        crop = upright.crop(
            (
                max(0, round(line.box.x0 * width - pad)),
                max(0, round(line.box.y0 * height - pad)),
                min(width, round(line.box.x1 * width + pad)),
                min(height, round(line.box.y1 * height + pad)),
            )
        )
        if crop.width < 2 or crop.height < 2:
            continue
        crop = crop.resize((crop.width * REREAD_SCALE, crop.height * REREAD_SCALE), Image.Resampling.LANCZOS)
        png = images.to_png(crop)
        again = _with_timeout(functools.partial(ocr, png), limits.page_timeout_s, f"OCR of a line on page {page}")
        better = _middle_row(again)
        if better is not None and better[1] > line.confidence:
            lines[i] = OcrLine(better[0], better[1], line.box)
    return OcrPage(tuple(lines), read.width, read.height, read.engine)


def _middle_row(read: OcrPage) -> tuple[str, float] | None:
    """The text and confidence of the row across the middle of a line's crop (the padding may catch the edges
    of the lines above and below), its pieces joined left to right."""
    row = sorted(
        (ln for ln in read.lines if 0.25 < ln.box.centre_y < 0.75 and ln.text.strip()), key=lambda ln: ln.box.x0
    )
    if not row:
        return None
    chars = sum(len(ln.text) for ln in row)
    return "".join(ln.text.strip() for ln in row), sum(ln.confidence * len(ln.text) for ln in row) / max(1, chars)


def _with_timeout(call: Callable[[], OcrPage], timeout_s: float, what: str) -> OcrPage:
    """Run `call` on a daemon thread and wait at most `timeout_s`.

    An engine call cannot be interrupted from outside (ONNX Runtime, a gRPC call without a deadline), so a
    page that overruns is abandoned: its thread finishes in the background and the document is refused, so
    the ingest never hangs on one page.
    """
    result: list[OcrPage] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread below
            error.append(exc)

    worker = threading.Thread(target=run, name="ocr-page", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise OcrTimeout(f"{what} took longer than {timeout_s:g} s (page_timeout_s)")
    if error:
        raise error[0]
    return result[0]


def place_pages(read: Sequence[tuple[int, OcrPage]], limits: OcrLimits) -> OcrResult:
    """Cleaned, placed lines of OCR'd pages (page number, what the engine read), and each page's engine id."""
    ordered = [(number, reading_order(page)) for number, page in read]
    cleaned = remove_noise(ordered, min_confidence=limits.min_line_confidence)
    margin = left_margin(cleaned)
    out = {
        number - 1: place_lines(number, lines, margin=margin, aspect=_aspect(page))
        for (number, page), lines in zip(read, cleaned, strict=True)
    }
    engines = {number - 1: page.engine for number, page in read if page.engine}
    return out, engines


def _aspect(page: OcrPage) -> float:
    return page.height / page.width if page.width and page.height else 297 / 210
