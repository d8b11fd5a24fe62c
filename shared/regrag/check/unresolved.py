"""References whose title names no single stored law: no title to refer back to, several laws (ambiguous), a
law the corpus lacks (unknown_law), or a title no national law or regulation bears (wrong_title: only where the
bundled catalogue can know it, and only up to its date; regrag.check.catalogue)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from regrag.check.catalogue import Catalogue, is_national_form
from regrag.check.findings import STATUS_AMBIGUOUS, UNKNOWN_LAW, WRONG_TITLE, Finding, version_summary
from regrag.check.references import Reference
from regrag.check.titles import AMBIGUOUS, NOT_FOUND, Resolution

MAX_AMBIGUOUS_LISTED = 20


def unresolved(
    ref: Reference, resolution: Resolution | None, day: str, catalogue: Catalogue, corpus_titles: Sequence[str]
) -> Finding:
    """The finding for a reference whose title names no single stored law (module docstring)."""
    if resolution is None:  # 《条例》 / 本法 with no title before it
        return Finding(
            UNKNOWN_LAW,
            f"“{ref.written}”之前没有可指代的法规名称，无法核验。",
            evidence={"reason": "no_antecedent", "written": ref.written},
        )
    if resolution.kind == AMBIGUOUS:
        laws = resolution.laws[:MAX_AMBIGUOUS_LISTED]
        listed = [version_summary(law.latest) for law in laws]
        names = "、".join(f"《{law.latest.title}》" for law in laws)
        return Finding(
            STATUS_AMBIGUOUS,
            f"《{ref.title}》可指多部法规：{names}。请写明全称。",
            evidence={"candidates": listed, "count": len(resolution.laws)},
        )
    assert resolution.kind == NOT_FOUND
    key = resolution.key
    suggestion = catalogue.suggest(key, corpus_titles)
    evidence: dict[str, Any] = {
        "catalogue": {"source": catalogue.source, "as_of": catalogue.as_of},
        "in_catalogue": key in catalogue,
    }
    if suggestion:
        evidence["suggestion"] = suggestion
    hint = f"是否指《{suggestion}》？" if suggestion else ""
    if is_national_form(key) and key not in catalogue:
        evidence["national_form"] = True
        if day <= catalogue.as_of:
            return Finding(
                WRONG_TITLE,
                f"没有名为《{ref.title}》的法律或行政法规（法律、行政法规目录截至{catalogue.as_of}）。{hint}",
                evidence=evidence,
            )
        # after the snapshot a new law may bear this title: say so instead of denying it exists
        return Finding(
            UNKNOWN_LAW,
            f"本库未收录《{ref.title}》，截至{catalogue.as_of}的法律、行政法规目录中也没有这一名称"
            f"（此后公布的不在目录中），无法核验。{hint}",
            evidence={**evidence, "reason": "not_in_catalogue_after_snapshot"},
        )
    known = "该名称见于法律、行政法规目录，" if key in catalogue else ""
    return Finding(
        UNKNOWN_LAW,
        f"本库未收录《{ref.title}》，{known}无法核验其条文。{hint}",
        evidence={**evidence, "reason": "not_in_corpus"},
    )
