"""judge: how far to trust the quotes, and whether to show them at all: "no matching provision" beats a quote
that does not answer, for lawyers and permit engineers.

It reads what earlier steps stored (the question's analysis, the candidates' features, the quotes) and computes
nothing from the question's words again. Three rules, first to last:
1. the relevance floor: nothing retrieved is near the question (the best key-term coverage of the candidates
   quoted from and the best dense similarity are both weak, and they do not all come from one document) → no
   quotes;
2. nothing quotable: every span was dropped (not verbatim) or is mostly not Chinese → no quotes;
3. the answer's own confidence (confidence.py), less a penalty for each specific thing the question asks that
   no quote contains:
   - a figure (多少 / 几天 / 比例 / 上限 …) and none of the first three quoted spans (those the order rules read)
     states a number with a unit, or, when the question names the unit (多少元 / 几个月 / 多少分贝), none states
     one in that unit;
   - its most specific terms (the heaviest keywords) and no quoted span contains any of them;
   - a place the corpus does not cover (no candidate document of that province, no quote naming it);
   - figures the question states (是否每五年更换 / 按两倍收购) of which no quoted span states any: the rule the
     question presumes is not the one quoted, which is how a question about a rule that does not exist looks.
     Not a figure in the unit the question asks for (才住三年…保修几年？): that is the asker's case, which no rule
     states (Question.presumed_figures).
   Each penalty is a reason shown with the abstention; when the answer is given all the same, the reasons that
   weigh are shown as cautions. The cut-offs are calibrated on the dev, lay dev and unanswerable question sets
   (bench/abstention.py prints the curve; bench/README.md has the table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, get_origin, get_type_hints

from regrag.domain.results import Candidate
from regrag.query.confidence import Confidence, assess
from regrag.query.fit import DUTY, ENUMERATION, FIGURE, PERMISSION
from regrag.query.order import FIRST_AMONG, acts_named
from regrag.query.question import Question
from regrag.query.quote import Quotes
from regrag.text.figures import figure_in_units, states_figure, states_values
from regrag.text.normalize import to_halfwidth
from regrag.text.periods import stated_periods
from regrag.text.places import PlaceScope
from regrag.text.relations import title_key

BY_FLOOR = "floor"
BY_NO_QUOTES = "no_quotes"
# nothing was retrieved at all: the filters leave no document to search (能源类型 光伏 in a library none of whose
# documents is tagged so), which the reader must be told, or they take "no matching provision" for the law's
BY_NOTHING = "nothing"
BY_CONFIDENCE = "confidence"

# the reason given when the question names a place none of the candidates quoted from is of (the abstention
# rule's, and the relevance floor's when it refuses)
PLACE_UNCOVERED = "排在前列的条文中没有问题所指地区的规定"


@dataclass(frozen=True)
class RelevanceFloor:
    """When to say "no matching provision" instead of quoting the best of a bad lot.

    Abstain when the best of the top candidates is weak on both signals: keyword coverage below `coverage`
    and dense similarity below `dense`. When no dense score is known (a /compose call with bare ids), coverage
    below `coverage_alone` decides. Calibrated with the abstention rule on the dev, lay dev and unanswerable sets
    for the local e5 model (bench/abstention.py, bench/README.md); a different embedding model has another cosine
    scale, so `dense` must be set for it (REGRAG_DENSE_FLOOR).

    Not when every candidate quoted from comes from one document (`focused`): retrieval agrees on the act the
    question is about, in words that are not the act's (书籍的责任编辑是作者吗 lands on 著作权法 five times; 新建住宅楼
    …太阳能 on one city's 实施办法). On the dev, lay dev and unanswerable sets that un-refused 4 answerable questions
    (2 with a gold article first) and no unanswerable one; 4 of 5 candidates from one document would also have
    answered 2 unanswerable ones (bench/README.md).
    """

    coverage: float = 0.55
    dense: float | None = 0.89
    coverage_alone: float = 0.25

    def weak(self, best_coverage: float, best_dense: float | None, focused: bool = False) -> bool:
        if focused:
            return False
        if best_dense is None or self.dense is None:
            return best_coverage < self.coverage_alone
        return best_coverage < self.coverage and best_dense < self.dense


@dataclass(frozen=True)
class Signals:
    """What the abstention rule reads; stored in the response's `confidence.inputs.signals` for whoever audits
    it (and replayed offline by bench/abstention.py)."""

    overall: float
    asks_figure: bool
    # one of the first FIRST_AMONG quotes states a figure, in the unit the question asks for when it names one
    # (多少元 → 元)
    figure_quoted: bool
    anchor_quoted: bool
    place_uncovered: bool
    # what the relevance floor read: the best key-term coverage of the candidates quoted from and the best dense
    # similarity; recorded so that the floor and this rule can be replayed together offline
    best_coverage: float = 1.0
    best_dense: float | None = None
    # the question states figures (每五年更换 / 按两倍收购) and no quote states any of them: what the question
    # presumes is not what the quotes say, the mark of a rule that does not exist
    stated_unquoted: bool = False
    # every candidate quoted from comes from one document and shares a key term of the question (`focused`: what
    # lets the floor pass)
    focused: bool = False
    # the question asks for a place's own rule (四川省…补偿标准, 海南省供用电条例对…) and nothing quoted from comes from
    # that place or names it: whatever the quotes say, they are not that rule
    rule_place_uncovered: bool = False
    # the names the question puts in quotation marks (办“光伏并网许可证”) that no article quoted contains: the name
    # the asker takes the law to use is not the law's, the mark of a licence or filing that does not exist
    unquoted_names: tuple[str, ...] = ()
    # how often the question says a duty recurs (每年要年检, 每季度报送: text/periods.py), as written, where no quote
    # states that period: the rule that sets a recurring duty says how often, so the one presumed is not quoted
    unquoted_periods: tuple[str, ...] = ()
    # the licences the question names (要先办垂钓许可证) that no article quoted names: a licence the law does not
    # know, as a quoted name the law does not use
    unquoted_licences: tuple[str, ...] = ()
    # the acts the question names (《安全生产法》要求…) that retrieval found, none of whose articles is quoted: the act
    # named holds nothing on what is asked, the mark of a duty it does not set
    unquoted_acts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["overall"] = round(self.overall, 4)
        data["best_coverage"] = round(self.best_coverage, 4)
        data["best_dense"] = None if self.best_dense is None else round(self.best_dense, 4)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Signals:
        # JSON gives back a list for each tuple field: the fields typed as tuples, found from their annotations
        # so that a new one needs no line here
        hints = get_type_hints(cls)
        found: dict[str, Any] = {
            name: tuple(data[name]) if get_origin(hints[name]) is tuple else data[name]
            for name in cls.__dataclass_fields__
            if name in data
        }
        return cls(**found)


@dataclass(frozen=True)
class AbstentionRule:
    """Abstain when the answer misses something specific the question asks (at least one reason) and `overall` less the
    reasons' penalties is below `below` (0 turns the rule off).

    A reason is required: low confidence alone is common for lay questions that are answered rightly (their words are
    not the statute's), and withholding those costs more than the caution line already shown. The penalties say how much
    each reason tells (bench/abstention.py `grid`, on the dev, lay dev and unanswerable sets): a figure asked and none
    quoted is rare among answered questions (2 of 185) and common among unanswerable ones (9 of 34), and it withholds an
    answer up to an `overall` of 0.9 (0.8: at stop 43's 0.6, five unanswerable questions of ten sets, two of them blind,
    were answered at medium confidence, their quotes on the topic without its figure; the one answerable question it had
    cost, 最少要去几个人 answered by 不得少于两人, keeps its answer now that a Chinese numeral counts in 人;
    bench/README.md stop 46); a province with no document of its own is often settled by national texts (3 dev
    questions); the specific object missing from the quotes is as common in answered lay questions (20 of 139) as in
    unanswerable ones, so it makes the rule apply but costs nothing; stated figures none of which is quoted marked 5 of
    the 11 questions about rules that do not exist and none of the 187 answered ones (one dev question states two
    figures, and the quotes state one of them). A figure counts as quoted only in the unit the question names, when it
    names one: the 8 answered questions that name a unit all get it quoted. A question asking a place's own rule (its
    标准, 补贴, 条例 …: text/places.py `rule_authors`) when nothing quoted from is of that place decides alone: a
    national article is not that place's rule however well it matches (5 unanswerable questions answered, 2 at high
    confidence; none of the answerable ones asks so: bench/README.md). A name the question puts in quotation marks
    (办“光伏并网许可证”: five characters or more, `query/question.py` `_NAMED`) that none of the articles quoted
    contains decides alone too: the licence or filing the asker takes the law to name is not the law's. On every set it
    refused 7 unanswerable questions (4 of them blind) and no answerable one (bench/README.md stop 46). So does a
    period the question says a duty recurs in (每年要年检, 每季度报送: text/periods.py) that no quote states: the
    rule that sets a recurring duty says how often. It refused 9 unanswerable questions of every set (2 of them
    blind) and no answerable one (bench/README.md stop 47). A licence the question names (要先办垂钓许可证:
    text/licences.py) that none of the articles quoted names weighs as a quoted name does: 6 unanswerable questions
    refused (3 blind), no answerable one. So does an act the question names that retrieval found when nothing
    quoted is from it (《安全生产法》要求…每季度…: 3 unanswerable questions, 1 blind, no answerable one). A figure
    the question states that no quote states (nor admits in a range or bound it states) decides alone when the
    question asks for a figure as well: the figures quoted are for other cases than the one asked about."""

    below: float
    figure_penalty: float = 0.8
    anchor_penalty: float = 0.0
    place_penalty: float = 0.1
    stated_penalty: float = 0.3
    # the same when the question asks for a figure too (1000千伏…导线边线向外延伸多少米): the figures quoted answer
    # for other cases (500千伏 20米), not the one stated, so none of them is the answer
    stated_asked_penalty: float = 1.0
    rule_place_penalty: float = 1.0
    named_penalty: float = 1.0
    period_penalty: float = 1.0

    def _found(self, s: Signals) -> list[tuple[str, float]]:
        found = []
        if s.asks_figure and not s.figure_quoted:
            found.append(("问题询问具体数值，但引文中没有相应数值", self.figure_penalty))
        if not s.anchor_quoted:
            found.append(("引文未涉及问题的具体对象", self.anchor_penalty))
        if s.place_uncovered and not s.rule_place_uncovered:  # the sharper reason below says it
            found.append((PLACE_UNCOVERED, self.place_penalty))
        if s.stated_unquoted:
            penalty = self.stated_asked_penalty if s.asks_figure else self.stated_penalty
            found.append(("问题所述的数值在引文中没有出现", penalty))
        # what the question names and the quotes do not: each reason names them, marked as the question marks them
        for listed, mark, reason, penalty in (
            (s.unquoted_names, "“{}”", "问题中加引号的名称{}在检索到的条文中没有出现", self.named_penalty),
            (s.unquoted_licences, "“{}”", "问题所说的{}在检索到的条文中没有出现", self.named_penalty),
            (s.unquoted_acts, "《{}》", "问题所说的{}中没有可引用的条文", self.named_penalty),
            (s.unquoted_periods, "“{}”", "问题所说的周期{}在引文中没有出现", self.period_penalty),
        ):
            if listed:
                found.append((reason.format("、".join(mark.format(name) for name in listed)), penalty))
        if s.rule_place_uncovered:
            found.append(("排在前列的条文中没有问题所问地区本地的规定", self.rule_place_penalty))
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


@dataclass(frozen=True)
class JudgeConfig:
    floor: RelevanceFloor
    rule: AbstentionRule
    top_n: int  # the candidates quoted from (the floor and the place check read these)


@dataclass(frozen=True)
class Verdict:
    """What judge decided: whether to abstain (and by which rule), the confidence, the reasons of an abstention
    and the cautions of an answer given all the same."""

    confidence: Confidence
    abstained_by: str | None = None  # nothing | floor | no_quotes | confidence; None: the quotes are shown
    reasons: tuple[str, ...] = ()
    cautions: tuple[str, ...] = field(default_factory=tuple)

    @property
    def abstained(self) -> bool:
        return self.abstained_by is not None

    @property
    def low(self) -> bool:
        return self.confidence.level == "low"


def best_dense(candidates: Sequence[Candidate]) -> float | None:
    """The highest dense similarity among the candidates (None when no dense score is known)."""
    dense = [c.dense_score for c in candidates if c.dense_score is not None]
    return max(dense) if dense else None


def best_coverage(candidates: Sequence[Candidate]) -> float:
    return max((c.features.coverage for c in candidates), default=0.0)


def focused(q: Question, ranked: Sequence[Candidate], top_n: int) -> bool:
    """Every one of the `top_n` candidates quoted from comes from one document and shares some of the question's
    key terms, in a search that could reach others (one filtered to named documents always agrees with itself and
    says nothing). The shared terms keep a vector's drift out: in a small corpus a question on a topic it lacks
    (建风电场要做环评吗, the sample) can land on five articles of one act that share none of its words but the
    first. A corpus of one document is not told apart from a focused search. A place the question names is not a
    shared term: it picks that place's one act (明天上海会下雨吗 → 上海市供用电条例 five times on the sample) whatever
    is asked."""
    top = ranked[:top_n]
    return (
        not q.filters.doc_id
        and len(top) == top_n
        and len({c.chunk.doc_id for c in top}) == 1
        and all(c.features.coverage > 0 and q.shares_beyond_places(c.chunk.text + c.chunk.breadcrumb) for c in top)
    )


def below_floor(q: Question, ranked: Sequence[Candidate], config: JudgeConfig) -> bool:
    """The relevance floor: nothing among the candidates quoted from is near the question."""
    top = ranked[: config.top_n]
    return not top or config.floor.weak(best_coverage(top), best_dense(ranked), focused(q, ranked, config.top_n))


def signals(q: Question, quotes: Quotes, ranked: Sequence[Candidate], overall: float, top_n: int) -> Signals:
    """The signals of one answer with quotes; `top_n`: the candidates quoted from."""
    spans = quotes.text
    # a figure counts where the order rules look for one (order.py rule 1): a figure only further down is in an
    # article the ranking put below three that hold none, not the answer (山东…多大装机容量要报省发改委核准 was
    # answered, the only figure a later quote's)
    read_first = "".join(b.span for b in quotes.bullets[:FIRST_AMONG])
    near = {c.chunk.meta.province for c in ranked[:top_n]}
    named = q.places
    place_uncovered = _uncovered(named, near, spans)
    anchors = q.anchors
    return Signals(
        overall=overall,
        asks_figure=q.asks_figure,
        figure_quoted=states_figure(read_first) and figure_in_units(q.units, read_first),
        anchor_quoted=not anchors or any(k.found_in(spans) for k in anchors),
        place_uncovered=place_uncovered,
        best_coverage=best_coverage(ranked[:top_n]),
        best_dense=best_dense(ranked),
        stated_unquoted=bool(q.presumed_figures) and not states_values(q.presumed_figures, spans),
        focused=focused(q, ranked, top_n),
        rule_place_uncovered=_uncovered(q.rule_places, near, spans),
        unquoted_names=_unread(q.named_terms, quotes, ranked),
        unquoted_licences=_unread(q.licences, quotes, ranked),
        unquoted_acts=_unquoted_acts(q, quotes, ranked),
        unquoted_periods=_unquoted_periods(q, spans),
    )


def _unquoted_periods(q: Question, spans: str) -> tuple[str, ...]:
    """The periods the question states (每年, 每季度) when the quotes state none of them; none when they state one
    (每公顷每年: the quote's 每年 is the period that matters, not the area's)."""
    if not q.periods or {period for _, period in q.periods} & set(stated_periods(spans).values()):
        return ()
    return tuple(written for written, _ in q.periods)


def _unquoted_acts(q: Question, quotes: Quotes, ranked: Sequence[Candidate]) -> tuple[str, ...]:
    """The acts the question names among those of the candidates (order.py `acts_named`: 安全生产法, not 能源法
    inside 可再生能源法) when no quote is from one of them or from a version whose title holds the name (噪声污染防治法
    as of 2021 is 环境噪声污染防治法). Only acts retrieval found: of an act it did not, the library may hold nothing."""
    named = acts_named(q.text, [c.chunk.meta.title for c in ranked])
    quoted = {title_key(b.citation.title) for b in quotes.bullets}
    if not named or any(act in title for act in named for title in quoted):
        return ()
    return tuple(sorted(named))


def _unread(names: tuple[str, ...], quotes: Quotes, ranked: Sequence[Candidate]) -> tuple[str, ...]:
    """The `names` of the question (those it puts in quotation marks, the licences it names) that none of the
    articles quoted contains, their titles included (“电力供应与使用条例” names the act; a 款 not shown still uses
    the article's words)."""
    if not names:
        return ()
    quoted = {b.chunk_id for b in quotes.bullets}
    read = to_halfwidth(
        "".join(b.citation.title for b in quotes.bullets)
        + "".join(c.chunk.text for c in ranked if c.chunk.id in quoted)
        + quotes.text
    )
    return tuple(term for term in names if to_halfwidth(term) not in read)


def _uncovered(named: PlaceScope, near: set[str], spans: str) -> bool:
    """The question names places (`named`) and none of the candidates quoted from is of their provinces, nor does
    a quote name them."""
    return bool(named) and not (set(named.provinces) & near) and not any(n in spans for n in named.names)


_LOWER = {"high": "medium", "medium": "low", "low": "low"}


def _level(level: str, first: dict[str, Any], seen: Signals) -> str:
    """The confidence level the reader sees, one lower when the question asks for something specific (a figure,
    a penalty, an authority …) and the first quote holds none of it: on the dev, lay dev and quotes dev sets such
    first quotes answer 26 % of the time, those that hold it 58 % (bench/README.md, the calibration table). A list,
    a permission or a duty asked is not such a thing: 下列 / 可以 / 不得 / 应当 are in most articles, holding them says
    little.

    Low when no quote states a figure the question states (the caution says so): the question presumes another
    rule than the one quoted, or describes a case the quotes do not reach; of such answers on every set, 2 of 4
    answerable questions' first quotes held the answer, and 15 were answers to unanswerable questions, 11 of them
    at high confidence (bench/README.md, stop 45)."""
    if seen.stated_unquoted:
        return "low"
    asks = set(first["asks"]) - {ENUMERATION, PERMISSION, DUTY}
    return _LOWER[level] if asks and not asks & set(first["asked"]) else level


def _first(q: Question, quotes: Quotes, ranked: Sequence[Candidate]) -> dict[str, Any]:
    """What the first quote is: its fit to the question, the things asked it holds, the key terms it covers and
    where its candidate ranked."""
    bullet = quotes.bullets[0]
    fit = quotes.fits[0] if quotes.fits else None
    rank = next((i for i, c in enumerate(ranked, 1) if c.chunk.id == bullet.chunk_id), None)
    asks = ([FIGURE] if q.asks_figure else []) + [f.name for f in q.forms]
    return {
        "fit": None if fit is None else round(fit.coverage, 4),
        "asked": [] if fit is None else list(fit.asked),
        "asks": asks,
        "coverage": round(q.coverage(bullet.span), 4),
        "rank": rank,
    }


def floor_verdict(q: Question, ranked: Sequence[Candidate], config: JudgeConfig) -> Verdict | None:
    """The relevance floor's refusal (None: the candidates are near enough to quote from). A place the question
    names and no candidate quoted from is of is its reason: the library may hold nothing of that place, which
    tells more than the few words shared (江苏省对…有什么专门规定 was told to reword it)."""
    if not below_floor(q, ranked, config):
        return None
    near = {c.chunk.meta.province for c in ranked[: config.top_n]}
    return Verdict(Confidence.abstained(), BY_FLOOR, (PLACE_UNCOVERED,) if _uncovered(q.places, near, "") else ())


def unquoted_verdict(q: Question, ranked: Sequence[Candidate], config: JudgeConfig) -> Verdict:
    """The refusal when nothing could be quoted. When no candidate quoted from applies where the question is
    about (another province's rules: query/score.py `applies`, which quote.py does not quote), that is the reason."""
    elsewhere = bool(q.places) and not any(c.features.applies for c in ranked[: config.top_n])
    return Verdict(Confidence.abstained(), BY_NO_QUOTES, (PLACE_UNCOVERED,) if elsewhere else ())


def judge(q: Question, ranked: Sequence[Candidate], quotes: Quotes, rerank_status: str, config: JudgeConfig) -> Verdict:
    """The verdict on one answer: the floor, then quotes at all, then confidence less the reasons' penalties."""
    if not ranked:
        return Verdict(Confidence.abstained(), BY_NOTHING)
    refused = floor_verdict(q, ranked, config)
    if refused is not None:
        return refused
    if not quotes.bullets:
        return unquoted_verdict(q, ranked, config)
    confidence = assess(
        ranked,
        q.coverage(" ".join(b.span for b in quotes.bullets)),
        rerank_status=rerank_status,
        dense_floor=config.floor.dense,
    )
    seen = signals(q, quotes, ranked, confidence.overall, config.top_n)
    reasons = config.rule.reasons(seen)
    inputs = {
        **confidence.inputs,
        "signals": seen.to_dict(),
        "reasons": reasons,
        "first_quote": _first(q, quotes, ranked),
    }
    confidence = replace(confidence, level=_level(confidence.level, inputs["first_quote"], seen), inputs=inputs)
    if config.rule.abstains(seen):
        # the quotes found do not answer: say so, with why; the candidates stay in the response as evidence
        inputs = {**confidence.inputs, "abstained_by": BY_CONFIDENCE}
        return Verdict(replace(confidence, level="low", inputs=inputs), BY_CONFIDENCE, tuple(reasons))
    return Verdict(confidence, None, tuple(reasons), tuple(config.rule.cautions(seen)))
