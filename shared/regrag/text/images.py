"""Page images for OCR: decoded uploads and rasterised PDF pages, within limits, with red ink removed.

Limits are checked before any pixel is decoded: an image's header gives its size (Pillow reads it lazily),
a PDF page's size and its embedded images' pixel sizes come from pdfium without rendering. Pillow's own
decompression-bomb guard (`Image.MAX_IMAGE_PIXELS`) is kept as a second line and its warning is an error
here. Anything over a limit is `ImageLimitExceeded`, which the parser reports as an unsupported document.

Red ink is removed before OCR: by the national standard for official documents (GB/T 9704) the 红头 issuer
banner, the rule under it and the seal are red, and the body text is black, so whitening saturated red pixels
takes the banner and the seal off the page while keeping the black characters the seal covers.

A skewed scan is turned upright before OCR (`deskew`). Tilted by a few degrees, a line drifts by more than its
own height across the page: the engine's boxes of consecutive lines overlap, a paragraph's short last line
looks like residue lying on the line above, and indentation, which says where an article starts, is lost in
the drift of the left margin. On 电力设施保护条例 scanned at 4° that glued 4 of 32 articles to the article
before them (bench/ocr_accuracy.py). The angle is found by the projection-profile method (the angle at which
the dark pixels' row histogram is sharpest: text lines become narrow peaks; Postl 1986, the method of most
OCR front ends), on a 1,000-pixel copy of the page.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

IMAGE_FORMATS = ("png", "jpeg", "tiff")
DEFAULT_RASTER_DPI = 170  # A4 at 170 dpi is 1405 × 1987 px: RapidOCR's 2,000 px working size, no resampling


class ScanError(ValueError):
    """A scanned page or image cannot be read; the message names the page or the limit (not the document)."""


class ImageLimitExceeded(ScanError):
    """An image or page is over a configured limit; the message names the limit."""


class UnreadableImage(ScanError):
    """The bytes are not an image Pillow (or a PDF page pdfium) can decode."""


@dataclass(frozen=True)
class OcrLimits:
    """How much one document may make the parser decode and OCR, and when a page needs OCR.

    Attributes:
        max_pages: pages per PDF, or frames per image (a multi-page TIFF), OCR'd or not.
        max_image_pixels: pixels of one page image, decoded or rendered, and of any image inside a PDF page.
        page_timeout_s: longest wait for the OCR of one page.
        raster_dpi: resolution PDF pages are rendered at for OCR (lowered for oversized pages).
        min_text_chars: a PDF page whose text layer has fewer non-space characters is OCR'd.
        min_line_confidence: OCR lines read with less confidence are dropped.
        ocr_max_side_px: page images are scaled down to this longer side before OCR (a 600 dpi scan costs
            the engine four times the work of a 300 dpi one and reads no better).
        reread_below: a line read with less confidence is read again from its own crop, enlarged
            (regrag.text.scans.reread_unsure_lines); the better reading is kept.
        max_rereads_per_page: at most this many lines per page are read again (each is one more engine call).
    """

    max_pages: int = 500  # Document AI's batch limit for its OCR processor; a regulation is rarely longer
    max_image_pixels: int = 40_000_000  # Document AI's per-page image limit (40 megapixels)
    page_timeout_s: float = 60.0
    raster_dpi: int = DEFAULT_RASTER_DPI
    min_text_chars: int = 10
    min_line_confidence: float = 0.5
    ocr_max_side_px: int = 2400
    reread_below: float = 0.8
    max_rereads_per_page: int = 12


def sniff_image(data: bytes) -> str | None:
    """ "png", "jpeg" or "tiff" from the magic bytes, else None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith((b"II*\x00", b"MM\x00*")):
        return "tiff"
    return None


def image_pages(data: bytes, limits: OcrLimits) -> Iterator[Any]:
    """The pages of an image upload (one, or a multi-page TIFF's frames) as RGB Pillow images, checked.

    Frames are decoded one at a time, as the caller asks for them: a many-page TIFF never sits in memory whole.

    Raises:
        ImageLimitExceeded: too many frames, or a frame with too many pixels.
        UnreadableImage: not a decodable image.
    """
    img, frames = _guarded(lambda: _open(data))
    if frames > limits.max_pages:
        raise ImageLimitExceeded(f"{frames} pages (frames) in one image; the limit is {limits.max_pages} (max_pages)")
    for index in range(frames):
        yield _guarded(lambda index=index: _frame(img, index, limits))


def _open(data: bytes) -> tuple[Any, int]:
    from PIL import Image

    img = Image.open(io.BytesIO(data))
    return img, int(getattr(img, "n_frames", 1))


def _frame(img: Any, index: int, limits: OcrLimits) -> Any:
    img.seek(index)
    _check_pixels(img.size, limits, f"page {index + 1}")  # from the header, before any pixel is decoded
    img.load()
    return img.convert("RGB")


def _guarded(step: Any) -> Any:
    """Run a Pillow step with its decompression-bomb warning as an error and its failures as ours."""
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            return step()
        except ImageLimitExceeded:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ImageLimitExceeded(f"{exc} (max_image_pixels)") from exc
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
            raise UnreadableImage(f"unreadable image ({exc})") from exc


def _check_pixels(size: tuple[int, int], limits: OcrLimits, what: str) -> None:
    width, height = size
    if width * height > limits.max_image_pixels:
        raise ImageLimitExceeded(
            f"{what} is {width} × {height} = {width * height:,} pixels; the limit is "
            f"{limits.max_image_pixels:,} (max_image_pixels)"
        )


def open_pdf(data: bytes) -> Any:
    """A pypdfium2 document; UnreadableImage if pdfium cannot open it."""
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise UnreadableImage(f"pdfium cannot open the PDF ({exc})") from exc


def page_is_blank(pdf: Any, index: int) -> bool:
    """Whether page `index` draws nothing at all (no image, path or text object): nothing to OCR."""
    page = pdf[index]
    try:
        return not any(True for _ in page.get_objects(max_depth=2))
    finally:
        page.close()


def render_pdf_page(pdf: Any, index: int, limits: OcrLimits) -> Any:
    """Page `index` of a PDF as an RGB Pillow image at `limits.raster_dpi` (lower for oversized pages).

    Raises:
        ImageLimitExceeded: an image embedded in the page is over the pixel limit (pdfium would decode it).
    """
    import pypdfium2.raw as pdfium_c

    page = pdf[index]
    try:
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=2):
            width, height = obj.get_px_size()
            _check_pixels((width, height), limits, f"an image on page {index + 1}")
        width_pt, height_pt = page.get_size()
        scale = limits.raster_dpi / 72
        if width_pt * height_pt * scale * scale > limits.max_image_pixels:
            scale = (limits.max_image_pixels / max(1.0, width_pt * height_pt)) ** 0.5  # shrink, never refuse
        bitmap = page.render(scale=scale, grayscale=False)
        try:
            return bitmap.to_pil().convert("RGB")
        finally:
            bitmap.close()
    finally:
        page.close()


def remove_red_ink(img: Any) -> Any:
    """The image with saturated red pixels (红头 banner, rule, seal) turned white; black text stays."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(img.convert("RGB")).astype(np.int16)
    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    mask = (red > 120) & (red - np.maximum(green, blue) > 50)
    if not mask.any():
        return img
    out = pixels.astype(np.uint8).copy()
    out[mask] = 255
    return Image.fromarray(out, "RGB")


MAX_SKEW_DEG = 8.0  # a scan tilted more than this is not a tilted scan (a landscape page, a photo)
MIN_SKEW_DEG = 0.25  # below this the drift across a page is under half a line: not worth a resampling
_SKEW_SIDE_PX = 1000
_SKEW_SAMPLE = 150_000  # dark pixels the angle is measured on (a sample: the profile's shape needs no more)
_MIN_INK_PX = 2_000  # fewer dark pixels than this (a nearly blank page): no angle to measure


def skew_angle(img: Any) -> float:
    """The angle (degrees, counter-clockwise positive as Pillow's `rotate` takes it) that makes the page's text
    lines horizontal; 0.0 when the page has too little ink, or is already upright within MIN_SKEW_DEG."""
    import numpy as np
    from PIL import Image

    grey = img.convert("L")
    scale = _SKEW_SIDE_PX / max(grey.size)
    if scale < 1:
        grey = grey.resize(
            (max(1, round(grey.width * scale)), max(1, round(grey.height * scale))), Image.Resampling.BILINEAR
        )
    pixels = np.asarray(grey, dtype=np.uint8)
    ys, xs = np.nonzero(pixels < _otsu_threshold(pixels))
    if len(ys) < _MIN_INK_PX:
        return 0.0
    if len(ys) > _SKEW_SAMPLE:
        keep = np.random.default_rng(0).choice(len(ys), _SKEW_SAMPLE, replace=False)
        ys, xs = ys[keep], xs[keep]
    y, x = ys.astype(np.float64), xs.astype(np.float64)

    def sharpness(deg: float) -> float:
        # the row each dark pixel falls on once the page is turned by `deg`; the sum of squared row counts is
        # largest when the text lines are level (all of a line's ink on few rows)
        rad = np.deg2rad(deg)
        rows = np.round(y * np.cos(rad) - x * np.sin(rad)).astype(np.int64)
        counts = np.bincount(rows - rows.min()).astype(np.float64)
        return float(np.dot(counts, counts))

    coarse = max(np.arange(-MAX_SKEW_DEG, MAX_SKEW_DEG + 1e-9, 0.5), key=sharpness)
    best = float(max(np.arange(coarse - 0.5, coarse + 0.5 + 1e-9, 0.05), key=sharpness))
    return round(best, 2) if abs(best) >= MIN_SKEW_DEG and sharpness(best) > sharpness(0.0) else 0.0


def _otsu_threshold(pixels: Any) -> int:
    """The grey level that best separates ink from paper (Otsu 1979): noise-tolerant where a fixed 128 is not."""
    import numpy as np

    hist = np.bincount(pixels.ravel(), minlength=256).astype(np.float64)
    p = hist / max(1.0, hist.sum())
    weight, mean = np.cumsum(p), np.cumsum(p * np.arange(256))
    between = (mean[-1] * weight - mean) ** 2 / np.maximum(weight * (1 - weight), 1e-12)
    return int(np.argmax(between))


def deskew(img: Any) -> tuple[Any, float]:
    """The page turned upright, and the angle it was turned by. A turned page comes back in grey (what OCR gets:
    `to_png`; a third of the work of turning colour), white where the turn uncovers the corners."""
    from PIL import Image

    angle = skew_angle(img)
    if not angle:
        return img, 0.0
    return img.convert("L").rotate(angle, resample=Image.Resampling.BILINEAR, fillcolor=255), angle


def fit(img: Any, max_side_px: int) -> Any:
    """The image scaled down (never up) so that its longer side is at most `max_side_px`."""
    from PIL import Image

    longer = max(img.size)
    if longer <= max_side_px:
        return img
    scale = max_side_px / longer
    return img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))), Image.Resampling.LANCZOS)


def to_png(img: Any) -> bytes:
    """PNG bytes of a page image (grayscale: what OCR needs, and a third of the bytes)."""
    buf = io.BytesIO()
    img.convert("L").save(buf, "PNG", compress_level=1)
    return buf.getvalue()
