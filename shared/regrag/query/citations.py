"""Citations of quoted spans, and what the reader must know about the cited version, seen from the day the
question is about (its as-of date, else today).

Statuses (`version_status`):
- in_force: in force that day, and no newer version is known.
- upcoming: in force that day, while a newer version was already promulgated and takes effect later than today;
  the note names both of the newer version's dates (公布 and 施行).
- superseded_since: in force that day, replaced since (a newer version took effect after it, by today): the law
  of the day asked, and the reader must know it is no longer the law now (also when the newer version was
  already published that day: its note says so).
- superseded: no longer in force that day (only quoted when a request asks for superseded versions too): never
  presented as the law then in force.
- not_yet_in_force: promulgated but not in force that day (only quoted when a request asks for every version):
  never presented as the law then in force.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from regrag.domain.models import DocumentMeta
from regrag.domain.ocr import page_url
from regrag.domain.results import Bullet, Candidate, Citation

IN_FORCE = "in_force"
UPCOMING = "upcoming"
SUPERSEDED = "superseded"
SUPERSEDED_SINCE = "superseded_since"
NOT_YET_IN_FORCE = "not_yet_in_force"
_UNKNOWN = "日期不详"


def citation_for(candidate: Candidate, span: str | None = None) -> Citation:
    """The citation of a chunk (or of `span`, a verbatim piece of it): its document's title, the day the cited
    article took effect and, for PDFs and scans, the pages the quote lies on, with a note when OCR read one of
    them with low confidence. A PDF's source URL points at the quote's first page (`#page=N`)."""
    chunk = candidate.chunk
    meta = chunk.meta
    offset = chunk.text.find(span) if span else -1
    start, end = (
        (chunk.start + offset, chunk.start + offset + len(span or "")) if offset >= 0 else (chunk.start, chunk.end)
    )
    pages = meta.pages_of(start, end)
    doubtful = [p for p in pages if p in meta.low_confidence_pages]
    return Citation(
        meta.title,
        meta.effective_for(chunk.article),
        page_url(meta.source_url, pages) if meta.format == "pdf" else meta.source_url,
        meta.doc_id,
        chunk.article,
        meta.corpus,
        candidate.corpora or (meta.corpus,),
        promulgated=meta.promulgated,
        pages=pages,
        low_confidence=bool(doubtful),
        note=ocr_note(meta, doubtful) if doubtful else None,
        # an article with a date of its own (an exception clause) is not dated by the amendment
        date_uncertain=meta.effective_date_uncertain and meta.effective_for(chunk.article) == meta.effective_date,
    )


def ocr_note(meta: DocumentMeta, pages: Sequence[int]) -> str:
    """What a reader must know about a quote from pages OCR read with low confidence."""
    confidence = {p.page: p.confidence for p in meta.pages}
    parts = "、".join(
        f"第{n}页（置信度{confidence[n]:.2f}）" if confidence.get(n) is not None else f"第{n}页" for n in pages
    )
    return f"《{meta.title}》{parts}为扫描件的文字识别结果，识别置信度较低：引文可能有识别错误，请核对原件。"


@dataclass(frozen=True)
class VersionStatus:
    status: str
    successor: dict[str, Any] | None = None
    note: str | None = None


# how long after an amendment's adoption its entry into force may come, when the text does not say
# (effective_date_uncertain): amendments by decision take effect on adoption or within months (可再生能源法 2009
# +3 months, 建设项目环境保护管理条例 2017 +2.5, 个人所得税法 2018 +4, 消耗臭氧层物质管理条例 2023 +2); a day a year
# on is past any of them
UNCERTAIN_WINDOW = dt.timedelta(days=366)


def _dates(meta: DocumentMeta) -> str:
    """（公布：P，施行：E）, or only the effective date when both are the same day; （待核） after a date the text does
    not confirm (effective_date_uncertain)."""
    eff = (meta.effective_date or _UNKNOWN) + ("（待核）" if meta.effective_date_uncertain else "")
    if meta.promulgated and meta.promulgated != meta.effective_date:
        return f"（公布：{meta.promulgated}，施行：{eff}）"
    return f"（施行：{eff}）"


def version_status(meta: DocumentMeta, successor: DocumentMeta | None, day: str, today: str) -> VersionStatus:
    """The cited version's status on `day` (the question's as-of date, or today), with the note to show."""
    title = f"《{meta.title}》{_dates(meta)}"
    if meta.effective_date and meta.effective_date > day:
        return VersionStatus(NOT_YET_IN_FORCE, None, f"{title}在{day}尚未施行：以上引文不是当时有效的规定。")
    if successor is None:
        return VersionStatus(IN_FORCE, None, _uncertain_note(meta, title, day))
    summary = {
        "doc_id": successor.doc_id,
        "title": successor.title,
        "promulgated": successor.promulgated,
        "effective_date": successor.effective_date,
    }
    newer = f"新版本《{successor.title}》{_dates(successor)}"
    succ_eff = successor.effective_date
    if succ_eff and succ_eff <= day:
        if _within_doubt(successor, day):
            return VersionStatus(
                SUPERSEDED,
                summary,
                f"{title}在{day}可能已被{newer}取代：新版本的施行日期待核，请核实当时有效的版本。",
            )
        return VersionStatus(SUPERSEDED, summary, f"{title}在{day}已被{newer}取代：以上引文不是当时有效的规定。")
    promulgated = successor.promulgated or succ_eff
    published_then = bool(promulgated and promulgated <= day)
    if succ_eff and succ_eff <= today:
        # replaced by now, whether or not the newer text was already published on the day asked: a question about
        # the version 修订前 is dated the day before the newer one took effect, often after its promulgation, and
        # "已公布、尚未施行" read today would hide that it has been the law since
        then = f"（{newer}当时已公布、尚未施行）" if published_then else ""
        since = "此后已被其取代" if published_then else f"此后已被{newer}取代"
        return VersionStatus(SUPERSEDED_SINCE, summary, f"{title}是{day}时有效的版本{then}，{since}。")
    if published_then:
        return VersionStatus(UPCOMING, summary, f"{title}是{day}时有效的版本；{newer}已公布、尚未施行。")
    return VersionStatus(
        UPCOMING, summary, f"{title}是{day}时有效的版本；{newer}已公布，将于{succ_eff or _UNKNOWN}起施行。"
    )


def _within_doubt(meta: DocumentMeta, day: str) -> bool:
    """`day` falls within UNCERTAIN_WINDOW after a date the text does not confirm as the version's entry into
    force: the version may not yet have been in force that day."""
    if not (meta.effective_date_uncertain and meta.effective_date):
        return False
    start = dt.date.fromisoformat(meta.effective_date)
    return start.isoformat() <= day < (start + UNCERTAIN_WINDOW).isoformat()


def _uncertain_note(meta: DocumentMeta, title: str, day: str) -> str | None:
    """The note on a version in force on `day` by a date the text does not confirm, soon before it: the as-of
    choice of version rests on that date (消耗臭氧层物质管理条例 2023: dated by the revision's adoption, 2023-12-29; in
    force 2024-03-01), so a day between may still be under the version before."""
    if not _within_doubt(meta, day):
        return None
    before = "，当时适用的可能仍是修订前的版本" if meta.supersedes else ""
    return f"{title}的施行日期待核：{day}时该版本可能尚未施行{before}，请核实。"


def not_the_law(cite: Citation) -> bool:
    """Whether a cited version was not in force on the day asked: superseded then, or not yet in force."""
    return cite.version_status in (SUPERSEDED, NOT_YET_IN_FORCE)


def annotate_versions(
    bullets: Sequence[Bullet],
    citations: Sequence[Citation],
    as_of: str | None,
    document_meta: Callable[[str], DocumentMeta | None],
    counterpart: Callable[[Citation, DocumentMeta], dict[str, Any] | None] | None = None,
    today: dt.date | None = None,
) -> tuple[list[Bullet], list[Citation], list[str]]:
    """Each cited version's status and successor on the citations and their bullets, and the notes to show.

    `counterpart(citation, other_version)`: the corresponding article of the other version, for a citation whose
    version is not the one in force on the day (the newer version for superseded and upcoming ones, the older
    one for a version not yet in force).
    """
    now = (today or dt.date.today()).isoformat()
    day = as_of or now
    notes: list[str] = []
    statuses: dict[str, tuple[VersionStatus, DocumentMeta | None]] = {}
    for doc_id in dict.fromkeys(c.doc_id for c in citations):
        meta = document_meta(doc_id)
        if meta is None:
            continue
        successor = document_meta(meta.superseded_by) if meta.superseded_by else None
        found = version_status(meta, successor, day, now)
        other = successor if found.status in (UPCOMING, SUPERSEDED, SUPERSEDED_SINCE) else None
        if found.status == NOT_YET_IN_FORCE and meta.supersedes:
            other = document_meta(meta.supersedes)
        statuses[doc_id] = (found, other)
        if found.note and found.note not in notes:
            notes.append(found.note)

    def annotate(cite: Citation) -> Citation:
        if cite.doc_id not in statuses:
            return cite
        found, other = statuses[cite.doc_id]
        extra = counterpart(cite, other) if counterpart is not None and other is not None else None
        return replace(cite, version_status=found.status, successor=found.successor, counterpart=extra)

    return [replace(b, citation=annotate(b.citation)) for b in bullets], [annotate(c) for c in citations], notes
