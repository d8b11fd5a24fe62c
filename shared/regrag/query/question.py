"""analyse: a question read once, into the `Question` every later step of the read path reads.

Whatever the steps need from the question's words is taken here and nowhere else: its key terms (what coverage
and span choice weigh), its lexical search terms, the places it names, the day it asks about, the kind of
provision it asks for (question forms) and the figures it asks for or states. No later step tokenises it again.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from regrag.domain.models import DocumentMeta, Filters
from regrag.query.forms import PENALTY, Form, asked_forms
from regrag.query.temporal import AsOf, resolve_as_of
from regrag.text.figures import Quantity, asked_units, asks_figure, case_figures, case_units, stated_quantities
from regrag.text.lay_terms import lay_words_in, statute_words
from regrag.text.licences import licences_named
from regrag.text.people import people_words
from regrag.text.periods import Period, stated_periods
from regrag.text.places import PlaceScope, mentioned_provinces, rule_authors
from regrag.text.segment import CJK_CHAR_RE, CLAUSE_RE, STOPWORDS, chinese_share, index_terms, load_terms, tokenize
from regrag.text.sentences import split_sentences

# a question whose letters are fewer Chinese characters than this share is not in Chinese: an English question
# naming one act ("What does 电力法 say about outages?") is 12 %, a Chinese one with an acronym (10kV线路的EIA要求是
# 什么？) 62 %
MIN_CHINESE_SHARE = 0.3
# markup pasted with a question (a tag, a script or style element with its code) is not the language it is asked
# in: a Chinese question after <script>alert(…)</script> was told to ask in Chinese
_MARKUP = re.compile(
    r"<(script|style)\b[^<>]{0,200}>.{0,2000}?</\1\s*>|</?[A-Za-z][^<>]{0,200}>", re.IGNORECASE | re.DOTALL
)


def in_chinese(text: str) -> bool:
    """Whether `text` is written in Chinese (MIN_CHINESE_SHARE of its letters, markup tags left out; digits and
    punctuation belong to no language): what analyse records and what decides whether a question is put into
    Chinese first (query/translate.py)."""
    return chinese_share("".join(c for c in _MARKUP.sub(" ", text) if c.isalpha())) >= MIN_CHINESE_SHARE


ANCHOR_TERMS = 2  # the heaviest keywords that make a question specific (what judge checks the quotes hold)


@dataclass(frozen=True)
class Keyword:
    term: str
    weight: float
    # the statutes' words for it when the term is an everyday word or an abbreviation (偷电 → 窃电, 盗窃电能:
    # text/lay_terms.py)
    statute: tuple[str, ...] = ()

    def found_in(self, text: str) -> bool:
        """Whether `text` holds the term, as the question writes it or in a statute's word for it."""
        return self.term in text or any(w in text for w in self.statute)


@dataclass(frozen=True)
class Part:
    """One asking sentence (`clause`) of a question that asks several things: its key terms (those of the question's
    keywords it holds), the kinds of provision it asks for, the figure it asks (in the units it names) and those it
    states."""

    clause: str
    keywords: tuple[Keyword, ...]
    forms: tuple[Form, ...] = ()
    asks_figure: bool = False
    units: tuple[str, ...] = ()
    stated_figures: frozenset[Quantity] = frozenset()


@dataclass(frozen=True)
class Question:
    """One question as every step reads it.

    Attributes:
        text: the question as asked (stripped).
        filters: the request's filters with the as-of day resolved (`as_of`): what the index is searched with.
        as_of: the day the answer is about and why (a filter, a date the question names, or today).
        keywords: content words and dictionary terms, weighted (longer and dictionary terms weigh more).
        terms: the lexical search terms (jieba words + single characters: the index's own tokenisation).
        places: the provinces and place names the question names (whatever the filters say).
        rule_places: those of them whose own rule it asks for (四川省…补偿标准; not 在江苏建…: text/places.py).
        forms: the kinds of provision its wording asks for (penalty, procedure, definition …).
        asks_figure: it asks for a number (多少 / 几天 / 比例 …); `units`: the units it names for it (多少元 → 元).
            Both read from the clause of each asking sentence that asks (`_asking_clause_of`).
        stated_figures: the figures it states itself, each a value with its unit's symbols (是否每五年更换 → 5 a;
            a count of days also in hours: 停暖一天以上 → 1 d and 24 h).
        presumed_figures: those of them not in a unit it asks for: what it presumes a rule says (是否每五年更换).
            One in the unit asked is the asker's own case to set against the answer (外墙保温层才住三年就开裂…保修
            几年？), which no rule need state.
        focus: the key terms of the clause that asks (最长可以缓多少天 → 最长, 缓): what the answer must hold.
        parts: when it asks two things or more (多少天内给结论？拖了五年多才开工，批复还能用吗？), each asking sentence
            read alone: what the quote must also show (query/quote.py). Empty for a question that asks one thing.
        chinese: it is written in Chinese (at least MIN_CHINESE_SHARE of its characters): the corpus is Chinese
            text and the lexical leg reads Chinese words, so another language gets a note asking for Chinese.
        case_units: the units of every figure it states, calendar dates aside (征收…耕地40公顷 → 公顷's symbol): the
            units its case is told in, whatever it asks (query/order.py rule 7).
        case_figures: those figures, each a value with its unit's symbols (从业人员120人 → 120 人): what a rule's
            threshold (超过一百人的) admits for the asker's case (query/fit.py).
        named_terms: the names it puts in quotation marks (办“光伏安装许可证”; not a short term, “三同时”: `_NAMED`):
            names the asker takes the law to use, which a quote answering it uses too.
        licences: the licences it names (要先办垂钓许可证 → 垂钓许可证: text/licences.py), which an article on that
            licence names too.
        periods: how often it says something recurs (排污许可证每年要年检 → 每年: text/periods.py), as written, with
            the period's value: a duty presumed to recur that often, which the rule setting it states too.
    """

    text: str
    filters: Filters
    as_of: AsOf
    keywords: tuple[Keyword, ...] = ()
    terms: tuple[str, ...] = ()
    places: PlaceScope = field(default_factory=PlaceScope)
    rule_places: PlaceScope = field(default_factory=PlaceScope)
    forms: tuple[Form, ...] = ()
    asks_figure: bool = False
    units: tuple[str, ...] = ()
    stated_figures: frozenset[Quantity] = frozenset()
    presumed_figures: frozenset[Quantity] = frozenset()
    chinese: bool = True
    focus: frozenset[str] = frozenset()
    parts: tuple[Part, ...] = ()
    case_units: frozenset[str] = frozenset()
    case_figures: frozenset[Quantity] = frozenset()
    named_terms: tuple[str, ...] = ()
    licences: tuple[str, ...] = ()
    periods: tuple[tuple[str, Period], ...] = ()

    def coverage(self, text: str) -> float:
        """Share of the keyword weight found in `text` (0–1)."""
        return coverage(text, self.keywords)

    def shares_beyond_places(self, text: str) -> bool:
        """`text` holds a key term that is not (inside) a place the question names: 上海 alone in 上海市供用电条例
        says where a rule applies, not that it is on what is asked (明天上海会下雨吗)."""
        names = self.places.names
        return any(k.found_in(text) for k in self.keywords if not any(k.term in name for name in names))

    def asking(self, part: Part) -> Question:
        """The question as one of its parts asks it: that sentence's key terms (all of them its focus), its forms
        and the figure it asks; what picks the unit that answers that part."""
        return replace(
            self,
            keywords=part.keywords,
            focus=frozenset(k.term for k in part.keywords),
            forms=part.forms,
            asks_figure=part.asks_figure,
            units=part.units,
            stated_figures=part.stated_figures,
            parts=(),
        )

    @property
    def anchors(self) -> tuple[Keyword, ...]:
        """The heaviest keywords: the question's most specific object."""
        return tuple(sorted(self.keywords, key=lambda k: (-k.weight, -len(k.term)))[:ANCHOR_TERMS])


def analyse(
    text: str,
    filters: Filters,
    documents: Callable[[], Sequence[DocumentMeta]] | None = None,
    today: dt.date | None = None,
) -> Question:
    """The question read once. `documents` is listed only when the question says 修订前 / 旧版 (temporal.py)."""
    text = text.strip()
    today = today or dt.date.today()
    forms = _asked_forms(text)
    filters, as_of = resolve_as_of(text, filters, documents, today, penalty_asked=PENALTY in {f.name for f in forms})
    words = tokenize(text)  # the one tokenisation of the question
    keywords = tuple(_keywords(text, words))
    asking = "，".join(_asking_clause_of(s) for s in _asking_sentences(text))
    units = asked_units(asking)
    return Question(
        text=text,
        filters=in_force_by_default(filters, today),
        as_of=as_of,
        keywords=keywords,
        terms=tuple(index_terms(text, words)),
        places=mentioned_provinces(text),
        rule_places=rule_authors(text),
        forms=forms,
        asks_figure=asks_figure(asking),
        units=units,
        stated_figures=frozenset(stated_quantities(text)),
        presumed_figures=frozenset(stated_quantities(text, besides=units)),
        chinese=in_chinese(text),
        focus=frozenset(k.term for k in keywords if k.term in asking_clause(text)),
        parts=_parts(text, keywords),
        case_units=case_units(text),
        case_figures=case_figures(text),
        named_terms=tuple(_NAMED.findall(text)),
        licences=licences_named(text),
        periods=tuple(stated_periods(text).items()),
    )


# a name in quotation marks, Chinese or ASCII ones (“…” 「…」 "…"), of NAMED_MIN_CHARS up to the length of a name
# (并网安全性评价备案 is 9). A shorter quoted term is as often shorthand, a slogan or slang that the law spells out in
# other words (“三同时”: 同时设计、同时施工、同时投产使用; “以租代征”, “热词”), where a long one names a licence, a
# filing or a certificate the law would name as such if it had one (“光伏安装许可证”, “环评公示备案证”). With two
# characters the check refused 2 lay-dev answers and 建设项目“三同时”是什么要求, whose answer was the second quote; with
# five it refuses the same unanswerable questions of the blind sets (bench/README.md stop 46)
NAMED_MIN_CHARS = 5
_NAMED = re.compile(rf"[“「\"]([^”」\"，。？！]{{{NAMED_MIN_CHARS},12}})[”」\"]")


# the words that make a clause a question (多少 / 几 / 什么 / 哪 / 谁 / 吗 / 怎么 / 是否 …): standard Chinese
# interrogatives (现代汉语词典's 疑问代词 and the A-not-A forms)
_ASKING = re.compile(
    r"多少|几|什么|哪|谁|吗|么|怎|如何|是否|能否|可否|能不能|可不可以|要不要|有没有|是不是|多久|多长|多大|多高|多远"
)


# what ends a sentence that asks
_QUESTION_MARKS = ("？", "?")


def _asking_sentences(text: str) -> list[str]:
    """The sentences of a question that ask: those ending in a question mark, when any does. Another sentence
    states the asker's case, and an interrogative there is an indefinite word (现代汉语词典 几 ②: 表示大于一而
    小于十的不定的数目; 多少 ②: 表示不定的数量): 我欠了几个月物业费。…他们能这么干吗？ asks whether they may, not
    how many months. A question with no question mark (keyword style, 临时检修 停电 提前多少小时) is read whole."""
    sentences = split_sentences(text)
    asking = [s for s in sentences if s.endswith(_QUESTION_MARKS)]
    return asking or sentences or [text]


def _asking_text(text: str) -> str:
    return "".join(_asking_sentences(text))


def _asking_clause_of(sentence: str) -> str:
    """The clause of one asking sentence that asks: its last with an interrogative (the sentence whole when none
    has). What a figure is asked in: the clauses before it state the asker's case as often with a comma as with
    a full stop (我欠了几个月物业费，物业说再不交就停水停电，他们有这个权力吗？ asks whether they may, and its 几个月 is
    the indefinite 几 of `_asking_sentences`), while the clause that asks names the figure and its unit
    (临时检修要停电，至少提前多少小时通知？)."""
    clauses = _interrogative_clauses(sentence)
    return clauses[-1] if clauses else sentence


def _interrogative_clauses(text: str) -> list[str]:
    """The clauses of `text` with an interrogative, in order."""
    return [c for c in CLAUSE_RE.findall(text) if _ASKING.search(c)]


def _asking_clauses(text: str) -> list[str]:
    """The clauses of a question's asking sentences with an interrogative, in order."""
    return _interrogative_clauses(_asking_text(text))


def asking_clause(text: str) -> str:
    """The clause of a question that asks (the last one with an interrogative; the whole text when none has)."""
    asking = _asking_clauses(text)
    return asking[-1] if asking else text


def _asked_forms(text: str) -> tuple[Form, ...]:
    """The kinds of provision the question asks for, read from its clauses that ask (those with an interrogative)
    when they name any: 未报批环评报告书就擅自开工建设，罚款幅度是多少 asks for the fine, and its 报批 tells the act
    fined, not that a procedure is asked (which put the 款 on a 登记表's 备案 first). The asking sentences whole
    when their clauses name none (风电项目开工前的审批手续，具体是什么: the clause that asks says only 什么); never a
    sentence that states the case (我欠了几个月物业费。…他们能这么干吗？ asks no time limit)."""
    return asked_forms("，".join(_asking_clauses(text))) or asked_forms(_asking_text(text))


def _parts(text: str, keywords: Sequence[Keyword]) -> tuple[Part, ...]:
    """The question's asking sentences as parts, when there are two or more with key terms of their own: a second
    that only repeats the first's terms (行政许可证可以转让吗？行政许可可以转让吗？) asks nothing new. A sentence, not
    a clause: 批复超过五年才开工建设，还能直接用吗 asks about the 批复 its first clause names."""
    parts: list[Part] = []
    for clause in (s for s in _asking_sentences(text) if _ASKING.search(s)):
        own = tuple(k for k in keywords if k.term in clause)
        if own and not any({k.term for k in own} <= {k.term for k in p.keywords} for p in parts):
            figures = frozenset(stated_quantities(clause))
            asking = _asking_clause_of(clause)
            parts.append(Part(clause, own, asked_forms(clause), asks_figure(asking), asked_units(asking), figures))
    return tuple(parts) if len(parts) > 1 else ()


def in_force_by_default(filters: Filters, today: dt.date | None = None) -> Filters:
    """Default `as_of` to today: only versions in force are retrieved unless the request says otherwise."""
    if filters.as_of or filters.include_superseded:
        return filters
    return replace(filters, as_of=(today or dt.date.today()).isoformat())


def _keywords(text: str, words: Sequence[str]) -> list[Keyword]:
    """Content words of the question: jieba search-mode tokens (words and their sub-words, stopwords out)
    plus the dictionary terms inside it. Longer words weigh more (环境影响评价 says more than 企业); sub-words
    let a lay word still meet the statute's word (光伏板 → 光伏, 住宅楼 → 住宅). Single characters are dropped.
    An everyday word or abbreviation of data/lay_terms.tsv is a key term too (供电公司, which jieba splits), carrying
    the statute's words it is found in (供电企业). An everyday word for a person of the asker's story (邻居, 老板:
    data/people_words.tsv) is not: no article holds it, so it would count against every one.
    """
    terms = {t for t, _ in load_terms() if t in text}
    statute = statute_words()
    people = people_words()
    seen: dict[str, float] = {}
    for w in [*words, *terms, *lay_words_in(text)]:
        if len(w) < 2 or w in STOPWORDS or w in people or (not CJK_CHAR_RE.search(w) and not w.isalnum()):
            continue
        seen[w] = max(seen.get(w, 0.0), min(len(w), 4) * (1.5 if w in terms else 1.0))
    return [Keyword(t, w, statute.get(t, ())) for t, w in seen.items()]


def question_keywords(text: str) -> list[Keyword]:
    """The keywords of a text read as a question (for callers that hold no `Question`: bench scripts, tests)."""
    return _keywords(text, tokenize(text))


def coverage(text: str, keywords: Sequence[Keyword]) -> float:
    """Share of the keyword weight found in `text` (0–1)."""
    total = sum(k.weight for k in keywords)
    if total == 0:
        return 0.0
    return sum(k.weight for k in keywords if k.found_in(text)) / total
