"""Sentence and clause boundaries in Chinese legal text."""

from __future__ import annotations

import re

SENTENCE_END = "。！？；!?;"
# A sentence runs to its end mark (and any closing quote or bracket after it), or to the end of the line.
_SENTENCE_RE = re.compile(rf"[^\n{SENTENCE_END}]*(?:[{SENTENCE_END}]+[”’」』）)]*|\n|$)")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Half-open spans of the sentences of `text`, whitespace trimmed, in order; empty ones dropped.

    A sentence ends at 。！？； (the semicolon ends a clause that stands alone in enumerations) or at a line end,
    so items of a list (（一）……；) come out one per span.
    """
    spans: list[tuple[int, int]] = []
    for m in _SENTENCE_RE.finditer(text):
        start, end = m.start(), m.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` (see `sentence_spans`)."""
    return [text[s:e] for s, e in sentence_spans(text)]
