"""Text normalisation that remembers where every character came from.

Quotes must be verbatim, so the stored text is never rewritten: search and structure detection run on a
normalised copy, and every normalised offset maps back to the stored text through `NormalizedText.to_source`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Full-width ASCII variants that are safe to fold: letters, digits and the symbols that occur inside numbers,
# units and codes (（１）, ５０％, ＧＢ／Ｔ). Chinese sentence punctuation (，。；：？！、) is kept: sentence
# splitting and quoting depend on it, and folding ，→, would change how jieba segments.
_FOLD = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
for _keep in "，。；：？！、":
    _FOLD.pop(ord(_keep), None)
_SPACE_RUN = re.compile(r"[ \t]+")
_SPACES = {0x3000, 0x00A0, 0x2002, 0x2003, 0x2009, 0x200B, 0xFEFF}
_DROPPED = re.compile("[\u200b\ufeff]")  # zero-width: normalize drops them
# what normalize does to each character when none is dropped or merged (no CRLF pair, no zero-width)
_ONE_TO_ONE: dict[int, str | int] = {
    ord("\r"): "\n",
    **{code: " " for code in _SPACES if code not in (0x200B, 0xFEFF)},
    **_FOLD,
}


def to_halfwidth(text: str) -> str:
    """Fold full-width ASCII variants (Ａ１（％) to half-width; keep Chinese punctuation."""
    return text.translate(_FOLD)


@dataclass(frozen=True)
class NormalizedText:
    """A normalised text and, for each of its characters, the offset of its source character."""

    text: str
    offsets: tuple[int, ...]
    source_len: int

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """Map a half-open normalised span [start, end) to the source span that produced it."""
        if start >= end:
            pos = self.offsets[start] if start < len(self.offsets) else self.source_len
            return pos, pos
        return self.offsets[start], self.offsets[end - 1] + 1


def normalize(source: str) -> NormalizedText:
    """Normalise for parsing and search: CRLF/CR → LF, odd spaces → ' ', full-width ASCII → half-width.

    Every output character keeps the offset of the source character it came from, so chunk boundaries found
    on the normalised text cut the stored text at the same places.
    """
    n = len(source)
    if "\r\n" not in source and not _DROPPED.search(source):
        # every character maps to one character at its own offset: one C-level translate (what the loop
        # does, at a hundredth of the time: the loop was a quarter of an ingest)
        return NormalizedText(source.translate(_ONE_TO_ONE), tuple(range(n)), n)
    return _normalize_each(source)


def _normalize_each(source: str) -> NormalizedText:
    """normalize, one character at a time (CRLF pairs merge, zero-width characters drop)."""
    out: list[str] = []
    offsets: list[int] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        code = ord(ch)
        if ch == "\r":
            out.append("\n")
            offsets.append(i)
            if i + 1 < n and source[i + 1] == "\n":
                i += 1  # the LF of a CRLF pair is dropped; the pair maps to the CR
        elif code in _SPACES:
            if code in (0x200B, 0xFEFF):  # zero-width: drop
                i += 1
                continue
            out.append(" ")
            offsets.append(i)
        else:
            out.append(chr(_FOLD.get(code, code)))
            offsets.append(i)
        i += 1
    return NormalizedText("".join(out), tuple(offsets), n)


def squash_spaces(text: str) -> str:
    """Collapse runs of spaces and tabs (not newlines) to one space; used on headings and titles."""
    return _SPACE_RUN.sub(" ", text).strip()


def strip_whitespace(text: str) -> str:
    """Remove every whitespace character; used to compare texts extracted from different formats."""
    return "".join(text.split())
