"""The inner structure of one article, as a lawyer cites it: 款 (paragraphs), 项 (items, （一）…) and the lead-in
sentence that introduces a list of items (…有下列情形之一的：).

An article's text is read into units, each a verbatim span: a plain sentence, a lead-in (a sentence ending in
：, followed by items) or an item. A unit knows its paragraph (款, counted from 1: a line that is not an item
starts one) and, for an item, its number (项) and its lead-in. Quoting uses this to show a span whole: an item
with the sentence that says what the list is, a lead-in with its items, and a citation as precise as the span
(第二十八条第（二）项, 第十条第二款).

Lines without markers that follow a unit ending in ： and are not sentences (a table's rows: 1—10千伏 5米; a list's
entries: 委员长，…委员若干人。; items whose （一） the source lost: 研究制定…规范；, in 40 lists of 20 corpus documents)
are that unit's items too, in its paragraph: quoted alone, "500千伏 20米" says nothing, and a lead-in without them
is a fragment. A list whose lead-in ends in 。 (…可以中止调处，并向本级人民政府报告。/（一）…) is introduced by the
sentence before its item （一）. With both, items without a lead-in in the corpus 126 → 35 (bench/provisions.py).

Lists nest and go on: an item ending in ： introduces the items of another marker style after it (（二）权属证明，
包括：/ 1.…), and the outer list resumes at its next marker; a paragraph between two items of one list
(电力设施保护条例 第十条: (一)'s table, a paragraph on crowded areas, then (二)) is part of the item before it, not a
new 款, so (二) keeps the lead-in 电力线路保护区： and is cited 第十条第（二）项. A lead-in whose first items share its
line (…依法给予处分： （一）…； （二）…；) is split into them. Items without a lead-in 35 → 6 (lists whose markers or
lead-in the source lost).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from regrag.text.legal import ARTICLE_RE, ITEM_RE
from regrag.text.numerals import ARABIC, ITEM_LABEL, LABEL_DIGITS, int_to_chinese, parse_numeral
from regrag.text.sentences import sentence_spans

SENTENCE = "sentence"
LEAD_IN = "lead_in"
ITEM = "item"

LEAD_IN_END = ("：", ":")  # what ends a line that introduces a list
_SENTENCE_END = re.compile(r"[。；;！!？?]")
_ENTRY_END = ("，", ",", "、", "；", ";")
_MARKER_NUMBER = re.compile(r"[（(]?(?P<num>[^）)、.．]+)")


@dataclass(frozen=True)
class Unit:
    """One sentence, lead-in or item of an article: `[start, end)` in the text it was read from."""

    kind: str
    start: int
    end: int
    paragraph: int
    item: int | None = None  # the item's number (（二） → 2)
    marker: str | None = None  # the item's marker as written: （二） / (二) / 二、 / 2.
    lead_in: int | None = None  # the index of the item's lead-in among the units (None: a list without one)
    # a lead-in's paragraph start: the sentences before it on its line belong to what introduces the list
    # (有下列行为之一的，由…责令改正，处…罚款；情节严重的，…：): shown with it, read with its items
    intro: int | None = None

    @property
    def shown_start(self) -> int:
        """Where a quote of this unit starts: a lead-in from its paragraph's start, anything else from its own."""
        return self.intro if self.intro is not None else self.start


@dataclass(frozen=True)
class Provisions:
    """An article read into units. `label` is the span of its 第X条 label (None for text without one)."""

    text: str
    units: tuple[Unit, ...]
    label: tuple[int, int] | None
    paragraphs: int

    def items_of(self, lead_in: int) -> list[int]:
        """The indexes of the items a lead-in introduces, in order."""
        return [i for i, u in enumerate(self.units) if u.lead_in == lead_in]

    def span(self, index: int) -> str:
        unit = self.units[index]
        return self.text[unit.start : unit.end]


def read_provisions(text: str) -> Provisions:
    """The units of one article's text (or of any text: without a label the units are its sentences)."""
    found = ARTICLE_RE.match(text)
    label = (found.start("label"), found.end("label")) if found else None
    body_start = found.end() if found else 0
    units: list[Unit] = []
    paragraph = 0
    lead_in: int | None = None
    # the lists open, outermost first: their markers' style ("（）", "．") and lead-in; a list of another style
    # after an item ending in ： is that item's (3．本表下列用语的含义：/ (1)电网负荷，是指…)
    lists: list[tuple[str, int | None]] = []
    rows_of: int | None = None  # the unit ending in ： whose unmarked rows may follow (…延伸距离如下：/ 1—10千伏 5米)
    lines = _lines(text, body_start)
    for n, (line_start, line_end) in enumerate(lines):
        first_on_line = None
        line = text[line_start:line_end]
        item = ITEM_RE.match(line)
        # the row before this line, when the unit before it is a row and not the one ending in ：
        previous = text[units[-1].start : units[-1].end] if rows_of is not None and rows_of != len(units) - 1 else None
        if item is None and rows_of is not None and _is_row(line, previous):
            units.append(Unit(ITEM, line_start, line_end, units[rows_of].paragraph, lead_in=rows_of))
            continue
        rows_of = None
        if item is None and _list_goes_on(text, units, lists, lines[n + 1 :]):
            # a paragraph inside an item, the list going on after it (电力设施保护条例 第十条: (一)'s table, then
            # 在厂矿、城镇等人口密集地区…, then (二)): the same 款, and the next item keeps the list's lead-in
            for start, end in sentence_spans(line):
                units.append(Unit(SENTENCE, start + line_start, end + line_start, max(paragraph, 1)))
            continue
        if item is None:
            paragraph += 1
            lead_in = None
            lists = []
        else:
            lead_in = _list_of(text, units, lists, _style(item.group("label")), lead_in)
        for start, end in sentence_spans(line):
            start, end = start + line_start, end + line_start
            marker = ITEM_RE.match(text[start:end])
            number = _item_number(marker.group("label")) if marker is not None else None
            if item is not None and lead_in is None and number == 1 and units and units[-1].kind == SENTENCE:
                # a list whose lead-in ends in 。 (…可以中止调处，并向本级人民政府报告。/（一）…): the sentence before
                # its first item introduces it, with the sentences before that one in its paragraph
                intro = next(u.start for u in units if u.paragraph == units[-1].paragraph)
                units[-1] = replace(units[-1], kind=LEAD_IN, intro=intro)
                lead_in = len(units) - 1
                lists[-1] = (lists[-1][0], lead_in)
            if marker is not None and (item is not None or lead_in is not None):
                units.append(Unit(ITEM, start, end, max(paragraph, 1), number, marker.group("label"), lead_in))
                continue
            if item is not None and units and units[-1].kind == ITEM:
                # a further sentence of an item (（三）…限电。引起停电…恢复供电。) belongs to that item
                units[-1] = replace(units[-1], end=end)
                continue
            if first_on_line is None:
                first_on_line = start
            inline = _inline_first_item(text, start, end) if item is None else None
            if inline is not None:
                # a lead-in with its first item on its line (…依法给予处分： （一）不依法作出行政许可决定；): two units
                units.append(Unit(LEAD_IN, start, inline.start() + 1, max(paragraph, 1), intro=first_on_line))
                lead_in = len(units) - 1
                lists = [(_style(inline.group("label")), lead_in)]
                first = Unit(ITEM, inline.start("label"), end, max(paragraph, 1), 1, inline.group("label"), lead_in)
                units.append(first)
                continue
            if text[start:end].rstrip().endswith(LEAD_IN_END):
                units.append(Unit(LEAD_IN, start, end, max(paragraph, 1), intro=first_on_line))
                lead_in = len(units) - 1
            else:
                units.append(Unit(SENTENCE, start, end, max(paragraph, 1)))
        if units and text[units[-1].start : units[-1].end].rstrip().endswith(LEAD_IN_END):
            rows_of = len(units) - 1
    return Provisions(text, tuple(units), label, max(paragraph, 1))


_INLINE_ITEM = re.compile(rf"[：:][ \t]*{ITEM_LABEL}(?![0-9])")


def _inline_first_item(text: str, start: int, end: int) -> re.Match[str] | None:
    """In a sentence, the ： that ends a lead-in and the marker of item 1 after it on the same line (注：1．… /
    …处分： （一）…), or None."""
    found = _INLINE_ITEM.search(text, start, end)
    if found is None or _item_number(found.group("label")) != 1:
        return None
    return found


def _style(marker: str) -> str:
    """A marker without its number: （） for （二）, () for (2), ． for 3．, 、 for 二、."""
    return re.sub(f"[{LABEL_DIGITS}{ARABIC}]+", "", marker.strip())


def _list_of(
    text: str, units: list[Unit], lists: list[tuple[str, int | None]], style: str, lead_in: int | None
) -> int | None:
    """The lead-in of an item whose marker has `style`, `lists` updated: a list already open in that style (the
    lists inside it end), a new list under the unit before it when that unit ends in ： (a lead-in, or an item
    that introduces sub-items), else the lead-in the line before left open."""
    for depth, (open_style, open_lead_in) in enumerate(lists):
        if open_style == style:
            del lists[depth + 1 :]
            return open_lead_in
    if units and text[units[-1].start : units[-1].end].rstrip().endswith(LEAD_IN_END):
        lists.append((style, len(units) - 1))
        return len(units) - 1
    lists.append((style, lead_in))
    return lead_in


def _list_goes_on(
    text: str, units: list[Unit], lists: list[tuple[str, int | None]], after: list[tuple[int, int]]
) -> bool:
    """Whether the next item line after an unmarked line continues an open list with a lead-in: its marker has
    the list's style and the number after the list's last item."""
    if not lists:
        return False
    following = next((m for a, b in after if (m := ITEM_RE.match(text[a:b])) is not None), None)
    if following is None:
        return False
    style = _style(following.group("label"))
    open_lead_in = next((lead for s, lead in lists if s == style), None)
    if open_lead_in is None:
        return False
    numbers = [u.item for u in units if u.kind == ITEM and u.lead_in == open_lead_in and u.item is not None]
    return bool(numbers) and _item_number(following.group("label")) == numbers[-1] + 1


def _is_row(line: str, previous: str | None) -> bool:
    """A line that continues a list without item markers after a unit ending in ：: a table row (1—10千伏 5米), an
    entry (委员长， / 研究制定…伦理安全规范；, an item whose （一） the source lost), none of them a sentence; and the
    entry that closes such a list (委员若干人。) after a `previous` row that is an entry."""
    body = line.rstrip()
    if not _SENTENCE_END.search(body[:-1]) and (body.endswith(_ENTRY_END) or not _SENTENCE_END.search(body)):
        return True
    closes = body.endswith("。") and body.count("。") == 1
    return previous is not None and previous.rstrip().endswith(_ENTRY_END) and closes


def _lines(text: str, start: int) -> list[tuple[int, int]]:
    """The non-blank lines of `text` from `start`, as spans without their line breaks."""
    spans = []
    for m in re.finditer(r"[^\n]+", text[start:]):
        if m.group().strip():
            spans.append((m.start() + start, m.end() + start))
    return spans


def _item_number(marker: str) -> int | None:
    m = _MARKER_NUMBER.match(marker)
    try:
        return parse_numeral(m.group("num")) if m else None
    except ValueError:
        return None


def paragraph_label(number: int) -> str:
    """第二款 for the second paragraph."""
    return f"第{int_to_chinese(number)}款"


def item_label(number: int) -> str:
    """第（二）项 for the second item."""
    return f"第（{int_to_chinese(number)}）项"
