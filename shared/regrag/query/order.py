"""order: which quote is read first.

The quotes follow their candidates' ranking, which weighs how much of the question an article shares, not
whether it holds the thing asked. Two readings of the question change who goes first, among the first
`FIRST_AMONG` quotes only (further down, the ranking knows better than these two coarse signals):

1. it asks for a kind of provision that names a specific thing (a penalty for 怎么处罚, an authority for 由谁批准,
   a time limit for 多久, liability for 谁赔) and the first quote holds none of it while a later one does: the
   later one goes first. The duty article (不得向建设单位收取费用) shares the question's words; the penalty article
   (责令退还所收费用，处…罚款) answers it. Procedure, definition and list questions are left out: their wording
   (申请 / 批准 / 所称 / 下列) is in most articles of a procedure or definition chapter and picks nothing.
2. it is set in a province (a province filter, or a province it names) and the first quote is a national rule
   while a later one is that province's own and holds at least what the first holds of the things asked: the
   province's rule goes first. The local rule implements the national one for that place (广东省土地管理条例 names
   the level of government the national 土地管理法 leaves to the provinces), and it is what applies there.

Measured on the dev, lay dev and quotes dev sets (bench/README.md, "What the user reads"): rule 1 moved the
right first quote in 4 questions and the wrong one in none; rule 2 in 1 and none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from regrag.domain.results import Candidate
from regrag.query.fit import Fit
from regrag.query.question import Question

FIRST_AMONG = 3  # the quotes that may be moved to the front
# the kinds of provision whose answer is one specific thing a quote holds or not (query/forms.py)
SPECIFIC_FORMS = frozenset({"penalty", "authority", "time_limit", "liability"})
NATIONAL = "national"

T = TypeVar("T")


def first_quote(q: Question, quotes: Sequence[tuple[T, Candidate, Fit]]) -> list[tuple[T, Candidate, Fit]]:
    """`quotes` (in ranking order, each with its candidate and fit) with the one that should be read first moved
    to the front; the others keep their order."""
    order = list(quotes)
    if len(order) < 2:
        return order
    for pick in (_holds_what_is_asked, _province_own):
        index = pick(q, order[:FIRST_AMONG])
        if index:
            order.insert(0, order.pop(index))
    return order


def _specific(fit: Fit) -> set[str]:
    return set(fit.asked) & SPECIFIC_FORMS


def _holds_what_is_asked(q: Question, quotes: Sequence[tuple[T, Candidate, Fit]]) -> int | None:
    if not {f.name for f in q.forms} & SPECIFIC_FORMS or _specific(quotes[0][2]):
        return None
    return next((i for i, (_, _, f) in enumerate(quotes) if i and _specific(f)), None)


def _province_own(q: Question, quotes: Sequence[tuple[T, Candidate, Fit]]) -> int | None:
    provinces = (set(q.filters.province) | set(q.places.provinces)) - {NATIONAL}
    first = quotes[0]
    if not provinces or first[1].chunk.meta.province != NATIONAL:
        return None
    held = set(first[2].asked)
    return next(
        (i for i, (_, c, f) in enumerate(quotes) if i and c.chunk.meta.province in provinces and set(f.asked) >= held),
        None,
    )
