"""held: the acts a question about a past day would be answered from, whose text of that day the library lacks.

A question about 2015 is searched among the versions in force on 2015-12-31. An act the library holds only in a
later version (电力供应与使用条例 as amended in 2019; the 1996 text it amended is not stored) is not among them, so
the answer quotes what was in force then (河南 and 济南 rules), says no national rule is among the quotes, and
the reader takes the national rule for missing, when the library only lacks its 2015 text. Or nothing is near
enough and the question is refused as if its words were wrong (as_of 1990: no energy text of the library was in
force yet). The acts the same question finds among the law of today are what it would have been answered from:
those of them with no stored version in force on the day asked are named, with the day their text took effect.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Sequence

from regrag.domain.models import NATIONAL, DocumentMeta
from regrag.domain.results import Candidate

# the supersedes chain through a stored document, oldest first (views/documents.version_chain)
Chain = Callable[[str], Sequence[DocumentMeta]]


def later_only(
    day: str, today_ranked: Sequence[Candidate], chain: Chain, top_n: int, provinces: Collection[str] = ()
) -> list[DocumentMeta]:
    """The documents of the first `top_n` of `today_ranked` (the question searched among today's law) that took
    effect after `day`, no stored version of which was in force on `day`, each once, in ranking order: national
    ones, and those of `provinces` (the places the question is about), the rules that apply there. A document with
    a version in force on `day` was searched: nothing to say."""
    asked = dt.date.fromisoformat(day)
    found: dict[str, DocumentMeta] = {}
    for candidate in today_ranked[:top_n]:
        version = candidate.chunk.meta
        applies = version.province == NATIONAL or version.province in provinces
        if not applies or version.doc_id in found or version.in_force_on(asked):
            continue
        if not any(stored.in_force_on(asked) for stored in chain(version.doc_id)):
            found[version.doc_id] = version
    return list(found.values())


def note(day: str, documents: Sequence[DocumentMeta]) -> str:
    """What the reader is told of them: the answer lacks these acts' law of that day, not the acts."""
    named = "、".join(
        f"《{d.title}》（{d.effective_date}起施行{'，日期待核' if d.effective_date_uncertain else ''}）"
        for d in documents
    )
    return (
        f"库中{named}只有所问时点{day}之后施行的文本，该时点有效的文本不在库中，引文未含其规定："
        "如需当时的规定，请查阅当时的文本。"
    )
