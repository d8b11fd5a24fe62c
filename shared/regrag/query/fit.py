"""How well one unit of an article (a sentence, a lead-in, an item) answers the question: what picks the span
that is quoted, and what orders the quotes.

Two parts, both read from what `analyse` took from the question:
- distinctive coverage: the question's key terms found in the unit, each weighted by how few units of the
  article contain it (an inverse document frequency within the article). Terms every item shares (供电企业,
  通知) say little about which item answers; the term only one item has (临时检修) says which. An item's lead-in
  counts at half weight, since it is shared by every item of its list.
- what the question asks for, found in the unit: a figure (in the unit asked, when it names one), the figures it
  states itself (or else a threshold admitting the figure its case is told in: 从业人员120人 under 超过一百人的), and
  the kind of provision its wording asks for (question forms: a penalty for 怎么处罚, an authority for 由谁, a time
  limit for 多久, a permission or prohibition for 能不能 …; query/forms.py).
When no unit of an article holds a key term or a thing asked (every fit 0), the characters of the key terms decide
which unit is quoted (`key_characters`): only then, since within a tie of non-zero fits a shared character (时 of
时间限制 in 时限) picked a sentence that says less (bench/README.md, stop 40).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from regrag.query.question import Question
from regrag.text.figures import admits_case, figure_in_units, states_figure, states_values
from regrag.text.relations import title_key

# each thing the question asks for that the unit holds adds this to its distinctive coverage (a share, 0–1):
# one such match outweighs half the question's key terms (chosen on the dev sets: bench/README.md)
ASKED_WEIGHT = 0.5
# the key terms of the clause that asks (最长可以缓多少天, 由哪一级政府责令改正) say what the answer must hold: they
# weigh this much more than the terms that set the scene
FOCUS_WEIGHT = 1.5
ENUMERATION = "enumeration"  # a question for a whole list: answered by a lead-in (with its items), not one item
# a question whether something is allowed (能不能 / 可以吗 / 合法吗): answered by the unit that permits or forbids it
# (可以 / 有权 / 不得 / 禁止 …), not by the one that encourages or defines; its words are in most articles, so it
# picks a unit within an article and says nothing about whether the answer holds it (judge.py)
PERMISSION = "permission"
# …and, being in most units, it counts half a thing asked: a unit saying 可以 about another matter (可以申请…补助)
# outweighed the item naming what was asked (（三）偏远地区和海岛可再生能源独立电力系统建设) for 基金能否用于…海岛…建设.
# Measured in stops 43 and 44 it helped only that question; at stop 45 it also made a blind set's first quote and
# dev nr-27's (未经审核的…不得为其办理用地等有关手续, not 不得随意调整) right, and moved no key the wrong way.
PERMISSION_SHARE = 0.5
# a question for what someone must do (负有什么义务 / 应该怎么做): answered by the unit that obliges (应当 / 必须),
# which most articles hold as well, so it counts as permission does: 中止供电前还负有什么义务 quoted the 款 that
# allows the cut-off, not the one on 应当事先通知 (stop 53: that question only; bench/README.md)
DUTY = "duty"
# the things asked that most units hold, each counting PERMISSION_SHARE
_COMMON_ASKS = (PERMISSION, DUTY)
FIGURE = "figure"  # the name of a figure asked, among the things a unit holds (`Fit.asked`)
# a threshold the unit states that admits a figure the question tells its case in (从业人员120人 under 超过一百人的,
# not 一百人以下): the unit is the rule for the asker's case, where its neighbours are for other cases
CASE_FIGURE = "case_figure"
# a key term found only in an article the unit refers to (因本条例第四十四条第（二）项至第（五）项情形的 /
# 违反本法第三十条规定的) counts this much: the unit is about the case that article describes, but its own words
# still weigh more (bench/README.md, stop 44)
REFERENCE_WEIGHT = 0.5


@dataclass(frozen=True)
class Fit:
    """A unit's fit: its distinctive coverage (0–1) and the asked things it holds (named, for judge and debug)."""

    coverage: float
    asked: tuple[str, ...]

    @property
    def score(self) -> float:
        return self.coverage + ASKED_WEIGHT * sum(PERMISSION_SHARE if a in _COMMON_ASKS else 1.0 for a in self.asked)


def rarity(q: Question, texts: Sequence[str], title: str = "") -> dict[str, float]:
    """Each key term's weight within one article: idf over its units (log((N + 1) / (n + 0.5))).

    When the question names the act quoted from (也归可再生能源法管吗, in 中华人民共和国可再生能源法), the words of that
    name weigh nothing: they say which law, not which of its units answers (the definition of 可再生能源 would
    otherwise outweigh the 款 on 直接燃烧秸秆 asked about)."""
    n = len(texts)
    named = title_key(title)
    named = named if named and named in q.text else ""
    return {
        k.term: 0.0 if named and k.term in named else math.log((n + 1) / (sum(k.term in t for t in texts) + 0.5))
        for k in q.keywords
    }


def fit(
    q: Question, text: str, context: str, rare: dict[str, float], *, lead_in: bool = False, referenced: str = ""
) -> Fit:
    """The fit of the quote a unit makes: its `text` with its `context` (an item's lead-in paragraph, shown with
    it), to the question. `lead_in`: the unit introduces a list (what a question for a whole list wants).
    `referenced`: the articles of the same text the unit refers to (text/legal.py `referenced_text`); a key term
    found only there counts at REFERENCE_WEIGHT."""
    shown = f"{context}{text}"
    weights = [(k, k.weight * (FOCUS_WEIGHT if k.term in q.focus else 1.0)) for k in q.keywords]
    total = sum(w * max(rare.values(), default=1.0) for _, w in weights)
    found = sum(w * rare[k.term] for k, w in weights if k.term in shown)
    elsewhere = [(k, w) for k, w in weights if k.term not in shown and k.term in referenced]
    found += REFERENCE_WEIGHT * sum(w * rare[k.term] for k, w in elsewhere)
    asked = [a for a in asked_in(q, shown) if a != ENUMERATION or lead_in]
    return Fit(found / total if total > 0 else 0.0, tuple(asked))


def key_characters(q: Question, texts: Sequence[str]) -> dict[str, float]:
    """The characters of the question's key terms, each weighted by how few of the article's units hold it (the
    idf `rarity` gives terms). What tells units apart when none holds a key term whole: a lay question's words
    (高压线, 房顶, 加盖) are not the statute's (架空电力线路, 房屋, 增加高度), yet share their morphemes (房, 加)."""
    n = len(texts)
    # in the order the question writes them, not a set's: `character_overlap` sums the weights in this order, and
    # a set's order (string hashes differ between processes) made two units' float sums differ in the last bit
    # from one run to the next, so a tie was broken differently and the same question quoted another 款
    chars = dict.fromkeys(c for k in q.keywords for c in k.term if "\u4e00" <= c <= "\u9fff")
    return {c: math.log((n + 1) / (sum(c in t for t in texts) + 0.5)) for c in chars}


def character_overlap(text: str, context: str, chars: dict[str, float]) -> float:
    """The weight of the key characters (`key_characters`) a unit's quote shows, with its context."""
    shown = f"{context}{text}"
    return sum(weight for c, weight in chars.items() if c in shown)


def asked_in(q: Question, text: str) -> tuple[str, ...]:
    """The things the question asks for that `text` holds, by name."""
    asked = []
    if q.asks_figure and states_figure(text) and figure_in_units(q.units, text):
        asked.append(FIGURE)
    if q.stated_figures and states_values(q.stated_figures, text):
        asked.append("stated_figure")
    elif admits_case(q.case_figures, text):
        asked.append(CASE_FIGURE)
    asked += [f.name for f in q.forms if f.answered.search(text)]
    return tuple(asked)
