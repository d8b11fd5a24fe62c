"""When quotes that were found should still not be shown: "no matching provision" beats a quote that does not
answer, for lawyers and permit engineers.

The relevance floor in compose.py abstains when nothing retrieved is near the question. This second rule sees
the answer itself: the confidence computed from retrieval, coverage and dense signals (confidence.py), less a
penalty for each specific thing the question asks that no quote contains:
- a figure (多少 / 几天 / 比例 / 上限 …) and no quoted span states a number with a unit, or, when the question
  names the unit (多少元 / 几个月 / 多少分贝), none states one in that unit;
- its most specific terms (the heaviest keywords) and no quoted span contains any of them;
- a place the corpus does not cover (no candidate document of that province, no quote naming it);
- figures the question states (是否每五年更换 / 按两倍收购) of which no quoted span states any: the rule the
  question presumes is not the one quoted, which is how a question about a rule that does not exist looks.
Each penalty is a reason shown with the abstention. The cut-off is calibrated on the dev, lay dev and
unanswerable question sets (bench/abstention.py prints the curve; bench/README.md has the table).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from regrag.domain.results import Answer, Candidate
from regrag.query import compose
from regrag.query.keywords import Keyword
from regrag.text.legal import chinese_to_int
from regrag.text.places import mentioned_provinces

# what a question asking for a number says (多少钱 / 几天 / 百分之几 / 比例 / 上限 / 标准是多少)
_ASKS_FIGURE = re.compile(r"多少|几[个天年月日次倍度元成]|百分之几|比例|上限|下限|多大|多长|多高|多久|税率|费率")
# a number with a unit (digits or Chinese numerals): what answers such a question
_FIGURE = re.compile(
    r"[0-9０-９.．]+\s*(?:%|％|‰|个|日|天|年|月|小时|倍|元|万元|亿元|千瓦|兆瓦|万千瓦|千伏|伏|度|米|平方米|公里|吨|分钟|周岁|人|户)"
    r"|百分之[一二三四五六七八九十零〇百点]+"
    # Chinese numerals need a unit that is not also a word ending: 第三人 (a third party) is no figure
    r"|[一二三四五六七八九十两百千万]+(?:个工作日|个月|日|天|年|小时|倍|元|万元|千瓦|千伏|米|吨|分钟|周岁)"
)
# a figure a question states (每五年 / 两倍 / 三十天 / 20米): stricter than _FIGURE on Chinese numerals, whose 元
# in a question is as often a word part (三元锂电池) as money
STATED_FIGURE = re.compile(
    r"[0-9０-９]+(?:[.．][0-9０-９]+)?\s*(?:%|％|个|日|天|年|月|小时|倍|元|万元|千瓦|兆瓦|万千瓦|千伏|伏|度|米|平方米|公里|吨|分钟|周岁)"
    r"|[一二三四五六七八九十两百千万]+(?:个工作日|个月|日|天|年|小时|倍|千瓦|千伏|米|吨|分钟|周岁|度)"
)
# the unit a question asks its figure in (多少元 / 几个月 / 多少分贝 / 百分之几): a quote stating 12月31日 or 72小时
# does not answer 每亩多少元 or 多少学时. Counts, persons and money asked as 多少钱 are left out: their answers
# are as often a formula (二倍的工资, 每满一年支付一个月工资) as a figure in the unit
_ASKED_UNIT = re.compile(
    r"(?:多少|几)(个工作日|个月|分贝|毫克|微克|千克|公斤|克|学时|小时|分钟|周岁|千瓦时|万千瓦|千瓦|兆瓦|千伏|平方米"
    r"|平方公里|公顷|亩|公里|米|吨|元|天|日|年|月|倍|度)|百分之(?:几|多少)"
)
# what else states a figure in the same unit (提前7天 / 七日; 1000千瓦时 / 1000度)
_SAME_UNIT = {
    "天": "天|日|个工作日",
    "日": "天|日|个工作日",
    "个工作日": "个工作日|日|天",
    "个月": "个?月",
    "月": "个?月",
    "元": "元|万元|亿元",
    "度": "度|千瓦时|℃",
    "千瓦时": "千瓦时|度",
    "吨": "万?吨",
    "%": "[%％‰]",
}
_LEADING_NUMBER = re.compile(r"[0-9０-９]+|[零〇一二三四五六七八九十两百千万]+")
ANCHOR_TERMS = 2  # the heaviest keywords that make a question specific


def _number(token: str) -> int | None:
    """'30', '３０', '三十', '两' → the integer; None for what is not a plain number."""
    try:
        return chinese_to_int(token)
    except ValueError:
        return None


def figure_values(text: str, pattern: re.Pattern[str] = _FIGURE) -> set[int]:
    """The numbers of the figures in `text` (the number each figure starts with: 五年 → 5, 10千伏 → 10), so that a
    question's 五年 and a statute's 5年 compare equal."""
    values = set()
    for match in pattern.finditer(text):
        lead = _LEADING_NUMBER.match(match.group(0))
        value = _number(lead.group(0)) if lead else None
        if value is not None:
            values.add(value)
    return values


def figure_in_asked_unit(question: str, spans: str) -> bool:
    """Whether the quotes state a figure in a unit the question asks for; True when it names no unit."""
    units = [m.group(1) or "%" for m in _ASKED_UNIT.finditer(question)]
    if not units:
        return True
    if "%" in units and "百分之" in spans:
        return True
    return any(_unit_figure(unit).search(spans) for unit in units)


@functools.cache
def _unit_figure(unit: str) -> re.Pattern[str]:
    # a search, so a decimal needs no pattern of its own: 0.5% contains 5%
    return re.compile(f"(?:{_LEADING_NUMBER.pattern})\\s*(?:{_SAME_UNIT.get(unit, re.escape(unit))})")


@dataclass(frozen=True)
class Signals:
    """What the rule reads; stored in the response's `confidence.inputs.signals` for whoever audits it."""

    overall: float
    asks_figure: bool
    # a quoted span states a figure, in the unit the question asks for when it names one (多少元 → 元)
    figure_quoted: bool
    anchor_quoted: bool
    place_uncovered: bool
    # what the relevance floor (compose.py) read: the best key-term coverage of the candidates quoted from and
    # the best dense similarity; recorded so that the floor and this rule can be replayed together offline
    best_coverage: float = 1.0
    best_dense: float | None = None
    # the question states figures (每五年更换 / 按两倍收购) and no quote states any of them: what the question
    # presumes is not what the quotes say, the mark of a rule that does not exist
    stated_unquoted: bool = False

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["overall"] = round(self.overall, 4)
        data["best_coverage"] = round(self.best_coverage, 4)
        data["best_dense"] = None if self.best_dense is None else round(self.best_dense, 4)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Signals:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class AbstentionRule:
    """Abstain when the answer misses something specific the question asks (at least one reason) and `overall`
    less the reasons' penalties is below `below` (0 turns the rule off).

    A reason is required: low confidence alone is common for lay questions that are answered rightly (their
    words are not the statute's), and withholding those costs more than the caution line already shown.
    The penalties say how much each reason tells (bench/abstention.py `grid`, on the dev, lay dev and
    unanswerable sets): a figure asked and none quoted is rare among answered questions (2 of 185) and common
    among unanswerable ones (9 of 34); a province with no document of its own is often settled by national texts
    (3 dev questions); the specific object missing from the quotes is as common in answered lay questions (20 of
    139) as in unanswerable ones, so it makes the rule apply but costs nothing; stated figures none of which is
    quoted marked 5 of the 11 questions about rules that do not exist and none of the 187 answered ones (one dev
    question states two figures, and the quotes state one of them). A figure counts as quoted only in the unit
    the question names, when it names one: the 8 answered questions that name a unit all get it quoted."""

    below: float = 0.0
    figure_penalty: float = 0.3
    anchor_penalty: float = 0.0
    place_penalty: float = 0.1
    stated_penalty: float = 0.3

    def _found(self, s: Signals) -> list[tuple[str, float]]:
        found = []
        if s.asks_figure and not s.figure_quoted:
            found.append(("问题询问具体数值，但引文中没有相应数值", self.figure_penalty))
        if not s.anchor_quoted:
            found.append(("引文未涉及问题的具体对象", self.anchor_penalty))
        if s.place_uncovered:
            found.append(("库中没有问题所指地区的文件", self.place_penalty))
        if s.stated_unquoted:
            found.append(("问题所述的数值在引文中没有出现", self.stated_penalty))
        return found

    def score(self, s: Signals) -> float:
        return s.overall - sum(penalty for _, penalty in self._found(s))

    def reasons(self, s: Signals) -> list[str]:
        return [reason for reason, _ in self._found(s)]

    def cautions(self, s: Signals) -> list[str]:
        """The reasons that weigh (a penalty above 0), for an answer that is given all the same: a lawyer asking
        whether a rule says 十五天 should read that the quotes say another figure, not infer it."""
        return [reason for reason, penalty in self._found(s) if penalty > 0]

    def abstains(self, s: Signals) -> bool:
        return self.below > 0 and bool(self._found(s)) and self.score(s) < self.below


def signals(
    question: str,
    keywords: Sequence[Keyword],
    answer: Answer,
    candidates: Sequence[Candidate],
    overall: float,
    top_n: int = 5,
) -> Signals:
    """The signals of one answer (a non-abstaining one: it has quotes); `top_n`: the candidates compose quoted
    from."""
    spans = "".join(b.span for b in answer.bullets)
    stated = figure_values(question, STATED_FIGURE)
    heaviest = sorted(keywords, key=lambda k: (-k.weight, -len(k.term)))[:ANCHOR_TERMS]
    named = mentioned_provinces(question)
    near = {c.chunk.meta.province for c in candidates[:top_n]}
    place_uncovered = bool(named) and not (set(named.provinces) & near) and not any(n in spans for n in named.names)
    return Signals(
        overall=overall,
        asks_figure=bool(_ASKS_FIGURE.search(question) or _ASKED_UNIT.search(question)),
        figure_quoted=bool(_FIGURE.search(spans)) and figure_in_asked_unit(question, spans),
        anchor_quoted=not heaviest or any(k.term in spans for k in heaviest),
        place_uncovered=place_uncovered,
        best_coverage=max(compose.candidate_relevance(candidates[:top_n], keywords), default=0.0),
        best_dense=compose.best_dense(candidates),
        stated_unquoted=bool(stated) and not stated & figure_values(spans),
    )
