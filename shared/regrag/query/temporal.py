"""The day a question is asked about: an explicit `as_of` filter, a date the question names, or today.

"2020年的时候…", "在2015年…", "截至2019年6月…" ask about the law in force then, so a date in the question is an
as-of date when no filter sets one (an explicit filter always wins). A date that names a version rather than a
moment ("2019年修订的条例", "自2020年1月1日起施行的规定") is not. A period stands for its last day (the law in force at
the end of 2015 for "2015年"), and "…以前/之前" for the day before it; the response says which date was used and
which words it came from, so a reader can correct it with an explicit filter.

A date with neither kind of word around it (2019年无证生产…罚多少？) dates what the question tells, and sets the day
only when the question points back to it (…按当时的规定, 那时候) or asks what an act it dates is punished with: the
penalty for an act is the law's in force when it was done (行政处罚法 第三十七条, unless a later rule is milder, which
the note says). The act is dated only by the one date the question tells, in its last two clauses (the act and
the question about it): 公司2015年成立，去年没办环评就开工，罚多少 tells when the company was founded, not when
it built. Otherwise the answer is today's law and a note says the date was seen and not used, unless the
question says it asks about now (现在 / 目前 / 现行 …).

"修订前 / 修改前 / 旧版" with an act the store holds in several versions means the day before the newest version
took effect (`before_revision`).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from regrag.domain.models import DocumentMeta, Filters
from regrag.text.numerals import MONTH_OR_DAY, YEAR, parse_date_parts
from regrag.text.segment import CLAUSE_RE

SOURCE_FILTER = "filter"
SOURCE_QUESTION = "question"
SOURCE_REVISION = "revision"
SOURCE_TODAY = "today"

# a year, a month of it or a day of that (numerals.DATE with month and day optional, and 号 for 日)
_DATE_RE = re.compile(
    rf"(?P<y>{YEAR})\s*年(?:\s*(?P<m>{MONTH_OR_DAY})\s*月(?:\s*(?P<d>{MONTH_OR_DAY})\s*[日号])?)?"
    r"(?P<part>底|末|初|年底|年末|年初|上半年|下半年)?"
)
# what may follow a date that names a moment of the question, not a version of a text
_MOMENT_AFTER = re.compile(
    r"^(?:的时候|时候|的时|时|当时|那时|那会儿?|期间|以前|之前|前|为止|的情况|的规定|的法律|的规则|有效|现行|适用|"
    r"，|,|。|？|\?|\s)"
)
_MOMENT_BEFORE = re.compile(r"(?:在|于|截至|截止|到|早在|当年|那年|回到)\s*$")
# a date that names a version or an event of a text: "2019年修订的", "自2020年1月1日起施行"
_VERSION_AFTER = re.compile(
    rf"^(?:(?:{MONTH_OR_DAY})月(?:{MONTH_OR_DAY})日)?\s*(?:修订|修正|修改|颁布|公布|发布|施行|实施|通过|制定|出台|版|起)"
)
_VERSION_BEFORE = re.compile(r"(?:自|从|于\S{0,4}起)\s*$")
_BEFORE_WORDS = ("以前", "之前", "前")
# the People's Republic's first day: no text of the corpus is older, so an earlier date in a question is no as-of
# date (清朝, 民国 history) but words about something else
EARLIEST = dt.date(1949, 10, 1)
# a title without its 中华人民共和国 prefix names the act only when it is at least this long (电力法, 公司法: the
# shortest laws' names); shorter remainders would match ordinary words
MIN_SHORT_TITLE = 3
_REVISION_RE = re.compile(r"修订前|修改前|修正前|旧版|原来的?规定|老版本?")
# words pointing back to a time the question named (按当时的规定 / 那时候): standard Chinese demonstratives of time
_THEN_RE = re.compile(r"当时|那时|彼时|那会")
# words saying the question asks about now, whatever dates it tells (2019年建成的电站现在要办什么)
_NOW_RE = re.compile(r"现在|目前|如今|当前|现行|今年|最新|眼下")
# the clauses a question's act and its question about it take at most (…无证生产了一批产品，罚多少): a date told
# before them tells something else (when a company was founded, a plant built)
ACT_CLAUSES = 2
RULE_THEN = "the date the question's 当时 points back to"
RULE_ACT = "the law in force when the act was done (行政处罚法 第三十七条)"


@dataclass(frozen=True)
class AsOf:
    """The day the answer is about and why (the response's `temporal` field)."""

    date: str
    source: str  # filter | question | revision | today
    text: str | None = None  # the words of the question the date came from
    rule: str | None = None  # how those words became a day
    # the day is after today: the library knows the texts published so far, not what will be in force then
    after_today: bool = False
    # the words of a date the question names that did not set the day (2019年 in 2019年无证生产…会怎样): said in a
    # note, for the reader to set the day if they meant it
    unused: str | None = None

    def to_dict(self) -> dict[str, Any]:
        named = (("as_of", self.date), ("source", self.source), ("text", self.text), ("rule", self.rule),
                 ("unused", self.unused))  # fmt: skip
        found: dict[str, Any] = {k: v for k, v in named if v is not None}
        return {**found, "after_today": True} if self.after_today else found


def _last_day(year: int, month: int) -> dt.date:
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def _period(year: int, month: int | None, day: int | None, part: str | None) -> tuple[dt.date, str] | None:
    """The day a named period stands for, and the rule applied."""
    try:
        if day is not None and month is not None:
            return dt.date(year, month, day), "the day named"
        if month is not None:
            return _last_day(year, month), "the last day of the month named"
        if part in ("初", "年初"):
            return dt.date(year, 1, 1), "the first day of the year named"
        if part == "上半年":
            return dt.date(year, 6, 30), "the last day of the half-year named"
        return dt.date(year, 12, 31), "the last day of the year named"
    except ValueError:
        return None


def as_of_from_question(question: str, today: dt.date | None = None) -> AsOf | None:
    """The moment a question names ("2015年的时候", "截至2019年6月"), or None when it names none.

    Dates in the future of `today`, before 1949 or that name a version of a text are ignored.
    """
    return next((found for found, moment in _dates_named(question, today or dt.date.today()) if moment), None)


def _dates_named(question: str, today: dt.date) -> Iterator[tuple[AsOf, bool]]:
    """The dates a question names that are not a text's version, each as the day it stands for and whether words
    around it make it the moment asked about (`as_of_from_question`)."""
    for m in _DATE_RE.finditer(question):
        before, after = question[: m.start()], question[m.end() :]
        if _VERSION_AFTER.match(after) or _VERSION_BEFORE.search(before):
            continue
        # 年初 / 年底 / 上半年 name a moment by themselves
        moment = bool(m.group("part") or _MOMENT_AFTER.match(after) or _MOMENT_BEFORE.search(before) or not after)
        parts = parse_date_parts(m.group("y"), m.group("m"), m.group("d"))
        if parts is None:
            continue
        found = _period(*parts, m.group("part"))
        if found is None:
            continue
        day, rule = found
        words = m.group(0)
        if after.startswith(_BEFORE_WORDS) and not _MOMENT_BEFORE.search(before):
            # "2015年以前": the day before the period begins
            year, month, day_of_month = parts
            first = dt.date(year, month or 1, day_of_month or 1)
            day, rule = first - dt.timedelta(days=1), "the day before the period named"
            words += next(w for w in _BEFORE_WORDS if after.startswith(w))
        if not EARLIEST <= day <= today:
            continue
        yield AsOf(day.isoformat(), SOURCE_QUESTION, words, rule), moment


def before_revision(question: str, documents: Sequence[DocumentMeta]) -> AsOf | None:
    """ "修订前 / 旧版" + an act held in several versions → the day before its newest version took effect."""
    if not _REVISION_RE.search(question):
        return None
    newest = {m.doc_id: m for m in documents if m.supersedes and not m.superseded_by and m.effective_date}
    named = [m for m in newest.values() if _names(question, m.title)]
    if not named:
        return None
    act = max(named, key=lambda m: len(m.title))
    day = dt.date.fromisoformat(str(act.effective_date)) - dt.timedelta(days=1)
    words = _REVISION_RE.search(question)
    return AsOf(day.isoformat(), SOURCE_REVISION, f"《{act.title}》{words.group(0) if words else ''}",
                f"the day before the version of {act.effective_date} took effect")  # fmt: skip


# a version named by its year: 2007年版 / 2007年修订的 / 2007年公布的 突发事件应对法, or by the year it took effect
# (2007年施行的突发事件应对法: `in_force`)
_VERSION_YEAR_RE = re.compile(
    rf"(?P<y>{YEAR})\s*年\s*(?:(?P<in_force>起?(?:施行|实施|生效))|版|修订|修正|修改|颁布|公布|发布|通过|制定)"
)


def named_version(question: str, documents: Sequence[DocumentMeta]) -> AsOf | None:
    """ "2007年版突发事件应对法" + that act held in a version promulgated that year (or "2007年施行的…", one that took
    effect that year) → the day that version took effect: the question names which text, and the answer must
    quote it, not today's."""
    found = _VERSION_YEAR_RE.search(question)
    parts = parse_date_parts(found.group("y"), None, None) if found else None
    if found is None or parts is None:
        return None
    year, in_force = str(parts[0]), bool(found.group("in_force"))

    def dated(m: DocumentMeta) -> str:
        return str(m.effective_date if in_force else (m.promulgated or m.effective_date))

    named = [m for m in documents if _names(question, m.title) and m.effective_date and dated(m).startswith(year)]
    if not named:
        return None
    act = max(named, key=lambda m: len(m.title))
    return AsOf(str(act.effective_date), SOURCE_REVISION, f"《{act.title}》{found.group(0)}",
                f"the day the version of {year} took effect")  # fmt: skip


def _names(question: str, title: str) -> bool:
    """Whether the question names the act: its title, or its title without 中华人民共和国."""
    short = title.removeprefix("中华人民共和国")
    return title in question or (len(short) >= MIN_SHORT_TITLE and short in question)


def resolve_as_of(
    question: str,
    filters: Filters,
    documents: Callable[[], Sequence[DocumentMeta]] | None = None,
    today: dt.date | None = None,
    penalty_asked: bool = False,
) -> tuple[Filters, AsOf]:
    """The filters to retrieve with and the day they are about: the request's as_of, else a date the question
    names as a moment, else a date it tells that its 当时 points back to or whose act's penalty it asks
    (`penalty_asked`), else (with `documents`, read only when the question says 修订前/旧版) the day before a
    named act's newest version took effect, else today (with any date told and not used, for the note)."""
    today = today or dt.date.today()
    if filters.as_of:
        return filters, _dated(AsOf(filters.as_of, SOURCE_FILTER), today)
    if filters.include_superseded:
        return filters, AsOf(today.isoformat(), SOURCE_TODAY)
    named = list(_dates_named(question, today))  # the question's dates read once: moments, and dates it tells
    found = next((day for day, moment in named if moment), None)
    dates_told = [day for day, moment in named if not moment]
    told = dates_told[0] if dates_told and found is None and not _NOW_RE.search(question) else None
    if told is not None and _THEN_RE.search(question):
        found = replace(told, rule=RULE_THEN)
    elif told is not None and penalty_asked and _dates_the_act(question, dates_told):
        found = replace(told, rule=RULE_ACT)
    if found is None and documents is not None and _REVISION_RE.search(question):
        found = before_revision(question, documents())
    if found is None and documents is not None and _VERSION_YEAR_RE.search(question):
        found = named_version(question, documents())
    if found is None:
        return filters, AsOf(today.isoformat(), SOURCE_TODAY, unused=told.text if told else None)
    return replace(filters, as_of=found.date), _dated(found, today)


def _dates_the_act(question: str, told: Sequence[AsOf]) -> bool:
    """Whether the one date the question tells is in its last ACT_CLAUSES clauses: two dates (2019年无证生产，
    2021年被查处) leave open which one the act has, and a date further back tells something else."""
    if len(told) != 1:
        return False
    words = told[0].text
    return words is not None and words in "".join(CLAUSE_RE.findall(question)[-ACT_CLAUSES:])


def _dated(as_of: AsOf, today: dt.date) -> AsOf:
    return replace(as_of, after_today=as_of.date > today.isoformat())


def notes(as_of: AsOf) -> tuple[str, ...]:
    """The lines an answer shows about its day: where it came from when the question named it, and that it is
    still to come (a 2035 answer is the law as known today, in force then unless amended meanwhile)."""
    lines = []
    if as_of.source in (SOURCE_QUESTION, SOURCE_REVISION):
        lines.append(f"按问题中的“{as_of.text}”，引文为{as_of.date}时有效的规定；需要其他时点请在筛选中设置“时点”。")
    if as_of.rule == RULE_ACT:
        lines.append(
            "违法行为发生时的规定适用于该行为；作出处罚决定时新规定处罚较轻的，适用新规定（行政处罚法第三十七条）。"
        )
    if as_of.unused:
        lines.append(
            f"问题提到“{as_of.unused}”，未据此设定时点：检索的是{as_of.date}有效的规定；"
            f"如需当时的规定，请在筛选中设置“时点”，或写明“{as_of.unused}时”。"
        )
    if as_of.after_today:
        lines.append(
            f"所问时点{as_of.date}尚未到来：引文为库中现有文本届时的效力状态，此后公布的修改、废止无从反映，请届时再核。"
        )
    return tuple(lines)
