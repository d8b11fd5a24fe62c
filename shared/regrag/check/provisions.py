"""A stored article as a lawyer cites it: paragraphs (款) and items (项), and where a quotation lies in it.

A paragraph is a line of the article that is not an item; an item line ((一) / （一） / 一、) belongs to the
paragraph before it, and its number is its marker's. Quotations are compared after NFKC (full-width forms and
punctuation folded), with whitespace removed and the quotation marks inside unified: what a memo's typing
changes, never the words. An ellipsis (…… / ...) in a quotation marks an omission: the pieces must appear in
order. Every span reported maps back to the stored text, so what is shown is the corpus's own characters.
"""

from __future__ import annotations

import contextlib
import functools
import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, Levenshtein

from regrag.text.legal import ITEM_RE
from regrag.text.numerals import parse_numeral

_ELLIPSIS_RE = re.compile(r"……|…|\.{3,}|。。。")
_EDGE_PUNCTUATION = "。;,:、.!?！？\"'"  # after folding (，→, ；→; ：→:); 。 and 、 stay as they are
_QUOTE_MARKS = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "「": '"', "」": '"', "『": "'", "』": "'"})


@dataclass(frozen=True)
class Folded:
    """A text folded for comparison, with each folded character's offset in the original."""

    text: str
    offsets: tuple[int, ...]
    source: str  # the original text

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) of folded [start, end)."""
        if start >= end:
            pos = self.offsets[start] if start < len(self.offsets) else (self.offsets[-1] + 1 if self.offsets else 0)
            return pos, pos
        return self.offsets[start], self.offsets[end - 1] + 1


_FOLDS: dict[int, str] = {}  # character → what it folds to ("" for whitespace), filled as characters are seen
_EXPANDING: set[str] = set()  # characters that fold to more than one (㎡ → m2)


def _fold_char(ch: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", ch).translate(_QUOTE_MARKS) if not c.isspace())


def fold(text: str) -> Folded:
    """`text` folded for comparison (module docstring), with the offsets back to it. One C-level translate when
    every character folds to at most one (all but a few symbols: ㎡, ①)."""
    seen = set(text)
    for ch in seen:
        if ord(ch) not in _FOLDS:
            _FOLDS[ord(ch)] = _fold_char(ch)
            if len(_FOLDS[ord(ch)]) > 1:
                _EXPANDING.add(ch)
    if not (seen & _EXPANDING):
        folded = text.translate(_FOLDS)
        if len(folded) == len(text):
            return Folded(folded, tuple(range(len(text))), text)
        return Folded(folded, tuple(i for i, ch in enumerate(text) if _FOLDS[ord(ch)]), text)
    chars: list[str] = []
    offsets: list[int] = []
    for i, ch in enumerate(text):
        out = _FOLDS[ord(ch)]
        chars.append(out)
        offsets.extend([i] * len(out))
    return Folded("".join(chars), tuple(offsets), text)


@functools.lru_cache(maxsize=4096)
def pieces(quote: str) -> tuple[str, ...]:
    """The folded pieces of a quotation between its omission marks, without the punctuation at either end of
    each: where a quotation stops is the memo's sentence, not the law's (an item quoted as “…构筑物。” ends in ；
    in the law)."""
    parts = (fold(part).text.strip(_EDGE_PUNCTUATION) for part in _ELLIPSIS_RE.split(quote))
    return tuple(p for p in parts if p)


@dataclass(frozen=True)
class Paragraph:
    number: int
    start: int  # in the article text
    end: int
    items: tuple[tuple[int, int, int], ...]  # (item number, start, end)


@dataclass(frozen=True)
class Provision:
    """One stored article: its label, verbatim text and structure."""

    label: str
    text: str

    @cached_property
    def folded(self) -> Folded:
        return fold(self.text)

    @cached_property
    def paragraphs(self) -> tuple[Paragraph, ...]:
        out: list[Paragraph] = []
        items: list[tuple[int, int, int]] = []
        pos = 0
        start = end = None
        for line in self.text.split("\n"):
            line_start, line_end = pos, pos + len(line)
            pos = line_end + 1
            if not line.strip():
                continue
            item = ITEM_RE.match(line) if out or start is not None else None
            if item and start is not None:
                marker = re.sub(r"[（()）、.．\s]", "", item.group("label"))
                with contextlib.suppress(ValueError):  # a marker that is no numeral: not a numbered item
                    items.append((parse_numeral(marker), line_start, line_end))
                end = line_end
                continue
            if start is not None and end is not None:
                out.append(Paragraph(len(out) + 1, start, end, tuple(items)))
            start, end, items = line_start, line_end, []
        if start is not None and end is not None:
            out.append(Paragraph(len(out) + 1, start, end, tuple(items)))
        return tuple(out)

    def part(self, paragraph: int | None, item: int | None) -> tuple[int, int] | None:
        """[start, end) of 第N款 / 第（M）项 in the text (the whole article when neither is named); None when the
        article has no such paragraph or item. An item named without a paragraph is looked for in every one.

        Only a structure the stored text shows can prove a part absent: an article stored as one line (its
        paragraphs not on lines of their own) or a paragraph without item lines (items run inline) gives the
        whole article or paragraph instead of None."""
        whole = (0, len(self.text))
        if paragraph is None and item is None:
            return whole
        paras = self.paragraphs
        if paragraph is not None:
            if len(paras) < 2:
                return whole
            if paragraph > len(paras):
                return None
            paras = (paras[paragraph - 1],)
        if item is None:
            return paras[0].start, paras[0].end
        if not any(p.items for p in paras):
            return (paras[0].start, paras[0].end) if paragraph is not None else whole
        for p in paras:
            for number, s, e in p.items:
                if number == item:
                    return s, e
        return None

    def find(self, quote: str) -> tuple[int, int] | None:
        """The [start, end) in the text of a verbatim quotation (pieces in order), or None."""
        parts = pieces(quote)
        if not parts:
            return None
        folded = self.folded.text
        pos = 0
        first = None
        for part in parts:
            at = folded.find(part, pos)
            if at < 0:
                return None
            first = at if first is None else first
            pos = at + len(part)
        assert first is not None
        return self.folded.span(first, pos)

    @cached_property
    def _numeric(self) -> str:
        return arabic_numerals(self.folded.text)

    def same_words(self, quote: str) -> bool:
        """Whether a quotation that is not verbatim has the article's words with its figures written the other
        way (10万元 for 十万元, 2024年 for 二〇二四年): the same text, not a misquotation."""
        parts = [arabic_numerals(p) for p in pieces(quote)]
        pos = 0
        for part in parts:
            at = self._numeric.find(part, pos)
            if at < 0:
                return False
            pos = at + len(part)
        return bool(parts)


_NUMERAL_RUN_RE = re.compile(r"[零〇一二三四五六七八九十百千万两]+")
_CN_DIGIT = str.maketrans("零〇一二三四五六七八九两", "001234567892")


def arabic_numerals(text: str) -> str:
    """Every run of Chinese numerals in Arabic digits (十万 → 100000, 二〇二四 → 2024), and 10万 → 100000 too, so
    that either spelling of a figure compares equal. Words that contain a numeral (统一, 一般) change on both
    sides alike."""
    text = re.sub(r"([0-9]+)万", lambda m: str(int(m.group(1)) * 10000), text)  # before 万 reads as a numeral
    return _NUMERAL_RUN_RE.sub(_to_digits, text)


def _to_digits(m: re.Match[str]) -> str:
    run = m.group(0)
    if not any(unit in run for unit in "十百千万"):
        return run.translate(_CN_DIGIT)  # read digit by digit: 二〇二四
    try:
        return str(parse_numeral(run))
    except ValueError:
        return run


@dataclass(frozen=True)
class Closest:
    """The span of an article closest to a quotation that is not in it, and how they differ."""

    start: int
    end: int
    text: str
    similarity: float  # 0–1
    diff: tuple[dict[str, str], ...]


def closest_span(quote: str, provision: Provision) -> Closest:
    """The span of `provision` that best aligns with `quote` (rapidfuzz's partial alignment of the folded texts,
    widened to whole characters of the stored text), with the character diff quotation → law."""
    q = fold(quote)
    law = provision.folded
    if not q.text or not law.text:
        return Closest(0, 0, "", 0.0, ())
    aligned = fuzz.partial_ratio_alignment(q.text, law.text)
    s, e = (aligned.dest_start, aligned.dest_end) if aligned else (0, min(len(law.text), len(q.text)))
    # the alignment window is the quotation's length: widen it to the best-scoring span within a few characters,
    # so an insertion or deletion (50万 for 100万) is shown as one, not as a shifted tail
    best = (Levenshtein.normalized_similarity(q.text, law.text[s:e]), s, e)
    slack = max(2, len(q.text) // 5)
    for moving_start in (True, False):  # the start first, then the end: a few dozen comparisons, not slack²
        _, s, e = best
        for delta in range(-slack, slack + 1):
            ns, ne = (s + delta, e) if moving_start else (s, e + delta)
            if 0 <= ns < ne <= len(law.text):
                score = Levenshtein.normalized_similarity(q.text, law.text[ns:ne])
                if score > best[0]:
                    best = (score, ns, ne)
    score, s, e = best
    start, end = law.span(s, e)
    diff = char_diff(q, (0, len(q.text)), law, (s, e))
    return Closest(start, end, provision.text[start:end], round(score, 3), tuple(diff))


def char_diff(
    a: Folded, a_range: tuple[int, int], b: Folded, b_range: tuple[int, int], names: tuple[str, str] = ("quote", "law")
) -> list[dict[str, str]]:
    """Opcodes turning folded `a`[a_range] into folded `b`[b_range], each side shown in its original characters:
    [{op: equal|replace|delete|insert, <names[0]>: …, <names[1]>: …}]."""
    x = a.text[a_range[0] : a_range[1]]
    y = b.text[b_range[0] : b_range[1]]
    spans = _readable(
        [(op.tag, op.src_start, op.src_end, op.dest_start, op.dest_end) for op in Indel.opcodes(x, y)], x, y
    )
    out = []
    for tag, i1, i2, j1, j2 in spans:
        left = a.source[slice(*a.span(a_range[0] + i1, a_range[0] + i2))]
        right = b.source[slice(*b.span(b_range[0] + j1, b_range[0] + j2))]
        out.append({"op": tag, names[0]: left, names[1]: right})
    return out


_NUMBER_CHARS = frozenset("0123456789.零〇一二三四五六七八九十百千万亿两")
Span = tuple[str, int, int, int, int]


def _readable(ops: list[Span], x: str, y: str) -> list[Span]:
    """Adjacent edits joined into one, and a number touched by an edit shown whole on both sides: 50万 → 100万
    reads [50→100]万, not 5 deleted, 10 inserted and a 0 kept."""
    merged: list[Span] = []
    for op in ops:
        if merged and op[0] != "equal" and merged[-1][0] != "equal":
            _, i1, _, j1, _ = merged[-1]
            merged[-1] = ("replace", i1, op[2], j1, op[4])
        else:
            merged.append(op)
    out: list[Span] = []
    for k, (tag, i1, i2, j1, j2) in enumerate(merged):
        if tag == "equal":
            out.append((tag, i1, i2, j1, j2))
            continue
        # pull the digits of the number this edit touches out of the equal spans around it
        while out and out[-1][0] == "equal" and out[-1][2] > out[-1][1] and x[out[-1][2] - 1] in _NUMBER_CHARS:
            _, e1, e2, f1, f2 = out[-1]
            out[-1] = ("equal", e1, e2 - 1, f1, f2 - 1)
            i1, j1 = i1 - 1, j1 - 1
        if out and out[-1][0] == "equal" and out[-1][1] == out[-1][2]:
            out.pop()
        nxt = merged[k + 1] if k + 1 < len(merged) else None
        while nxt is not None and nxt[0] == "equal" and nxt[1] < nxt[2] and x[nxt[1]] in _NUMBER_CHARS:
            nxt = ("equal", nxt[1] + 1, nxt[2], nxt[3] + 1, nxt[4])
            i2, j2 = i2 + 1, j2 + 1
        if nxt is not None:
            merged[k + 1] = nxt
        kind = "replace" if i2 > i1 and j2 > j1 else ("delete" if i2 > i1 else "insert")
        out.append((kind, i1, i2, j1, j2))
    return [op for op in out if op[0] != "equal" or op[2] > op[1]]
