"""Local OCR: RapidOCR (PP-OCRv6 small detection and recognition, PP-OCR orientation classifier) on ONNX Runtime.

The `rapidocr` wheel carries the three ONNX models (det 9.9 MB, rec 21.2 MB with its Chinese character table
in the model's metadata, cls 0.6 MB); they are passed by path, so RapidOCR's downloader (which fetches
missing models from a model hub) never runs. Nothing is loaded until the first page: local mode without
scans never pays the ~1 s model load or the memory.

One engine serves one page at a time: RapidOCR keeps per-call settings on the shared instance, and ONNX
Runtime already spreads one page over the cores (`threads`). The parser bounds the time per page
(`OcrLimits.page_timeout_s`); the engine bounds the work per page by working at most `max_side_px` pixels on
the longer side.
"""

from __future__ import annotations

import logging
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from regrag import logs
from regrag.domain.errors import InvalidInput
from regrag.domain.ocr import Box, OcrLine, OcrPage

log = logs.get("ocr.local")

MODELS = {  # RapidOCR's configuration key → file in the wheel's models/ folder
    "Det": "PP-OCRv6_det_small.onnx",
    "Rec": "PP-OCRv6_rec_small.onnx",
    "Cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
}


class RapidOcrEngine:
    """The `OcrEngine` port on RapidOCR with the models from its wheel."""

    def __init__(self, *, threads: int = 0, max_side_px: int = 2000, use_orientation: bool = True) -> None:
        """Configure; nothing is loaded yet.

        Args:
            threads: ONNX Runtime intra-op threads (0: ONNX Runtime's choice, one per core).
            max_side_px: longer side the page is scaled down to before detection (RapidOCR's default 2000 px
                keeps 三号 body text of an A4 page at ~170 dpi, about 30 px per character).
            use_orientation: run the 0/180° line orientation classifier (upside-down scans).
        """
        self.threads = threads
        self.max_side_px = max_side_px
        self.use_orientation = use_orientation
        self._engine: Any = None
        self._lock = threading.Lock()
        self._version = _version()

    @property
    def engine_id(self) -> str:
        """Engine and model, stored with the document."""
        return f"rapidocr-{self._version}/PP-OCRv6-small"

    def _load(self) -> Any:
        import rapidocr
        from rapidocr import RapidOCR

        models = Path(rapidocr.__file__).parent / "models"
        params: dict[str, Any] = {
            "Global.log_level": "warning",
            "Global.use_cls": self.use_orientation,
            "Global.max_side_len": self.max_side_px,
            "EngineConfig.onnxruntime.intra_op_num_threads": self.threads or -1,
        }
        for section, filename in MODELS.items():
            path = models / filename
            if not path.is_file():  # never let RapidOCR fall back to downloading it
                raise FileNotFoundError(f"RapidOCR model {path} is missing; reinstall rapidocr from requirements.txt")
            params[f"{section}.model_path"] = str(path)
        started = time.perf_counter()
        engine = RapidOCR(params=params)
        logs.event(log, logging.INFO, "ocr engine loaded", engine=self.engine_id,
                   ms=round((time.perf_counter() - started) * 1000))  # fmt: skip
        return engine

    def recognize(self, image: bytes) -> OcrPage:
        """The lines on a page image, with confidence and box (fractions of the image size)."""
        import cv2
        import numpy as np

        pixels = cv2.imdecode(np.frombuffer(image, dtype=np.uint8), cv2.IMREAD_COLOR)
        if pixels is None:
            raise InvalidInput("OCR: the page image cannot be decoded")
        height, width = pixels.shape[:2]
        with self._lock:
            if self._engine is None:
                self._engine = self._load()
            started = time.perf_counter()
            result = self._engine(pixels)
        lines = []
        for points, text, score in zip(result.boxes if result.boxes is not None else (), result.txts or (),
                                       result.scores or (), strict=False):  # fmt: skip
            box = Box.around([(float(x), float(y)) for x, y in points], width, height)
            lines.append(OcrLine(str(text), float(score), box))
        logs.event(log, logging.DEBUG, "page recognised", lines=len(lines),
                   ms=round((time.perf_counter() - started) * 1000))  # fmt: skip
        return OcrPage(tuple(lines), width, height, self.engine_id)


def _version() -> str:
    try:
        return metadata.version("rapidocr")
    except metadata.PackageNotFoundError:
        return "missing"
