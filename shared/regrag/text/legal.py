"""Legal structure of Chinese regulations: 编/分编/章/节 headings, 第X条 articles, numerals, cross-references.

All patterns run on normalised text (see `normalize`), where U+3000 and NBSP are already plain spaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from regrag.text.numerals import (
    ARTICLE_LABEL,
    HEADING_LABEL,
    ITEM_LABEL,
    LABEL_DIGITS,
    LABEL_NUMBER,
    int_to_chinese,
    parse_numeral,
)

# An article starts a line: optional indent or Markdown marks, 第X条 (or 第X条之Y), then whitespace or the end
# of the line. The trailing whitespace is what tells "第二十条 电力..." (an article) from "第二十条规定的..." (a
# reference that a PDF line wrap happened to put at the start of a line).
ARTICLE_RE = re.compile(rf"^[ \t]*(?:#+[ \t]*)?{ARTICLE_LABEL}(?=\s|$)", re.M)
# the opening of a quote: its article label and, when the quote starts later in the article, the …… after it
# (第二十三条……技术服务机构…): a quote's label is followed by text or by ……, not always by a space as in a document
QUOTE_OPENING_RE = re.compile(rf"^[ \t]*{ARTICLE_LABEL}\s*(?:…+\s*)?")
# A numbered heading: 第X编 / 第X分编 / 第X章 / 第X节, then a short name without sentence punctuation.
HEADING_RE = re.compile(
    rf"^[ \t]*(?P<marks>#+[ \t]*)?{HEADING_LABEL}(?:[ \t]+(?P<name>[^\n。；，,;]{{0,40}}))?[ \t]*$", re.M
)
# Headings without a number that regulations use; outside Markdown they count only as a line of their own.
NAMED_HEADING_RE = re.compile(r"^[ \t]*(?P<marks>#+[ \t]*)?(?P<name>总则|分则|附则|序言)[ \t]*$")
MARKDOWN_HEADING_RE = re.compile(r"^[ \t]*(?P<marks>#{1,6})[ \t]+(?P<name>\S.*?)[ \t]*$")
# Material after the last article: 附： / 附件 / 附表二 / 附录 / 附件：名称, on a line of its own.
APPENDIX_RE = re.compile(
    rf"^[ \t]*(?:#+[ \t]*)?(?P<label>附(?:件|表|录)?[{LABEL_DIGITS}0-9]*)[ \t]*(?:[:：][^\n。]{{0,40}})?$"
)
# Numbered items used by texts without articles: （一） (一) 一、 1. 1、
ITEM_RE = re.compile(rf"^[ \t]*{ITEM_LABEL}")
# "依照本法第二十条", "本条例第三十五条第二款", "第十条、第十一条": references inside a sentence.
CROSS_REF_RE = re.compile(
    rf"(?P<scope>本法|本条例|本规定|本办法|本细则|本决定)?{ARTICLE_LABEL}(?:第(?P<para>{LABEL_NUMBER})款)?"
)

HEADING_LEVELS = {"编": 1, "分编": 2, "章": 3, "节": 4}
NAMED_HEADING_LEVEL = 3  # 总则 / 附则 stand where a 章 would


def article_label(main: int, sub: int = 0) -> str:
    """ArticleNumber parts → the label as regulations write it: (20, 1) → '第二十条之一'."""
    label = f"第{int_to_chinese(main)}条"
    return f"{label}之{int_to_chinese(sub)}" if sub else label


@dataclass(frozen=True)
class CrossReference:
    """A reference to another article inside a sentence, with its span in the text it was found in."""

    label: str
    start: int
    end: int
    scope: str | None
    # the span of the article number alone (第二十条 in 本法第二十条第二款): what a link should cover
    label_start: int = 0
    label_end: int = 0


def find_cross_references(text: str) -> list[CrossReference]:
    """References to articles of the same document ('依照本法第二十条'), not article starts.

    A 第X条 that starts a line and is followed by whitespace is the article itself, not a reference.
    References to another act ('《电力法》第十条') are skipped: they name a different document.
    """
    refs: list[CrossReference] = []
    for m in CROSS_REF_RE.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not text[line_start : m.start()].strip(" \t#") and not m.group("scope"):
            after = text[m.end() : m.end() + 1]
            if after == "" or after.isspace():
                continue  # the article's own label
        before = text[max(0, m.start() - 1) : m.start()]
        if before == "》" and not m.group("scope"):
            continue  # 《某法》第十条: another document
        main = parse_numeral(m.group("num"))
        sub = parse_numeral(m.group("sub")) if m.group("sub") else 0
        label = article_label(main, sub)
        label_end = m.end("sub") if m.group("sub") else m.end("num") + 1  # + 1: the 条 after the number
        refs.append(CrossReference(label, m.start(), m.end(), m.group("scope"), m.start("num") - 1, label_end))
    return refs


# how much of a referenced article is read (`referenced_text`): the longest articles run to thousands of characters,
# and what a reference points at is their opening rule, not every 款
REFERENCED_CHARS = 2000


def referenced_text(document: str, text: str, own: str | None = None) -> str:
    """The text of the articles of `document` that `text` refers to (依照本条例第四十四条第（二）项至第（五）项,
    违反本法第三十条规定的), each from its label to the next article, at most REFERENCED_CHARS of each; not the article
    `own` (the one `text` is part of). An item that says only 因本条例第四十四条…情形的 is about what that article
    lists: its words are the ones a question about the case uses (欠电费 → the 停电 notice period)."""
    labels = dict.fromkeys(r.label for r in find_cross_references(text) if r.label != own)
    if not labels:
        return ""
    spans = _article_spans(document)
    return "".join(document[a:b][:REFERENCED_CHARS] for a, b in (spans[label] for label in labels if label in spans))


@lru_cache(maxsize=16)
def _article_spans(document: str) -> dict[str, tuple[int, int]]:
    """Each article label of a document → where its text lies (after the label, up to the next article); the
    first article of a label wins (a text quoting another act's articles in an appendix repeats labels)."""
    starts = list(ARTICLE_RE.finditer(document))
    if not starts:
        return {}
    ends = [found.start() for found in starts[1:]] + [len(document)]
    spans: dict[str, tuple[int, int]] = {}
    for found, end in zip(starts, ends, strict=True):
        spans.setdefault(found.group("label"), (found.end(), end))
    return spans


_LOOSE_ARTICLE_RE = re.compile(
    rf"^\s*(?:第\s*)?(?P<num>{LABEL_NUMBER})\s*(?:条)?\s*(?:之\s*(?P<sub>{LABEL_NUMBER}))?\s*$"
)


def canonical_article_label(raw: str) -> str | None:
    """An article as a user types it (第3条, 3, 第三条, 第十条之一, 10之1) → the label regulations use (第三条,
    第十条之一); None when it names no article number."""
    import unicodedata

    m = _LOOSE_ARTICLE_RE.match(unicodedata.normalize("NFKC", raw))
    if m is None:
        return None
    try:
        main = parse_numeral(m.group("num"))
        sub = parse_numeral(m.group("sub")) if m.group("sub") else 0
    except ValueError:
        return None
    return article_label(main, sub) if main > 0 else None
