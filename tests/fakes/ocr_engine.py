"""A scripted `OcrEngine` for fast tests: what each page "says" is given, in the order pages are read.

It cannot read pixels (the real engines are tested on real scans in tests/adapters/test_local_ocr.py and
tests/gcp/test_gcp_documentai.py); it records every image it was sent, answers page after page from its
script (an empty page once the script runs out), and can take its time (`delay_s`) to exercise the per-page
time limit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from regrag.domain.ocr import Box, OcrLine, OcrPage

# one line: (text, confidence); lines are stacked down the page at body-text spacing, each at the left margin
ScriptLine = tuple[str, float]


class ScriptedOcr:
    """The `OcrEngine` port answering from a script."""

    def __init__(self, pages: Sequence[Sequence[ScriptLine]], *, delay_s: float = 0.0) -> None:
        self.pages = [list(p) for p in pages]
        self.delay_s = delay_s
        self.images: list[bytes] = []
        self._lock = threading.Lock()

    @property
    def engine_id(self) -> str:
        return "scripted-ocr/1"

    def recognize(self, image: bytes) -> OcrPage:
        with self._lock:
            index = len(self.images)
            self.images.append(image)
        if self.delay_s:
            time.sleep(self.delay_s)
        script = self.pages[index] if index < len(self.pages) else []
        lines = tuple(OcrLine(text, confidence, _box(text, n)) for n, (text, confidence) in enumerate(script))
        return OcrPage(lines, 1240, 1754, self.engine_id)


def _box(text: str, row: int) -> Box:
    """A line box: the left margin (an indented first line for an article), 28 characters per full line."""
    indent = 0.05 if text.startswith("第") else 0.0
    width = min(len(text), 28) / 28 * 0.66
    top = 0.12 + row * 0.035
    return Box(0.17 + indent, top, min(0.17 + indent + width, 0.83), top + 0.025)
