"""The two dates of a regulation's version, read from its own text: when it was adopted and when it took effect.

Chinese regulations state their entry into force in the final provisions (附则): 本法自2024年7月1日起施行,
本条例自公布之日起施行, 自发布之日起三十日后施行, sometimes in Chinese numerals (自一九九三年十一月一日起施行), and
sometimes with other dates for some provisions (第三十六条自2022年1月1日起施行). The header under the title lists
the version's history (通过, 公布, 修正, 修订, 批准, now and then 施行). The rules, in order:

1. The main clause is the LAST clause whose subject is the text itself (本法, 本条例, 本办法, …): final provisions
   come last, and a text that quotes another act's clause (……自2010年起施行的《X》同时废止) names that act, not
   itself, so such clauses never count.
2. 自公布/发布/印发之日起施行 means the promulgation date: the latest date of the header (the date of this version).
3. An amended text (修正 or 修订 in the header) keeps its original enactment clause (本法自1996年4月1日起施行): the
   amendment took effect on its own date, usually its promulgation. So a clause date EARLIER than the latest
   header date of an amended text never moves the version backwards: the version takes effect on that header
   date (basis "amendment"). A clause date later than the header (公司法 2023: promulgated 2023-12-29, 本法自
   2024年7月1日起施行) is the entry into force (basis "text").
4. A header line that says 施行 (民法典: 2021年1月1日 施行) states the entry into force when no clause does.
5. Clauses whose subject is a part of the text (第X条, 第X章, 本法第X条) are exceptions: other dates for some
   provisions, kept beside the main date.
6. The version's date is then the adoption of its latest amendment, and the text does not say that is when the
   amendment took effect (`EntryIntoForce.amendment`): the amending decision or 修正案 sets its own date, which a
   consolidated text does not reprint. 可再生能源法 was amended on 2009-12-26 by a decision in force on 2010-04-01;
   个人所得税法 on 2018-08-31, in force 2019-01-01. So is an amended text whose clause is 自公布之日起施行 (the
   original act's promulgation) or that has no clause, when its latest header line is an amendment by decision
   or 修正案; a text revised whole (…会议修订通过) re-enacts its clause, which then dates the revision.

Pure functions; `regrag.ingest.metadata` turns the result into document metadata.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from regrag.text.numerals import ARABIC, DATE, FIGURE_DIGITS, find_dates, parse_numeral, to_iso
from regrag.text.units import unit_pattern

BASIS_TEXT = "text"  # an explicit date in a clause of the text itself
BASIS_ON_PROMULGATION = "on_promulgation"  # 自公布之日起施行
BASIS_AFTER_PROMULGATION = "after_promulgation"  # 自公布之日起三十日后施行
BASIS_AMENDMENT = "amendment"  # an amended text whose enactment clause predates the amendment
BASIS_HEADER = "header"  # the header says 施行
BASIS_NONE = "none"  # the text states nothing

_SELF = r"本(?:法|条例|规定|办法|细则|实施细则|实施办法|实施条例|规则|决定|决议|准则|通知|意见|条例实施细则)"
# a part of the text as the subject (第三十六条, 本法第五章, 第十条至第十二条的规定); no spaces inside, so an article's
# own label before its clause (第十五条 本规定自…起施行) is never taken for a subject
_PART = r"(?:本(?:法|条例|规定|办法|细则))?第[^，。；：\s]{1,60}?[条章节款项](?:[^，。；：\s]{0,30}?(?:的规定|规定))?"
_DAY = unit_pattern("日")  # 日 or 天: a count of calendar days (三十日后施行), never 个工作日
_EVENTS = r"公布|发布|印发|颁布|通过|批准|公告"
CLAUSE_RE = re.compile(
    rf"(?P<subject>(?:{_SELF})\s*|{_PART})(?:自|从|于)\s*"
    rf"(?:{DATE}|(?P<event>{_EVENTS})之日)\s*"
    rf"(?:起|后)?\s*(?:满?\s*(?P<days>[{ARABIC}{FIGURE_DIGITS}]+)\s*(?:{_DAY})(?:后|以后)?\s*)?"
    r"(?:施行|实施|生效|执行)(?!的)"  # "…起施行的《X》" describes another act
)
_AMENDED_RE = re.compile(r"修正|修订|修改")
# an amendment made by another instrument, whose own entry into force the consolidated text does not reprint
_BY_INSTRUMENT_RE = re.compile(r"决定|修正案")
_HEADER_IN_FORCE_RE = re.compile(DATE + r"[^\n]{0,6}?(?:起)?\s*(?:施行|实施|生效)")


@dataclass(frozen=True)
class DateException:
    """Provisions with their own entry into force: the clause's subject words and the date."""

    scope: str
    date: str
    clause: str


@dataclass(frozen=True)
class EntryIntoForce:
    """What the text says about this version's dates.

    Attributes:
        effective: ISO date the version took effect, or None when the text states nothing usable.
        promulgated: ISO date of this version (the latest 通过/公布/发布/修正/修订/批准 date of the header).
        basis: how `effective` was found (BASIS_*).
        clause: the verbatim clause `effective` came from (or the header line).
        exceptions: other dates for some provisions.
        amendment: the adoption date of the latest amendment when the text does not state when that amendment
            took effect (rule 6): `effective`, if any, is then that adoption date, not a stated entry into force.
        amendment_line: the header line recording that amendment.
    """

    effective: str | None
    promulgated: str | None
    basis: str
    clause: str | None = None
    exceptions: tuple[DateException, ...] = ()
    amendment: str | None = None
    amendment_line: str | None = None


def _add_days(day: str | None, days: str | None) -> str | None:
    try:
        count = parse_numeral(days) if days else None
    except ValueError:
        count = None
    if day is None or count is None:
        return None
    return (dt.date.fromisoformat(day) + dt.timedelta(days=count)).isoformat()


@dataclass(frozen=True)
class _Header:
    latest: str | None  # the latest date of the header: this version's
    latest_line: str | None  # the line that holds it
    in_force: str | None  # a 施行 date the header states
    in_force_line: str | None
    amended: bool  # the header records an amendment (修正, 修订, 修改)


def _header_facts(header_lines: list[str]) -> _Header:
    dates: list[tuple[str, str]] = []
    in_force: str | None = None
    in_force_line: str | None = None
    for line in header_lines:
        for m in _HEADER_IN_FORCE_RE.finditer(line):
            found = to_iso(m.group("y"), m.group("m"), m.group("d"))
            if found:
                in_force, in_force_line = found, line.strip()
        dates += [(d, line.strip()) for d in find_dates(line) if d != in_force]
    latest, latest_line = max(dates) if dates else (None, None)
    amended = any(_AMENDED_RE.search(line) for line in header_lines)
    return _Header(latest, latest_line, in_force, in_force_line, amended)


def _by_instrument(line: str | None) -> bool:
    """Whether a header line records an amendment made by a decision or a 修正案 (not a text revised whole)."""
    return bool(line and _AMENDED_RE.search(line) and _BY_INSTRUMENT_RE.search(line))


def _sentence_at(text: str, start: int, end: int) -> str:
    left = max(text.rfind(c, 0, start) for c in "。；\n")
    right = min((i for i in (text.find(c, end) for c in "。；\n") if i >= 0), default=len(text))
    return text[left + 1 : right].strip()


def _of_itself(clause: re.Match[str]) -> bool:
    """The clause is the text's own (本条例自…起施行), not one of a part of it (第三十六条自…起施行)."""
    return re.match(_SELF + r"$", clause.group("subject").strip()) is not None


def states_entry_into_force(text: str) -> bool:
    """Whether the text says, in its body, when it itself takes effect (本条例自…起施行)."""
    return any(_of_itself(m) for m in CLAUSE_RE.finditer(text))


def entry_into_force(text: str, header_lines: list[str]) -> EntryIntoForce:
    """The version's promulgation and entry-into-force dates as its text states them (module docstring)."""
    header = _header_facts(header_lines)
    promulgated = header.latest
    main: tuple[str | None, str, str | None] | None = None  # (date, basis, clause)
    exceptions: list[DateException] = []
    for m in CLAUSE_RE.finditer(text):
        subject = m.group("subject").strip()
        sentence = _sentence_at(text, m.start(), m.end())
        day: str | None
        if m.group("event"):
            day = _add_days(promulgated, m.group("days")) if m.group("days") else promulgated
            kind = BASIS_AFTER_PROMULGATION if m.group("days") else BASIS_ON_PROMULGATION
        else:
            day, kind = to_iso(m.group("y"), m.group("m"), m.group("d")), BASIS_TEXT
        if _of_itself(m):
            main = (day, kind, sentence)
        elif day:
            exceptions.append(DateException(subject, day, sentence))
    date, basis, clause = main if main is not None else (None, BASIS_NONE, None)
    if date is None and header.in_force:
        date, basis, clause = header.in_force, BASIS_HEADER, header.in_force_line
    # rule 6: the original act's clause (a date, on promulgation, or none) says nothing of the latest amendment
    original_clause = basis in (BASIS_ON_PROMULGATION, BASIS_AFTER_PROMULGATION, BASIS_NONE)
    unstated = original_clause and _by_instrument(header.latest_line)
    amendment = (promulgated, header.latest_line) if unstated else (None, None)
    if date is None:
        return EntryIntoForce(None, promulgated, BASIS_NONE, clause, tuple(exceptions), *amendment)
    if basis in (BASIS_TEXT, BASIS_HEADER) and header.amended and promulgated and date < promulgated:
        return EntryIntoForce(
            promulgated, promulgated, BASIS_AMENDMENT, clause, tuple(exceptions), promulgated, header.latest_line
        )
    if unstated and basis == BASIS_AFTER_PROMULGATION:  # N days after the original act's promulgation
        return EntryIntoForce(promulgated, promulgated, BASIS_AMENDMENT, clause, tuple(exceptions), *amendment)
    return EntryIntoForce(date, promulgated, basis, clause, tuple(exceptions), *amendment)
