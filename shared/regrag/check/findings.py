"""What the check says about one cited provision: its status (one of STATUSES), a message and the evidence.

Statuses (the contract of POST /check, `regrag check` and the page):
- ok: the provision exists in the version in force that day, and every quotation attributed to it is its text;
- article_missing: the law has no such article (or the article no such paragraph or item) in any version;
- quote_mismatch: a quotation is not the provision's text: the closest span and a character diff;
- quote_elsewhere: a quotation is verbatim, but in another article (named);
- superseded: the version cited (by its quotation, its title or the article it alone has) had been replaced by
  that day: the successor in force, its dates, the corresponding article and the diff;
- not_yet_in_force: the version cited took effect after that day;
- unknown_law: the title names no law in the corpus (the citation cannot be verified; nothing is guessed);
- wrong_title: the title names no national law or administrative regulation at all (catalogue), with the
  closest real title when one is close;
- ambiguous: a short title that matches several laws (listed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from regrag.domain.models import DocumentMeta

OK = "ok"
ARTICLE_MISSING = "article_missing"
QUOTE_MISMATCH = "quote_mismatch"
QUOTE_ELSEWHERE = "quote_elsewhere"
STATUS_SUPERSEDED = "superseded"
STATUS_NOT_YET_IN_FORCE = "not_yet_in_force"
UNKNOWN_LAW = "unknown_law"
WRONG_TITLE = "wrong_title"
STATUS_AMBIGUOUS = "ambiguous"
STATUSES = (
    OK,
    ARTICLE_MISSING,
    QUOTE_MISMATCH,
    QUOTE_ELSEWHERE,
    STATUS_SUPERSEDED,
    STATUS_NOT_YET_IN_FORCE,
    UNKNOWN_LAW,
    WRONG_TITLE,
    STATUS_AMBIGUOUS,
)


# the evidence of an ok citation that the reader should still check against the text: the article's number now
# names another rule than the older version's (`renumbered`), or the document's own words give the article a
# figure it does not state (`unstated_figures`)
CAUTIONS = ("renumbered", "unstated_figures")


@dataclass(frozen=True)
class Finding:
    """The status of one cited provision and its evidence (JSON-able values only)."""

    status: str
    message: str
    doc_id: str | None = None
    title: str | None = None
    article: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    quotes: tuple[dict[str, Any], ...] = ()
    also: tuple[str, ...] = ()

    @property
    def caution(self) -> bool:
        """An ok citation whose evidence says to check it against the text all the same (CAUTIONS)."""
        return self.status == OK and any(key in self.evidence for key in CAUTIONS)


def version_summary(meta: DocumentMeta) -> dict[str, Any]:
    """A version as the evidence names it: id, title, both dates, when it stopped, its corpus."""
    return {
        "doc_id": meta.doc_id,
        "title": meta.title,
        "promulgated": meta.promulgated,
        "effective_date": meta.effective_date,
        "effective_to": meta.effective_to,
        "corpus": meta.corpus,
    }


def dates_text(meta: DocumentMeta) -> str:
    """（公布：P，施行：E）, or （施行：E） when both are the same day."""
    if meta.promulgated and meta.promulgated != meta.effective_date:
        return f"（公布：{meta.promulgated}，施行：{meta.effective_date or '日期不详'}）"
    return f"（施行：{meta.effective_date or '日期不详'}）"
