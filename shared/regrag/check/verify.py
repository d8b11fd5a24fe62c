"""Checks one cited provision of a stored law as of the document's date (statuses: regrag.check.findings).

Which version a citation means: the one its quotation is the text of (the version in force first), else the
version its title or its named revision (（2018年修正）) picks, else the version in force that day, else the one
that has the article. One status per provision; when a citation has two problems (an outdated version quoted
wrongly), the version's comes first and the other is kept in `also`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from regrag.check.findings import (
    ARTICLE_MISSING,
    OK,
    QUOTE_ELSEWHERE,
    QUOTE_MISMATCH,
    STATUS_NOT_YET_IN_FORCE,
    STATUS_SUPERSEDED,
    UNKNOWN_LAW,
    Finding,
    dates_text,
    version_summary,
)
from regrag.check.provisions import Provision, char_diff, closest_span, fold
from regrag.check.references import ArticleRef, Quote, Reference
from regrag.check.titles import Law
from regrag.domain.models import DocumentMeta
from regrag.query.citations import NOT_YET_IN_FORCE, SUPERSEDED, version_status
from regrag.text.figures import figures_in_units_of, unstated_figures
from regrag.text.legal import article_label
from regrag.text.sentences import split_sentences
from regrag.views.version_diff import Article, counterpart

MAX_ELSEWHERE_LISTED = 5
PART_COUNTERPART_SIMILARITY = 0.6  # the version diff's own floor (views.version_diff.MIN_SIMILARITY)
MIN_QUOTATION_CHARS = 10  # shorter text in quotation marks may be a term; see Verifier._quote
TERM_SIMILARITY = 0.75  # … unless its closest span in the provision is at least this similar
NEAR_QUOTATION = 0.75  # a closest span this similar makes a quotation a misquotation of the article cited

# a document's articles by doc id (the check reads each cited document once)
ArticlesOf = Callable[[str], Sequence[Article]]
# the stored documents whose text may hold a quotation (a lexical search): [(doc metadata, article label)]
QuoteSearch = Callable[[str], Sequence[tuple[DocumentMeta, str]]]


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

    def __init__(self, articles_of: ArticlesOf, search: QuoteSearch | None = None) -> None:
        self._articles_of = articles_of
        self._search = search
        self._cache: dict[str, dict[str, Provision]] = {}
        self._counterparts: dict[tuple[int, str, str], dict[str, Any]] = {}

    def provisions(self, doc_id: str) -> dict[str, Provision]:
        if doc_id not in self._cache:
            self._cache[doc_id] = _provisions(self._articles_of(doc_id))
        return self._cache[doc_id]

    def check_parts(
        self, ref: Reference, target: ArticleRef, parts: Sequence[Law], day: str, siblings: Sequence[str] = ()
    ) -> Finding:
        """An act the corpus holds in parts with one numbering (民法典 合同编, 物权编): the part that has the
        article is checked; an article in none of them lies in a part the corpus lacks, so it cannot be
        verified (it is not proved absent)."""
        label = article_label(target.main, target.sub)
        for law in parts:
            if any(label in self.provisions(m.doc_id) for m in law.versions):
                return self.check(ref, target, law, frozenset(), day, siblings)
        held = "、".join(f"《{law.latest.title}》" for law in parts)
        return Finding(
            UNKNOWN_LAW,
            f"本库只收录{held}，{label}不在其中，无法核验。",
            article=label,
            evidence={"reason": "part_not_in_corpus", "parts": [version_summary(law.latest) for law in parts]},
        )

    # --- one cited provision of one law ---------------------------------------------------------------------

    def check(
        self,
        ref: Reference,
        target: ArticleRef,
        law: Law,
        pinned: frozenset[str],
        day: str,
        siblings: Sequence[str] = (),
    ) -> Finding:
        """One provision of a reference; `siblings` are the other articles the same reference cites
        (第十条、第十一条规定：“…”): a quotation that is another of them is theirs, not this one's."""
        label = article_label(target.main, target.sub)
        quotes = tuple(q for q in ref.quotes if not self._belongs_to_sibling(q, label, siblings, law))
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
            "version": version_summary(chosen),
            "article_text": provision.text,
            "cited_part": {"start": part[0], "end": part[1], "text": provision.text[part[0] : part[1]]},
        }
        # what the citation points at inside the article: its first quotation, else the 款/项 it names
        cited = quotes[0].text if quotes and provision.find(quotes[0].text) else provision.text[part[0] : part[1]]
        version_finding = self._version_finding(label, chosen, law, day, provision, cited)
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
        moved = None if quotes else self._renumbered(label, chosen, law)
        if moved is not None:
            evidence["renumbered"] = moved
        message = (
            f"《{chosen.title}》{label}在{day}有效，引文与原文一致。"
            if quotes
            else f"《{chosen.title}》{label}在{day}有效。" + (moved["message"] if moved else "")
        )
        unstated = unstated_figures(ref.said, provision.text)
        if unstated:
            # the memo's own words put a figure on the article that it does not state: a paraphrase that changed
            # 提前7天 into 提前3天 passes every other check
            written = figures_in_units_of(unstated, provision.text)
            evidence["unstated_figures"] = {"said": list(unstated), "article": list(written)}
            message += (
                f"注意：文书此处所写的{'、'.join(f'“{f}”' for f in unstated)}不见于该条"
                f"（该条所写：{'、'.join(written)}），请以原文核对。"
            )
        return Finding(
            OK,
            message,
            **base,
            evidence={**evidence, **({"notes": notes} if notes else {})},
            quotes=quote_results,
        )

    def _belongs_to_sibling(self, quote: Quote, label: str, siblings: Sequence[str], law: Law) -> bool:
        if not siblings:
            return False
        versions = [self.provisions(m.doc_id) for m in law.versions]
        here = any(label in v and v[label].find(quote.text) is not None for v in versions)
        return not here and any(s in v and v[s].find(quote.text) is not None for v in versions for s in siblings)

    def _all_in(self, quotes: Sequence[Quote], provision: Provision) -> bool:
        return all(provision.find(q.text) is not None for q in quotes)

    def _missing(self, label: str, law: Law, version: DocumentMeta, target: ArticleRef | None) -> Finding:
        provisions = self.provisions(version.doc_id)
        labels = list(provisions)
        evidence: dict[str, Any] = {"version": version_summary(version), "articles": len(labels)}
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
        if provision.same_words(quote.text):
            out.update(match="verbatim", note="引文与原文一致，仅数字写法不同（阿拉伯数字与汉字）。")
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
        self, label: str, chosen: DocumentMeta, law: Law, day: str, provision: Provision, cited: str
    ) -> tuple[str, str, dict[str, Any]] | None:
        dated = replace(chosen, effective_date=_effective(chosen, label))
        index = law.versions.index(chosen)
        successor = law.versions[index + 1] if index + 1 < len(law.versions) else None
        status = version_status(dated, successor, day, day).status
        if status == SUPERSEDED:
            current = in_force_on(law, day) or law.latest
            extra: dict[str, Any] = {
                "successor": version_summary(current),
                **self._counterpart(provision, current, cited),
            }
            corresponding = extra.get("counterpart")
            then = f"，对应条文为{corresponding['article']}" if corresponding else "，新版本中没有对应条文"
            dates = dates_text(current)
            return (
                STATUS_SUPERSEDED,
                f"所引为《{chosen.title}》{dates_text(chosen)}的文本，在{day}已被新版本《{current.title}》{dates}取代{then}。",
                extra,
            )
        if status == NOT_YET_IN_FORCE:
            then_in_force = in_force_on(law, day)
            extra = {"in_force_then": version_summary(then_in_force) if then_in_force else None}
            if then_in_force is not None:
                extra.update(self._counterpart(provision, then_in_force, cited))
            then = (
                f"；当日有效的是《{then_in_force.title}》{dates_text(then_in_force)}"
                if then_in_force
                else "；当日尚无有效版本"
            )
            return (
                STATUS_NOT_YET_IN_FORCE,
                f"《{chosen.title}》{dates_text(chosen)}在{day}尚未施行{then}。",
                extra,
            )
        return None

    def _counterpart(self, provision: Provision, other: DocumentMeta, cited: str) -> dict[str, Any]:
        """The article of `other` that corresponds to `provision` (same rule as the version diff), with the diff;
        computed once per pair (comparing an article with every article of a version is the costly part)."""
        key = (id(provision), other.doc_id, cited)
        if key not in self._counterparts:
            self._counterparts[key] = self._find_counterpart(provision, other, cited)
        return self._counterparts[key]

    def _find_counterpart(self, provision: Provision, other: DocumentMeta, cited: str) -> dict[str, Any]:
        articles = [Article(p.label, p.text, p.text[len(p.label) :]) for p in self.provisions(other.doc_id).values()]
        found = counterpart(provision.label, provision.text, articles)
        if found is None:
            return self._part_counterpart(cited, other) if cited.strip() else {"counterpart": None}
        article, similarity = found
        new = self.provisions(other.doc_id)[article.label]
        old_text, new_text = provision.folded, new.folded
        diff = char_diff(old_text, (0, len(old_text.text)), new_text, (0, len(new_text.text)), ("old", "new"))
        return {
            "counterpart": {"article": article.label, "text": article.text, "similarity": round(similarity, 3)},
            "diff": diff,
        }

    def _part_counterpart(self, cited: str, other: DocumentMeta) -> dict[str, Any]:
        """When no whole article corresponds (a revision split or merged it), the article of `other` that holds
        the span closest to what the citation points at (its quotation or its 款/项), when close enough."""
        best: tuple[float, Provision, Any] | None = None
        for candidate in self.provisions(other.doc_id).values():
            near = closest_span(cited, candidate)
            if best is None or near.similarity > best[0]:
                best = (near.similarity, candidate, near)
        if best is None or best[0] < PART_COUNTERPART_SIMILARITY:
            return {"counterpart": None}
        similarity, article, near = best
        return {
            "counterpart": {
                "article": article.label,
                "text": article.text,
                "similarity": round(similarity, 3),
                "matched_on": "cited_part",
                "span": {"start": near.start, "end": near.end, "text": near.text},
            },
            "diff": [{"op": d["op"], "old": d["quote"], "new": d["law"]} for d in near.diff],
        }

    def _renumbered(self, label: str, chosen: DocumentMeta, law: Law) -> dict[str, Any] | None:
        """For a citation with no quotation, which cannot be checked against the text: when the version before the
        one chosen had an article of that number whose text now stands under another number (消耗臭氧层物质管理条例:
        the 2018 第三十一条 on producing without a quota is the 2023 第三十条; the 2023 第三十一条 is on using one),
        a memo citing the old number for the old rule passes as valid. Say where that article went."""
        index = law.versions.index(chosen)
        older = next((m for m in reversed(law.versions[:index]) if label in self.provisions(m.doc_id)), None)
        if older is None:
            return None
        before = self.provisions(older.doc_id)[label]
        # the whole article, or (revised beyond matching whole) the article holding the text closest to its first
        # sentence: what a citation of the article by number is usually about
        first = next(iter(split_sentences(before.text[len(label) :])), "")
        found = self._counterpart(before, chosen, first).get("counterpart")
        if not found or found["article"] == label:
            return None
        return {
            "older": version_summary(older),
            "article": found["article"],
            "message": f"注意：旧版本{dates_text(older)}的{label}，在本版本中为{found['article']}；"
            f"本版本的{label}是另一条文，所引内容请以原文核对。",
        }

    def _upcoming(self, chosen: DocumentMeta, law: Law, day: str) -> dict[str, Any] | None:
        later = [m for m in law.versions[law.versions.index(chosen) + 1 :] if (m.promulgated or "") <= day]
        return version_summary(later[0]) if later else None


def _cn(number: int) -> str:
    from regrag.text.legal import int_to_chinese

    return int_to_chinese(number) if number > 0 else "?"
