"""quote: from each of the first candidates, the unit of its article that answers the question, shown whole.

A quote is a unit a lawyer can cite (text/provisions.py): the sentence, item or lead-in that best answers
(query/fit.py), with what it needs to be read alone: an item with the lead-in that says what the list is, a
lead-in with its items, and the article label in front, joined by …… wherever text is left out. A question asking
two things is shown the unit answering each part where one article holds both (`_with_parts`). One bullet
per article, cited as precisely as the quote is (第二十八条第（二）项). Nothing is paraphrased: every piece is a
slice of the stored document text, checked before it is kept (a quote that fails is dropped, counted and
logged). A candidate whose key-term coverage is below the quote floor is never quoted (it stays visible as
evidence), nor is a quote that is mostly not Chinese.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from regrag import logs
from regrag.domain.results import ELLIPSIS, Bullet, Candidate
from regrag.query.citations import citation_for
from regrag.query.fit import FIGURE, Fit, asked_in, character_overlap, fit, key_characters, rarity
from regrag.query.order import SPECIFIC_FORMS, Quote, first_quote
from regrag.query.question import Question, coverage
from regrag.text.chunking import KIND_ARTICLE, KIND_PARAGRAPH
from regrag.text.legal import APPENDIX_RE, ARTICLE_RE, HEADING_RE, ITEM_RE, referenced_text
from regrag.text.provisions import (
    ITEM,
    LEAD_IN,
    LEAD_IN_END,
    SENTENCE,
    Provisions,
    Unit,
    item_label,
    paragraph_label,
    read_provisions,
)
from regrag.text.segment import chinese_share

log = logs.get("compose")

MIN_CHINESE_RATIO = 0.30  # a quote below it is mostly not Chinese text
MIN_UNIT_CHARS = 20  # a shorter sentence (禁止窃电。) is quoted with the next one of its paragraph
# a lead-in is shown with its items; when they are longer than this, only those that hold a key term (and at
# least the first) are shown, with …… for the rest
MAX_LIST_CHARS = 400
# a paragraph (款) of sentences up to this long is quoted whole whichever of its sentences fits best: the key
# sentence is often the one after the best-fitting one (…申请缓缴；……缓缴期限最长不得超过90日), and a 款 is what a
# lawyer cites. 200 is the bound on the median first quote, fixed before measuring: quotes-dev first quote
# holds the key 30 → 31 of 40, the held-out quotes set 41 → 45 of 60, median first quote 59 → 90 characters
WHOLE_PARAGRAPH_CHARS = 200
# a second unit that fits at least this share of the best one's score is shown with it, when the two (with their
# context) stay within TWO_UNITS_CHARS: a question of two parts (最长能用几年？用完后多久复垦？) or two near readings
# of one (小于二十五度 / 二十五度以上) is answered by both, and a lawyer reads one bullet. 0.7 and 0.85, 250 to 400
# characters gave the same quotes-dev first quotes (33 → 34 of 40); the closer fit and the shorter bound are kept
RUNNER_UP_FIT = 0.85
TWO_UNITS_CHARS = 250
# a quote of a clause ending in ； goes on to its sentence's end (。) up to this many characters (`_to_sentence_end`):
# twice WHOLE_PARAGRAPH_CHARS, so that a penalty sentence with its branches (逾期不改正的 / 对直接负责的主管人员 /
# 情节严重的) is whole, while a 款 of many sentences still shows only the one that answers
SENTENCE_CHARS = 400
CLAUSE_ENDS = ("；", ";")
# a question asking two things (多少天内给结论？…批复还能用吗？) is shown the unit that answers each part, in one
# bullet, up to this many characters (SENTENCE_CHARS: the longest single quote), when that unit holds at least
# PART_SHARE of its part's key terms (by weight: question.coverage)
PARTS_CHARS = SENTENCE_CHARS
PART_SHARE = 0.5
MAX_ARTICLE_CHARS = 30_000  # how far back an article's label is looked for (the longest article: ~12 k characters)


@dataclass(frozen=True)
class QuoteConfig:
    top_n: int  # the candidates quoted from
    max_bullets: int
    quote_floor: float  # a candidate whose coverage is below it is quoted only when none clears it


@dataclass(frozen=True)
class Quotes:
    """What quoting found: the verbatim bullets (with each one's fit), quotes dropped as not verbatim, and
    quotes skipped as not Chinese."""

    bullets: tuple[Bullet, ...] = ()
    dropped: int = 0
    foreign: int = 0
    fits: tuple[Fit, ...] = ()

    @property
    def text(self) -> str:
        """Every quoted span, joined: what judge reads the answer's figures and terms from."""
        return "".join(b.span for b in self.bullets)


def chinese_ratio(text: str) -> float:
    return chinese_share(text)


@dataclass(frozen=True)
class _Choice:
    """One candidate's quote before the verbatim check: its pieces as document offsets, its provision, its fit."""

    candidate: Candidate
    pieces: tuple[tuple[int, int], ...]
    provision: str | None
    fit: Fit
    # the quote stops inside a paragraph (款) that goes on: its last sentence or item is not the 款's last
    cut: bool = False


# When no candidate clears the quote floor, those sharing at least this share of the best one's coverage are quoted.
FALLBACK_SHARE = 0.5
# the ranked candidates that may be quoted below the floor when the dense leg finds them as close as any quoted:
# the first three, as many as the order rules read (order.FIRST_AMONG)
DENSE_AMONG = 3


def quotable_candidates(top: Sequence[Candidate], floor: float) -> list[Candidate]:
    """The candidates that may be quoted, in ranking order: those whose key-term coverage clears the quote floor,
    and the ranking's first when it shares at least half as much as the best; when none clears the floor, every
    candidate that shares at least half as much as the best of them (and shares something).

    The relevance floor (judge.py) has already found the pool near the question when we get here, often on a
    strong dense match: a long or lay question whose many words dilute every candidate's coverage (火车票面未载明
    退票费事宜，火车站根据《铁路法》… 是否恰当: the best shares 16 % of its terms, the gold article among them) was
    refused for want of a quote though the floor let it through. Quoting the best of them, with the confidence
    the answer earns (judge.py), is what the floor's verdict means.

    Half of the best, not half of the floor: among candidates that all share little, a few words more or less
    is noise, and the ranking (which read the dense match and every word, single characters included) knows
    better. With half of the floor, a lay question's top candidate sharing 0.09 of its terms (济南 平房上方有高压线
    … 加盖一层: the article on houses under lines, ranked first by the lexical leg) was left out for one sharing
    0.17, and one whose candidates all shared under 0.1 was refused.

    The ranking's first is the same case when another candidate clears the floor: a lay question's article that
    both legs rank first, sharing 0.17 of its terms (工伤 申请 … 时间限制: the article with the one-year limit),
    was left out for its neighbour sharing 0.26 (what the application form lists). Only the first: letting every
    candidate above half of the best in changed the first quote of answers whose first was right.

    One of the first DENSE_AMONG is quoted too when the dense similarity says it is at least as close as any
    candidate admitted (`_as_close`): on the second blind set it added a right first quote and a right later one,
    and nothing on the sets read moved a key (bench/README.md, stop 42). When the dense leg found none of those
    admitted (the lexical leg alone did), they are farther from the question than anything it found, and one of the
    first DENSE_AMONG ranked above them that it found is quoted (stop 45: quotes tune some +1, two more tuning and
    blind first quotes, a blind refusal fewer; no unanswerable question answered).
    bench/README.md "Quoting when nothing clears the quote floor" has the rules measured on every set."""
    best = max((c.features.coverage for c in top), default=0.0)

    def near(c: Candidate) -> bool:
        return c.features.coverage >= best * FALLBACK_SHARE and c.features.coverage > 0

    if best < floor:  # nothing clears the floor
        return [c for c in top if near(c)]
    admitted = [c for n, c in enumerate(top) if c.features.coverage >= floor or (n == 0 and near(c))]
    # an admitted candidate the dense leg did not find (no dense score: the lexical leg alone did) is farther from
    # the question than every one it found; only those ranked above the admitted are let in then (letting in any
    # of the first three answered two unanswerable questions the narrower quotes had refused)
    closest = max((c.dense_score for c in admitted if c.dense_score is not None), default=None)
    above = top.index(admitted[0]) if admitted else 0
    return [
        c
        for n, c in enumerate(top)
        if c in admitted or (n < DENSE_AMONG and (closest is not None or n < above) and _as_close(c, closest))
    ]


def _as_close(c: Candidate, closest: float | None) -> bool:
    """A candidate the dense leg finds at least as close to the question as any admitted (and that shares some
    of its words): its few shared words tell the question's wording, not its distance from the article. The
    coverage gate reads exact words only, and a lay question's words are seldom the statute's. `closest`: None
    when the dense leg found none of the admitted."""
    return c.features.coverage > 0 and c.dense_score is not None and (closest is None or c.dense_score >= closest)


def quote(
    q: Question, ranked: Sequence[Candidate], source_text: Callable[[str], str | None], config: QuoteConfig
) -> Quotes:
    """Up to `max_bullets` verbatim quotes, one per candidate, from the first `top_n` that may be quoted
    (`quotable_candidates`)."""
    # a rule of another province than those the question names (score.py's `applies`) does not apply there, however
    # well it matches: a Shandong city's heating period is no answer for Tianjin; it stays among the candidates
    quotable = quotable_candidates([c for c in ranked[: config.top_n] if c.features.applies], config.quote_floor)
    texts: dict[str, str | None] = {}
    found: list[tuple[Bullet, Candidate, Fit]] = []
    dropped = foreign = 0
    for cand in quotable:
        doc_id = cand.chunk.doc_id
        if doc_id not in texts:
            texts[doc_id] = source_text(doc_id)
        stored = texts[doc_id]
        choice = choose(q, cand, stored) if stored else None
        if choice is None:
            dropped += 1
            _log_dropped(cand)
            continue
        pieces = tuple(stored[a:b] for a, b in choice.pieces)  # type: ignore[index]
        span = join(stored, choice.pieces, cut=choice.cut)  # type: ignore[arg-type]
        if chinese_ratio(span) < MIN_CHINESE_RATIO:
            # The product quotes Chinese regulations: a quote that is mostly not Chinese (a translation, a
            # formula or a table of figures) is left to the evidence list, where the reader sees it whole.
            foreign += 1
            continue
        citation = replace(citation_for(cand, pieces[-1]), provision=choice.provision)
        bullet = Bullet(span, citation, cand.chunk.id, pieces)
        if not bullet.verbatim_in(stored):  # type: ignore[arg-type]
            dropped += 1
            _log_dropped(cand)
            continue
        found.append((bullet, cand, choice.fit))
    kept = _articles_below_first(first_quote(q, found))[: config.max_bullets]
    return Quotes(tuple(b for b, _, _ in kept), dropped, foreign, tuple(f for _, _, f in kept))


def _articles_below_first(quotes: list[Quote]) -> list[Quote]:
    """Below the first quote, only articles when any article is quoted: a quote from outside them (an appendix's
    notes, a preamble) is kept first, where it is the best match, or when nothing else is quotable. Further down
    it cannot be cited by article and does not answer (quotes tune: 1 of 683 bullets, an appendix's definition of
    a generating unit's outage under the articles on retiring coal units)."""
    if not any(c.chunk.kind == KIND_ARTICLE for _, c, _ in quotes):
        return quotes
    return [quote for n, quote in enumerate(quotes) if n == 0 or quote[1].chunk.kind == KIND_ARTICLE]


def _log_dropped(cand: Candidate) -> None:
    logs.event(
        log,
        logging.WARNING,
        "span dropped: not verbatim in the stored text",
        doc_id=cand.chunk.doc_id,
        chunk_id=cand.chunk.id,
    )


def choose(q: Question, cand: Candidate, stored: str) -> _Choice | None:
    """The candidate's quote: the unit of its chunk that fits the question best, with its context."""
    chunk = cand.chunk
    if chunk.text != stored[chunk.start : chunk.end]:
        return None  # the chunk no longer matches the stored text: nothing of it can be quoted
    start, end = article_region(stored, cand)
    prov = read_provisions(stored[start:end])
    units = prov.units
    eligible = [i for i, u in enumerate(units) if u.start + start < chunk.end and u.end + start > chunk.start]
    if not eligible:
        return None
    shown = [_shown(prov, i) for i in range(len(units))]
    rare = rarity(q, shown, chunk.meta.title)
    referenced = {i: referenced_text(stored, prov.span(i), own=chunk.article) for i in eligible}
    fits = _fits(q, prov, referenced, rare)
    best = max(eligible, key=lambda i: (fits[i].score, -i))
    if not fits[best].score:
        # no unit holds a key term or a thing asked: the question's words are the asker's, not the statute's, and
        # the unit sharing the rarer characters of them is quoted rather than the article's first
        chars = key_characters(q, shown)
        best = max(eligible, key=lambda i: (character_overlap(prov.span(i), _context(prov, i), chars), -i))
    chosen = _with_context(prov, best, fits, q, rare)
    answering = [best]
    runner = _runner_up(eligible, chosen, fits, best)
    if runner is not None:
        both = sorted({*chosen, *_with_context(prov, runner, fits, q, rare)})
        if sum(units[i].end - units[i].shown_start for i in both) <= TWO_UNITS_CHARS:
            chosen, answering = both, [best, runner]
    chosen, answering = _with_parts(q, prov, shown, referenced, (chosen, answering), rare)
    pieces = _pieces(prov, chosen, start)
    return _Choice(cand, pieces, _provision(cand, prov, answering), fits[best], _cut(prov, chosen))


def _fits(q: Question, prov: Provisions, referenced: dict[int, str], rare: dict[str, float]) -> dict[int, Fit]:
    """The fit of each eligible unit (the keys of `referenced`: what each refers to)."""
    fits = {}
    for i, refers in referenced.items():
        own = fit(q, prov.span(i), _context(prov, i), rare, lead_in=prov.units[i].kind == LEAD_IN, referenced=refers)
        fits[i] = _with_sentence_rest(q, prov, i, own)
    return fits


def _with_sentence_rest(q: Question, prov: Provisions, index: int, found: Fit) -> Fit:
    """A clause ending in ； is quoted on to its sentence's end (`_to_sentence_end`), and the specific things asked
    that the rest holds are in its quote: 未办理能源效率标识备案…责令限期改正；逾期不改正的，处一万元以上三万元以下
    罚款。 names the act asked about and its fine is in the next clause, while the 款 before it names another
    act and its own fine. Only the specific things (a figure, a penalty, an authority, a time limit, liability:
    order.py's); a permission or a stated figure further on drew an earlier clause's quote to 247 characters for a
    question its last clause answered (bench/README.md, stop 44)."""
    if prov.units[index].kind != SENTENCE:
        return found
    rest = "".join(prov.span(i) for i in _to_sentence_end(prov, [index])[1:])
    specific = SPECIFIC_FORMS | {FIGURE}
    more = tuple(a for a in asked_in(q, rest) if a in specific and a not in found.asked) if rest else ()
    return replace(found, asked=found.asked + more)


def _with_parts(
    q: Question,
    prov: Provisions,
    texts: list[str],
    referenced: dict[int, str],
    quoted: tuple[list[int], list[int]],
    rare: dict[str, float],
) -> tuple[list[int], list[int]]:
    """The units `quoted` shows and those that answer (`choose`'s `chosen` and `answering`), with the unit that
    answers each part of a question asking several things, when the units chosen do not: 环评批复后规模重大变动怎么办？
    超过五年才开工还能用吗？ is answered by two 款 of one article, and the unit best for the whole question (weighted to
    its last sentence) is one of them. `texts`: each unit as shown (`_shown`); `referenced`: what each eligible
    unit refers to (`choose`).

    Only a unit that shows key terms of its part that the units chosen do not, and at least PART_SHARE of the weight
    of all the part's key terms (an article holding one or two of them answers that part elsewhere, if at all: 电信
    用户有权自主选择…服务 is no answer to 供电公司办理用电报装有哪些公开和服务要求), and not past PARTS_CHARS."""
    units = prov.units
    chosen, answering = quoted
    eligible = list(referenced)
    for part in q.parts:
        asked = q.asking(part)
        fits = _fits(asked, prov, referenced, rare)
        top = max(eligible, key=lambda i: (fits[i].score, -i))
        shown = "".join(texts[i] for i in chosen)
        new = any(k.term in texts[top] and k.term not in shown for k in part.keywords)
        if top in chosen or not new or fits[top].score <= max((fits[i].score for i in chosen if i in fits), default=0):
            continue
        if coverage(f"{_context(prov, top)}{texts[top]}", part.keywords) < PART_SHARE:
            continue
        more = sorted({*chosen, *_with_context(prov, top, fits, asked, rare)})
        if sum(units[i].end - units[i].shown_start for i in more) <= PARTS_CHARS:
            chosen, answering = more, [*answering, top]
    return chosen, answering


def _cut(prov: Provisions, chosen: list[int]) -> bool:
    """Whether the quote stops inside its last paragraph (款): the unit after the last one shown is of the same
    paragraph (the list's next item, the 款's next sentence). A quote of 第三十一条 that shows the lead-in and
    item （一） of a list of ten, or a penalty clause …处20万元以上100万元以下的罚款； whose 款 goes on
    逾期不改正的，处…, must not read as the whole of what it cites: the omission is marked (……) like one between
    its pieces."""
    last = max(chosen)
    units = prov.units
    return last + 1 < len(units) and units[last + 1].paragraph == units[last].paragraph


def _runner_up(eligible: list[int], chosen: list[int], fits: dict[int, Fit], best: int) -> int | None:
    """The unit not yet shown that fits nearly as well as the best (RUNNER_UP_FIT of its score), if any."""
    rest = [i for i in eligible if i not in chosen and fits[i].score > 0]
    if not rest:
        return None
    runner = max(rest, key=lambda i: (fits[i].score, -i))
    return runner if fits[runner].score >= RUNNER_UP_FIT * fits[best].score else None


def article_region(stored: str, cand: Candidate) -> tuple[int, int]:
    """Where the candidate's whole article lies in the stored text: from its label to the next article, heading
    or appendix (a long article's chunk is one part of it); a chunk that is not an article stands alone, but for a
    numbered section, which starts at the line introducing the sections (`_section_start`)."""
    chunk = cand.chunk
    if chunk.kind != KIND_ARTICLE or not chunk.article:
        return _section_start(stored, cand), chunk.end
    # the label is the last article start at or before the chunk (a long article's later part lacks it)
    start = chunk.start
    window = max(0, chunk.start - MAX_ARTICLE_CHARS)
    for found in ARTICLE_RE.finditer(stored, window, chunk.start + len(chunk.article) + 1):
        if found.group("label") == chunk.article:
            start = found.start("label")
    ends = [len(stored)]
    for pattern in (ARTICLE_RE, HEADING_RE, APPENDIX_RE):
        following = pattern.search(stored, max(chunk.end - 1, start + len(chunk.article)))
        if following is not None:
            ends.append(following.start())
    end = max(min(ends), chunk.end)
    return start, end


def _section_start(stored: str, cand: Candidate) -> int:
    """Where the quote region of a chunk outside articles starts. A numbered section of a text without articles
    (八、… in a 规定 whose preamble ends 现对…规定如下：) starts at the line that introduces the sections: that line
    is the section's lead-in, and a section quoted without it is an orphan item. Only within the same part of
    the text (no heading between) and within MAX_ARTICLE_CHARS; anything else stands alone."""
    chunk = cand.chunk
    if chunk.kind != KIND_PARAGRAPH or not ITEM_RE.match(chunk.text):
        return chunk.start
    window = max(0, chunk.start - MAX_ARTICLE_CHARS)
    colon = max(stored.rfind(f"{end}\n", window, chunk.start) for end in LEAD_IN_END)
    if colon < 0:
        return chunk.start
    line = stored.rfind("\n", 0, colon) + 1
    between = stored[line : chunk.start]
    if HEADING_RE.search(between) or APPENDIX_RE.search(between):
        return chunk.start
    return line


def _shown(prov: Provisions, index: int) -> str:
    unit = prov.units[index]
    return prov.text[unit.shown_start : unit.end]


def _context(prov: Provisions, index: int) -> str:
    """What a quote of the unit shows besides it: an item's lead-in paragraph."""
    unit = prov.units[index]
    if unit.kind != ITEM or unit.lead_in is None:
        return ""
    lead = prov.units[unit.lead_in]
    return prov.text[lead.shown_start : lead.end]


def _with_context(prov: Provisions, best: int, fits: dict[int, Fit], q: Question, rare: dict[str, float]) -> list[int]:
    """The units a quote of `best` shows, in order: an item with its lead-in; a lead-in with its items (those
    that hold a key term when the list is long); a sentence with the rest of its paragraph when the paragraph is
    short, else a very short sentence with the next one of its paragraph."""
    units = prov.units
    unit = units[best]
    if unit.kind == ITEM and unit.lead_in is not None:
        # an item that introduces rows of its own (（一）…延伸距离如下：/ 1—10千伏 5米) comes with them, and a row
        # with every lead-in above it (the row's item （一） and the article's 电力线路保护区：)
        return [*_lead_ins(prov, best), best, *_items(prov, best, q, rare)]
    if unit.kind == LEAD_IN:
        return [best, *_items(prov, best, q, rare)]
    paragraph = [i for i, u in enumerate(units) if u.paragraph == unit.paragraph]
    if all(units[i].kind == SENTENCE for i in paragraph):
        length = units[paragraph[-1]].end - units[paragraph[0]].shown_start
        if length <= WHOLE_PARAGRAPH_CHARS:
            return paragraph
    chosen = [best]
    following = best + 1
    if (
        unit.end - unit.start <= MIN_UNIT_CHARS
        and following < len(units)
        and units[following].paragraph == unit.paragraph
        and units[following].kind != ITEM
    ):
        chosen.append(following)
    return _to_sentence_end(prov, chosen)


def _to_sentence_end(prov: Provisions, chosen: list[int]) -> list[int]:
    """`chosen` (sentences of one paragraph) carried on to the end of the sentence its last one is a clause of:
    a unit ending in ； is one clause of a sentence that ends at 。 (…处20万元以上100万元以下的罚款；逾期不改正的，处…
    罚款；对直接负责的主管人员…处…罚款。), and the clauses after it are the same rule's other branches, which a
    lawyer quotes with it. Not past SENTENCE_CHARS from the first unit shown: beyond, the quote stops and says it
    (`_cut`)."""
    units = prov.units
    out = list(chosen)
    while True:
        last, following = out[-1], out[-1] + 1
        if (
            following >= len(units)
            or not prov.span(last).rstrip().endswith(CLAUSE_ENDS)
            or units[following].kind != SENTENCE
            or units[following].paragraph != units[last].paragraph
            or units[following].end - units[out[0]].shown_start > SENTENCE_CHARS
        ):
            return out
        out.append(following)


def _lead_ins(prov: Provisions, index: int) -> list[int]:
    """The lead-ins a unit sits under, outermost first."""
    chain: list[int] = []
    above = prov.units[index].lead_in
    while above is not None:
        chain.insert(0, above)
        above = prov.units[above].lead_in
    return chain


def _items(prov: Provisions, lead_in: int, q: Question, rare: dict[str, float]) -> list[int]:
    """The items a lead-in shows: all of them, or when they are long, those that hold a key term (at least the
    first). A lead-in whose list is written as plain paragraphs (本法下列用语的含义：/ 电力企业，是指…。: 19 of the
    corpus's 2,932 lead-ins) shows the paragraphs after it instead, up to the next lead-in: never a bare ：."""
    items = prov.items_of(lead_in)
    if not items and prov.units[lead_in].kind == LEAD_IN:
        items = _following(prov, lead_in)
    if sum(prov.units[i].end - prov.units[i].start for i in items) > MAX_LIST_CHARS:
        items = [i for i in items if fit(q, prov.span(i), "", rare).coverage > 0] or items[:1]
    return items


def _following(prov: Provisions, lead_in: int) -> list[int]:
    """The units after a lead-in up to the next one."""
    after = range(lead_in + 1, len(prov.units))
    return list(itertools.takewhile(lambda i: prov.units[i].kind != LEAD_IN, after))


def _pieces(prov: Provisions, chosen: list[int], offset: int) -> tuple[tuple[int, int], ...]:
    """The document spans of the chosen units, the article label first; adjacent or overlapping spans merge."""
    spans = sorted((prov.units[i].shown_start, prov.units[i].end) for i in chosen)
    if prov.label is not None:
        spans.insert(0, prov.label)
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and (a <= merged[-1][1] or _adjacent(prov.text, merged[-1][1], a)):
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return tuple((a + offset, b + offset) for a, b in merged)


def _adjacent(text: str, end: int, start: int) -> bool:
    """Only spaces between two spans on one line: one piece (第二十八条 除本条例…)."""
    gap = text[end:start]
    return not gap.strip() and "\n" not in gap


def join(stored: str, pieces: Sequence[tuple[int, int]], *, cut: bool = False) -> str:
    """The quote as shown: the pieces in order, run together where only line breaks separate them (the items
    of a list), with …… where text is left out, and after the last piece when its paragraph goes on (`cut`)."""
    out = []
    for n, (a, b) in enumerate(pieces):
        if n:
            gap = stored[pieces[n - 1][1] : a]
            out.append("" if not gap.strip() else ELLIPSIS)
        out.append(stored[a:b])
    if cut:
        out.append(ELLIPSIS)
    return "".join(out)


def _provision(cand: Candidate, prov: Provisions, answering: list[int]) -> str | None:
    """第二十八条第（二）项 for one item, 第十条第二款 for a sentence of the second of several paragraphs, and both
    when two units answer (第二十条第二款、第三款; 第三十五条第（一）项、第（三）项); None when the quote is the article
    as a whole or not an article's part."""
    if cand.chunk.kind != KIND_ARTICLE or prov.label is None:
        return None
    # a row of an item's table, or a sub-item, is cited as that item (第十条第（一）项)
    shown = [_cited_unit(prov, prov.units[i]) for i in answering]
    where = cand.chunk.article
    paragraphs = sorted({u.paragraph for u in shown})
    if prov.paragraphs > 1:
        where += "、".join(paragraph_label(p) for p in paragraphs)
    items = sorted({u.item for u in shown if u.kind == ITEM and u.item is not None})
    if len(paragraphs) == 1 and items and all(u.kind == ITEM for u in shown):
        where += "、".join(item_label(i) for i in items)
    return where if where != cand.chunk.article else None


def _cited_unit(prov: Provisions, unit: Unit) -> Unit:
    """The unit a citation names: a table's row (an item without a number) is cited as the item it belongs to, and
    so is a sub-item (1. under （二）权属证明，包括：): its number is not the article's 项."""
    while unit.kind == ITEM and unit.lead_in is not None:
        above = prov.units[unit.lead_in]
        if unit.item is not None and above.kind != ITEM:
            break
        unit = above
    return unit
