"""One status per cited provision, with the evidence, as of the document's date.

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

Which version a citation means: the one its quotation is the text of (the version in force first), else the
version its title or its named revision (（2018年修正）) picks, else the version in force that day, else the one
that has the article. One status per provision; when a citation has two problems (an outdated version quoted
wrongly), the version's comes first and the other is kept in `also`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from regrag.check.catalogue import Catalogue, is_national_form
from regrag.check.provisions import Provision, char_diff, closest_span, fold
from regrag.check.references import ArticleRef, Quote, Reference
from regrag.check.titles import AMBIGUOUS, NOT_FOUND, Law, Resolution
from regrag.domain.models import DocumentMeta
from regrag.query.citations import NOT_YET_IN_FORCE, SUPERSEDED, version_status
from regrag.text.legal import article_label
from regrag.views.version_diff import Article, counterpart

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
MAX_AMBIGUOUS_LISTED = 20
MAX_ELSEWHERE_LISTED = 5
MIN_QUOTATION_CHARS = 10  # shorter text in quotation marks may be a term; see Verifier._quote
TERM_SIMILARITY = 0.75  # … unless its closest span in the provision is at least this similar
NEAR_QUOTATION = 0.75  # a closest span this similar makes a quotation a misquotation of the article cited

# a document's articles by doc id (the check reads each cited document once)
ArticlesOf = Callable[[str], Sequence[Article]]
# the stored documents whose text may hold a quotation (a lexical search): [(doc metadata, article label)]
QuoteSearch = Callable[[str], Sequence[tuple[DocumentMeta, str]]]


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


def _version(meta: DocumentMeta) -> dict[str, Any]:
    return {
        "doc_id": meta.doc_id,
        "title": meta.title,
        "promulgated": meta.promulgated,
        "effective_date": meta.effective_date,
        "effective_to": meta.effective_to,
        "corpus": meta.corpus,
    }


def _effective(meta: DocumentMeta, label: str | None = None) -> str | None:
    return meta.effective_for(label) if label else meta.effective_date


def in_force_on(law: Law, day: str) -> DocumentMeta | None:
    """The version in force on `day`: the latest that had taken effect (None when none had)."""
    started = [m for m in law.versions if (_effective(m) or "") <= day]
    return started[-1] if started else None


def _provisions(articles: Sequence[Article]) -> dict[str, Provision]:
    return {a.label: Provision(a.label, a.text) for a in articles}


class Verifier:
    """Checks references against the stored documents, reading each document's articles once."""

    def __init__(
        self,
        articles_of: ArticlesOf,
        catalogue: Catalogue,
        corpus_titles: Sequence[str],
        search: QuoteSearch | None = None,
    ) -> None:
        self._articles_of = articles_of
        self._search = search
        self._cache: dict[str, dict[str, Provision]] = {}
        self._counterparts: dict[tuple[int, str], dict[str, Any]] = {}
        self.catalogue = catalogue
        self.corpus_titles = tuple(corpus_titles)

    def provisions(self, doc_id: str) -> dict[str, Provision]:
        if doc_id not in self._cache:
            self._cache[doc_id] = _provisions(self._articles_of(doc_id))
        return self._cache[doc_id]

    # --- titles that name no single stored law --------------------------------------------------------------

    def unresolved(self, ref: Reference, resolution: Resolution | None, day: str) -> Finding:
        if resolution is None:  # 《条例》 / 本法 with no title before it
            return Finding(
                UNKNOWN_LAW,
                f"“{ref.written}”之前没有可指代的法规名称，无法核验。",
                evidence={"reason": "no_antecedent", "written": ref.written},
            )
        if resolution.kind == AMBIGUOUS:
            laws = resolution.laws[:MAX_AMBIGUOUS_LISTED]
            listed = [_version(law.latest) for law in laws]
            names = "、".join(f"《{law.latest.title}》" for law in laws)
            return Finding(
                STATUS_AMBIGUOUS,
                f"《{ref.title}》可指多部法规：{names}。请写明全称。",
                evidence={"candidates": listed, "count": len(resolution.laws)},
            )
        assert resolution.kind == NOT_FOUND
        key = resolution.key
        suggestion = self.catalogue.suggest(key, self.corpus_titles)
        evidence: dict[str, Any] = {
            "catalogue": {"source": self.catalogue.source, "as_of": self.catalogue.as_of},
            "in_catalogue": key in self.catalogue,
        }
        if suggestion:
            evidence["suggestion"] = suggestion
        hint = f"是否指《{suggestion}》？" if suggestion else ""
        if is_national_form(key) and key not in self.catalogue:
            evidence["national_form"] = True
            if day <= self.catalogue.as_of:
                return Finding(
                    WRONG_TITLE,
                    f"没有名为《{ref.title}》的法律或行政法规（法律、行政法规目录截至{self.catalogue.as_of}）。{hint}",
                    evidence=evidence,
                )
            # after the snapshot a new law may bear this title: say so instead of denying it exists
            return Finding(
                UNKNOWN_LAW,
                f"本库未收录《{ref.title}》，截至{self.catalogue.as_of}的法律、行政法规目录中也没有这一名称"
                f"（此后公布的不在目录中），无法核验。{hint}",
                evidence={**evidence, "reason": "not_in_catalogue_after_snapshot"},
            )
        known = "该名称见于法律、行政法规目录，" if key in self.catalogue else ""
        return Finding(
            UNKNOWN_LAW,
            f"本库未收录《{ref.title}》，{known}无法核验其条文。{hint}",
            evidence={**evidence, "reason": "not_in_corpus"},
        )

    def check_parts(self, ref: Reference, target: ArticleRef, parts: Sequence[Law], day: str) -> Finding:
        """An act the corpus holds in parts with one numbering (民法典 合同编, 物权编): the part that has the
        article is checked; an article in none of them lies in a part the corpus lacks, so it cannot be
        verified (it is not proved absent)."""
        label = article_label(target.main, target.sub)
        for law in parts:
            if any(label in self.provisions(m.doc_id) for m in law.versions):
                return self.check(ref, target, law, frozenset(), day)
        held = "、".join(f"《{law.latest.title}》" for law in parts)
        return Finding(
            UNKNOWN_LAW,
            f"本库只收录{held}，{label}不在其中，无法核验。",
            article=label,
            evidence={"reason": "part_not_in_corpus", "parts": [_version(law.latest) for law in parts]},
        )

    # --- one cited provision of one law ---------------------------------------------------------------------

    def check(self, ref: Reference, target: ArticleRef, law: Law, pinned: frozenset[str], day: str) -> Finding:
        label = article_label(target.main, target.sub)
        quotes = ref.quotes
        pool = [m for m in law.versions if m.doc_id in pinned] or list(law.versions)
        if ref.version:
            named = [m for m in pool if ref.version in ((m.promulgated or "")[:7], (m.effective_date or "")[:7])]
            named = named or [m for m in pool if ref.version[:4] in ((m.promulgated or "")[:4],)]
            pool = named or pool
        current = in_force_on(law, day)
        order = sorted(pool, key=lambda m: (m is not current, -(law.versions.index(m))))
        having = [m for m in order if label in self.provisions(m.doc_id)]
        if not having:
            return self._missing(label, law, current or law.latest, None)
        chosen = None
        if quotes:
            chosen = next((m for m in having if self._all_in(quotes, self.provisions(m.doc_id)[label])), None)
        if chosen is None:
            chosen = current if current in having else None
        if chosen is None:
            before = [m for m in having if (_effective(m) or "") <= day]
            chosen = before[0] if before else having[-1]
        provision = self.provisions(chosen.doc_id)[label]
        base: dict[str, Any] = {"doc_id": chosen.doc_id, "title": chosen.title, "article": label}
        part = provision.part(target.paragraph, target.item)
        if part is None:
            return self._missing(label, law, chosen, target)
        quote_results = tuple(self._quote(q, provision, chosen, law, part) for q in quotes)
        quote_problem = next((r for r in quote_results if r["match"] == "elsewhere"), None) or next(
            (r for r in quote_results if r["match"] == "mismatch"), None
        )
        evidence: dict[str, Any] = {
            "version": _version(chosen),
            "article_text": provision.text,
            "cited_part": {"start": part[0], "end": part[1], "text": provision.text[part[0] : part[1]]},
        }
        version_finding = self._version_finding(label, chosen, law, day, provision)
        if version_finding is not None:
            status, message, extra = version_finding
            also = (
                (QUOTE_ELSEWHERE if quote_problem["match"] == "elsewhere" else QUOTE_MISMATCH,) if quote_problem else ()
            )
            return Finding(status, message, **base, evidence={**evidence, **extra}, quotes=quote_results, also=also)
        if quote_problem is not None and quote_problem["match"] == "elsewhere":
            where = "、".join(f"《{f['title']}》{f['article']}" for f in quote_problem["found_in"])
            return Finding(
                QUOTE_ELSEWHERE,
                f"引文“{quote_problem['text']}”不在《{chosen.title}》{label}中，而见于{where}。",
                **base,
                evidence=evidence,
                quotes=quote_results,
            )
        if quote_problem is not None:
            return Finding(
                QUOTE_MISMATCH,
                f"引文与《{chosen.title}》{label}原文不符。原文为：“{quote_problem['closest']['text']}”。",
                **base,
                evidence=evidence,
                quotes=quote_results,
            )
        notes = [r["note"] for r in quote_results if r.get("note")]
        upcoming = self._upcoming(chosen, law, day)
        if upcoming:
            evidence["upcoming"] = upcoming
        return Finding(
            OK,
            f"《{chosen.title}》{label}在{day}有效，引文与原文一致。"
            if quotes
            else f"《{chosen.title}》{label}在{day}有效。",
            **base,
            evidence={**evidence, **({"notes": notes} if notes else {})},
            quotes=quote_results,
        )

    def _all_in(self, quotes: Sequence[Quote], provision: Provision) -> bool:
        return all(provision.find(q.text) is not None for q in quotes)

    def _missing(self, label: str, law: Law, version: DocumentMeta, target: ArticleRef | None) -> Finding:
        provisions = self.provisions(version.doc_id)
        labels = list(provisions)
        evidence: dict[str, Any] = {"version": _version(version), "articles": len(labels)}
        if labels:
            evidence["last_article"] = labels[-1]
        if target is None:
            # a stored text that stops early (no entry-into-force clause) cannot prove an article absent
            incomplete = not version.effective_clause
            evidence["text_incomplete"] = incomplete
            where = f"，共{len(labels)}条（止于{labels[-1]}）" if labels else "，其文本未分条"
            message = f"《{version.title}》没有{label}{where}。"
            if incomplete:
                message += "注意：本库所存文本缺少施行条款，可能不完整。"
            return Finding(ARTICLE_MISSING, message, version.doc_id, version.title, label, evidence=evidence)
        provision = provisions[label]
        paragraphs = provision.paragraphs
        evidence["paragraphs"] = len(paragraphs)
        evidence["article_text"] = provision.text
        if target.paragraph is not None and target.paragraph > len(paragraphs):
            what = f"第{_cn(target.paragraph)}款（该条共{len(paragraphs)}款）"
        else:
            para = f"第{_cn(target.paragraph)}款" if target.paragraph else ""
            what = f"{para}第（{_cn(target.item or 0)}）项"
        return Finding(
            ARTICLE_MISSING,
            f"《{version.title}》{label}没有{what}。",
            version.doc_id,
            version.title,
            label,
            evidence=evidence,
        )

    def _quote(
        self, quote: Quote, provision: Provision, version: DocumentMeta, law: Law, part: tuple[int, int]
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"text": quote.text, "start": quote.start, "end": quote.end}
        found = provision.find(quote.text)
        if found is not None:
            out.update(match="verbatim", law_start=found[0], law_end=found[1])
            if not (part[0] <= found[0] and found[1] <= part[1]):
                out["note"] = f"引文见于{provision.label}的其他款项，而非所引款项。"
            return out
        if len(fold(quote.text).text) < MIN_QUOTATION_CHARS:
            # a few words in quotation marks (该行为属于“变相许可”) are a term the memo uses, not a quotation of
            # the provision, unless they nearly are the provision's words (“不得兴建高层建筑物”)
            near = closest_span(quote.text, provision)
            if near.similarity < TERM_SIMILARITY:
                out.update(match="term", note="引号内为用语而非引文，未作核对。")
                return out
        elsewhere = []
        for meta in sorted(law.versions, key=lambda m: m is not version):
            for label, other in self.provisions(meta.doc_id).items():
                if label != provision.label and (span := other.find(quote.text)) is not None:
                    elsewhere.append(
                        {
                            "doc_id": meta.doc_id,
                            "title": meta.title,
                            "article": label,
                            "start": span[0],
                            "end": span[1],
                            "article_text": other.text,
                        }
                    )
            if elsewhere:
                break  # the cited version's own articles first
        if elsewhere:
            out.update(match="elsewhere", found_in=elsewhere)
            return out
        closest = closest_span(quote.text, provision)
        # verbatim in another law: that law was meant, unless the cited article nearly says it (拒不改正的，处10万元
        # 以上50万元以下的罚款 is boilerplate of many regulations; the one cited says 100万: a misquotation of it)
        if (
            closest.similarity < NEAR_QUOTATION
            and self._search is not None
            and len(fold(quote.text).text) >= MIN_QUOTATION_CHARS
        ):
            elsewhere = self._in_other_laws(quote.text, law)
            if elsewhere:
                out.update(match="elsewhere", found_in=elsewhere)
                return out
        out.update(
            match="mismatch",
            closest={
                "start": closest.start,
                "end": closest.end,
                "text": closest.text,
                "similarity": closest.similarity,
            },
            diff=list(closest.diff),
        )
        return out

    def _in_other_laws(self, quote: str, law: Law) -> list[dict[str, Any]]:
        """Where else in the corpus a quotation is verbatim (a quotation of another law cited under this one's
        name): the lexical search's candidates, each checked verbatim against its whole stored article."""
        assert self._search is not None
        own = {m.doc_id for m in law.versions}
        found = []
        for meta, label in self._search(quote):
            if meta.doc_id in own:
                continue
            other = self.provisions(meta.doc_id).get(label)
            span = other.find(quote) if other is not None else None
            if other is not None and span is not None:
                found.append(
                    {
                        "doc_id": meta.doc_id,
                        "title": meta.title,
                        "article": label,
                        "start": span[0],
                        "end": span[1],
                        "article_text": other.text,
                    }
                )
        return found[:MAX_ELSEWHERE_LISTED]

    def _version_finding(
        self, label: str, chosen: DocumentMeta, law: Law, day: str, provision: Provision
    ) -> tuple[str, str, dict[str, Any]] | None:
        dated = replace(chosen, effective_date=_effective(chosen, label))
        index = law.versions.index(chosen)
        successor = law.versions[index + 1] if index + 1 < len(law.versions) else None
        status = version_status(dated, successor, day, day).status
        if status == SUPERSEDED:
            current = in_force_on(law, day) or law.latest
            extra: dict[str, Any] = {"successor": _version(current), **self._counterpart(provision, current)}
            corresponding = extra.get("counterpart")
            then = f"，对应条文为{corresponding['article']}" if corresponding else "，新版本中没有对应条文"
            dates = _dates(current)
            return (
                STATUS_SUPERSEDED,
                f"所引为《{chosen.title}》{_dates(chosen)}的文本，在{day}已被新版本《{current.title}》{dates}取代{then}。",
                extra,
            )
        if status == NOT_YET_IN_FORCE:
            then_in_force = in_force_on(law, day)
            extra = {"in_force_then": _version(then_in_force) if then_in_force else None}
            if then_in_force is not None:
                extra.update(self._counterpart(provision, then_in_force))
            then = (
                f"；当日有效的是《{then_in_force.title}》{_dates(then_in_force)}"
                if then_in_force
                else "；当日尚无有效版本"
            )
            return (
                STATUS_NOT_YET_IN_FORCE,
                f"《{chosen.title}》{_dates(chosen)}在{day}尚未施行{then}。",
                extra,
            )
        return None

    def _counterpart(self, provision: Provision, other: DocumentMeta) -> dict[str, Any]:
        """The article of `other` that corresponds to `provision` (same rule as the version diff), with the diff;
        computed once per pair (comparing an article with every article of a version is the costly part)."""
        key = (id(provision), other.doc_id)
        if key not in self._counterparts:
            self._counterparts[key] = self._find_counterpart(provision, other)
        return self._counterparts[key]

    def _find_counterpart(self, provision: Provision, other: DocumentMeta) -> dict[str, Any]:
        articles = [Article(p.label, p.text, p.text[len(p.label) :]) for p in self.provisions(other.doc_id).values()]
        found = counterpart(provision.label, provision.text, articles)
        if found is None:
            return {"counterpart": None}
        article, similarity = found
        new = self.provisions(other.doc_id)[article.label]
        old_text, new_text = provision.folded, new.folded
        diff = char_diff(old_text, (0, len(old_text.text)), new_text, (0, len(new_text.text)), ("old", "new"))
        return {
            "counterpart": {"article": article.label, "text": article.text, "similarity": round(similarity, 3)},
            "diff": diff,
        }

    def _upcoming(self, chosen: DocumentMeta, law: Law, day: str) -> dict[str, Any] | None:
        later = [m for m in law.versions[law.versions.index(chosen) + 1 :] if (m.promulgated or "") <= day]
        return _version(later[0]) if later else None


def _dates(meta: DocumentMeta) -> str:
    if meta.promulgated and meta.promulgated != meta.effective_date:
        return f"（公布：{meta.promulgated}，施行：{meta.effective_date or '日期不详'}）"
    return f"（施行：{meta.effective_date or '日期不详'}）"


def _cn(number: int) -> str:
    from regrag.text.legal import int_to_chinese

    return int_to_chinese(number) if number > 0 else "?"
