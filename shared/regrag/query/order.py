"""order: which quote is read first.

The quotes follow their candidates' ranking, which weighs how much of the question an article shares, not
whether it holds the thing asked. Three readings of the question change who goes first, among the first
`FIRST_AMONG` quotes only (further down, the ranking knows better than these coarse signals), each applied to the
order the one before it left:

1. it asks for a kind of provision that names a specific thing (a penalty for 怎么处罚, an authority for 由谁批准,
   a time limit for 多久 / 最晚, liability for 谁赔, a way to complain for 哪里投诉) or for a figure (多少天 /
   百分之几, in the unit asked when it names one), and a later quote holds more of these than the first (all the
   first holds, and one more): the later one goes first. Asked 会坐牢吗？一般判几年？, a fine (罚款) holds the
   penalty but not the years, which 刑法's article holds as well. The duty article (不得向建设单位收取费用) shares
   the question's words; the penalty article (责令退还所收费用，处…罚款) answers it. A penalty counts as held on
   rule 3's reading: an article disciplining officials does not hold the penalty asked by a question naming no
   public body (on the sample, 环评未批先建怎么处罚 put a city's article on its own staff's 处分 first). Procedure,
   definition and list questions are left out: their wording (申请 / 批准 / 所称 / 下列) is in most articles of a
   procedure or definition chapter and picks nothing.
2. it is set in a province (a province filter, or a province it names) and the first quote is a national rule
   while a later one is that province's own and holds at least what the first holds of the things asked: the
   province's rule goes first. The local rule implements the national one for that place (广东省土地管理条例 names
   the level of government the national 土地管理法 leaves to the provinces), and it is what applies there. The
   other way round, a question set nowhere whose first quote is one province's rule reads a national one first
   when a later one holds as much: it applies wherever the asker is.
3. it asks for a penalty, names no public body (a 部门, 人民政府, 机关, 机构, 委员会 or 国务院 …: the words an
   authority is named by, query/forms.py), and the first quote penalises one (地方各级人民政府…有关部门违反本法
   规定，不履行法定职责的) while a later one penalises someone else: the later one goes first. A company asking
   what it faces is answered by the article on 有关单位, not the one on the officials who should have stopped it.
   A body the act clause names as its object (不服从有关人民政府的统一指挥) is not who acted (`_penalises`).
4. it names an act (按能源法…: the title without 中华人民共和国, not inside a longer title it names) and the first
   quote is from another act while a later one is from that act: the later one goes first, one that holds what
   is asked if there is one. The user said which law; 矿产资源法's twin of 能源法 第七十三条 is not it.
5. it asks for a penalty and a later quote's act clause (its first clause: what was done) shares a run of the
   question's own words twice as long as the first quote's does (`_same_act`): 无生产配额许可证生产消耗臭氧层物质罚多少
   is asked of 第三十一条 (无生产配额许可证生产…的), not of the 第三十二条 ranked before it (无使用配额许可证使用…的).
6. it asks neither for a penalty nor for liability, the first quote punishes (罚款, 吊销 … in what it shows), and a
   later one does not, holds at least what the first holds of the things asked and shows at least as much of the
   question's key terms (in its quote or its whole article): the later one goes first. A penalty article restates
   the act it punishes (技术服务机构…年度排放报告编制和技术审核业务), so it shares the question's words; the rule
   asked about (能不能既编制又审核 → 不得同时从事) is in the article it enforces. It runs before rules 4 and 5, so
   an act the question names still decides. Not the 法律责任 chapter: it also holds who compensates and how a
   dispute is settled, rules a question may ask (tried: it moved 2 lay-dev first quotes, neither to an answer).
7. it states a figure of its case (征收…耕地40公顷, 环评五六年前…批下来: not a calendar date) and asks for none, the
   first quote states no figure in that figure's unit and a later one does: the later one goes first. A figure in
   the case's unit is the threshold that decides which rule applies (永久基本农田以外的耕地超过三十五公顷的, 由国务院
   批准), where the first quote is a rule on the same land without it. A question asking a figure is rule 1's:
   the unit asked decides there, not the one the asker describes their case in (距管道五十米…提前几天通知).

8. a later quote shares a run of the question's own words at least SAME_ACT_CHARS long and SAME_ACT_RATIO times as
   long as the first quote's longest run (rule 5's reading, over the whole quote and for any question), and holds
   at least the specific things asked that the first holds (and one of them, when the question asks one: rule 1's
   reading): the later one goes first. A question that repeats
   the statute's phrase (在管道专用隧道中心线两侧一千米…爆破, 可再生能源发展专项资金…收购价格) names the provision it
   asks about; the first quote sharing only its common words (管道…施工作业, 专项资金) is a neighbour. It runs last,
   so the words the question shares with the statute decide over the coarser readings above.

Measured on the dev, lay dev and quotes dev sets (bench/README.md, "What the user reads"): rule 1 moved the
right first quote in 4 questions and the wrong one in none; rule 2 in 1 and none; rule 3 in 2 and none; rule 4
in none of them (no question there names an act and ranks another first) and 1 of the quotes tune set, rightly.
The figure in rule 1 came later: on dev it put the 60-day article first for 要在多少天内给结论 (both gold), on
lay-dev it swapped two wrong first quotes, and it made 1 first quote of a held-out quotes set right, none wrong.
Rule 6 (stop 42) moved 3 first quotes of 1,337: a gold article first on lay-dev and on the quotes tune set, and on
quotes-dev a 不准…拴牲口 rule before a fishing penalty; no answerable question of the blind sets (s41, s42).
Rule 7 (stop 46) moved 4 first quotes of 3,266 bullets over every set: a right one in dev, two tuning sets and a
blind one, none wrong; without the figure-asked exclusion it also moved three figure questions' right first quotes.
Rule 8 (stop 51) moved 8 of 3,331 bullets: 3 first quotes right, none wrong; rule 1's "more of it" (stop 51, before
it moved a quote only when the first held nothing asked) 17 of 3,758: 2 right, none wrong (bench/README.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from regrag.domain.models import NATIONAL
from regrag.domain.results import Bullet, Candidate
from regrag.query.fit import FIGURE, Fit
from regrag.query.forms import PENALTY, forms
from regrag.query.question import Question
from regrag.query.temporal import MIN_SHORT_TITLE
from regrag.text.figures import units_of_figures
from regrag.text.legal import QUOTE_OPENING_RE
from regrag.text.relations import title_key

FIRST_AMONG = 3  # the quotes that may be moved to the front
# rule 5: a run of this many characters of the question in an act clause names the act (无生产配额许可证 is 8), and
# twice as long a run as the first quote's says it names it better
SAME_ACT_CHARS = 8
SAME_ACT_RATIO = 2.0
# the kinds of provision whose answer is one specific thing a quote holds or not (query/forms.py)
AUTHORITY = "authority"  # the form whose answering words name a public body
LIABILITY = "liability"  # the form of a question asking who pays for a loss (谁赔 / 承担…责任)
# the form of a question asking where to complain, report or sue (能去哪里投诉): the provision that opens that way
# (可以向电力管理部门投诉) answers it, not its neighbour on the same matter that opens none (stop 53, bench/README.md)
RECOURSE = "recourse"
SPECIFIC_FORMS = frozenset({PENALTY, AUTHORITY, "time_limit", LIABILITY, RECOURSE})
# who an article's first clause is about: after a leading 违反本法规定，, up to the first ，。：；
_SUBJECT = re.compile(r"(?:违反本[^，。]{0,12}规定，)?(?P<subject>[^，。：；]{0,60})")

# a public body right after one of these (in the same phrase: no ，、 between) is the object of the act, not who
# acted: the prepositions introducing whom an act is towards or by whose leave (向, 经, 未经, 按照, 依照; not 经营
# or 经济) or who decides (由), and the verbs whose object is an authority (服从, 拒绝, 阻挠, 阻碍, 干涉, 配合;
# 拒绝、阻挠…监督检查)
_OBJECT_BEFORE = re.compile(r"(?:服从|向|未经|经(?![营济])|按照|依照|由|拒绝|阻挠|阻碍|干涉|配合)[^，、；。]{0,20}$")

Quote = tuple[Bullet, Candidate, Fit]


def first_quote(q: Question, quotes: Sequence[Quote]) -> list[Quote]:
    """`quotes` (in ranking order, each with its candidate and fit) with the one that should be read first moved
    to the front; the others keep their order."""
    order = list(quotes)
    if len(order) < 2:
        return order
    for pick in (
        _holds_what_is_asked,
        _province_own,
        _national_when_no_place,
        _penalises_someone_else,
        _rule_before_penalty,
        _named_act,
        _same_act,
        _threshold_for_case,
        _same_words,
    ):
        index = pick(q, order[:FIRST_AMONG])
        if index:
            order.insert(0, order.pop(index))
    return order


def _specific(fit: Fit) -> set[str]:
    return set(fit.asked) & (SPECIFIC_FORMS | {FIGURE})


def _specific_asks(q: Question) -> set[str]:
    """The specific things the question asks for: the specific forms its wording asks, and a figure."""
    return {f.name for f in q.forms} & SPECIFIC_FORMS | ({FIGURE} if q.asks_figure else set())


def _holds_what_is_asked(q: Question, quotes: Sequence[Quote]) -> int | None:
    if not _specific_asks(q):
        return None
    held = _held(q, quotes[0])
    return next((i for i, quote in enumerate(quotes) if i and _held(q, quote) > held), None)


def _held(q: Question, quote: Quote) -> set[str]:
    """The specific things asked that the quote holds; a penalty only when it is not the discipline of a public body
    that a question naming none did not ask about (rule 3's reading)."""
    specific = _specific(quote[2])
    if PENALTY in specific and _officials_not_asked(q) and _penalises(quote, _body()):
        specific -= {PENALTY}
    return specific


def _answered(form: str) -> re.Pattern[str]:
    """The wording of an article answering the form `form` (query/forms.py)."""
    return next(f.answered for f in forms() if f.name == form)


def _body() -> re.Pattern[str]:
    return _answered(AUTHORITY)


def _officials_not_asked(q: Question) -> bool:
    return PENALTY in {f.name for f in q.forms} and not _body().search(q.text)


def _province_own(q: Question, quotes: Sequence[Quote]) -> int | None:
    provinces = (set(q.filters.province) | set(q.places.provinces)) - {NATIONAL}
    first = quotes[0]
    if not provinces or first[1].chunk.meta.province != NATIONAL:
        return None
    held = set(first[2].asked)
    return next(
        (i for i, (_, c, f) in enumerate(quotes) if i and c.chunk.meta.province in provinces and set(f.asked) >= held),
        None,
    )


def _national_when_no_place(q: Question, quotes: Sequence[Quote]) -> int | None:
    """Rule 2's other side: a question set nowhere (no province filter, no place named) whose first quote is one
    province's rule, while a later one is national and holds at least what the first holds of the things asked:
    the national rule goes first. It applies wherever the asker is; 河南省供用电条例's notice period read first by a
    user in 北京 is not their law."""
    if q.filters.province or q.places.provinces or quotes[0][1].chunk.meta.province == NATIONAL:
        return None
    held = set(quotes[0][2].asked)
    return next(
        (i for i, (_, c, f) in enumerate(quotes) if i and c.chunk.meta.province == NATIONAL and set(f.asked) >= held),
        None,
    )


def _penalises_someone_else(q: Question, quotes: Sequence[Quote]) -> int | None:
    body = _body()
    if not _officials_not_asked(q) or not _penalises(quotes[0], body):
        return None
    return next(
        (i for i, quote in enumerate(quotes) if i and PENALTY in quote[2].asked and not _penalises(quote, body)),
        None,
    )


def _rule_before_penalty(q: Question, quotes: Sequence[Quote]) -> int | None:
    """Rule 6 (the module docstring)."""
    if {f.name for f in q.forms} & {PENALTY, LIABILITY} or not _punishes(quotes[0]):
        return None
    held = set(quotes[0][2].asked)
    return next(
        (
            i
            for i, quote in enumerate(quotes)
            if i and not _punishes(quote) and set(quote[2].asked) >= held and _as_much_asked(q, quote, quotes[0])
        ),
        None,
    )


def _as_much_asked(q: Question, quote: Quote, first: Quote) -> bool:
    """`quote` shows at least as much of the question's key terms as `first`, in what it quotes or in its whole
    article: the unit quoted from the rule may leave out the sentence naming what the penalty restates (城乡规划法
    第四十五条's 建设工程, in the sentence before the one on 六个月内报送)."""
    return q.coverage(quote[0].span) >= q.coverage(first[0].span) or (
        quote[1].features.coverage >= first[1].features.coverage
    )


def _punishes(quote: Quote) -> bool:
    """The quote punishes: the penalty form's wording (罚款, 吊销, 追究刑事责任 …) in what it shows."""
    return _answered(PENALTY).search(quote[0].span) is not None


def _same_act(q: Question, quotes: Sequence[Quote]) -> int | None:
    """It asks for a penalty, the first quote and a later one hold one, and the later one's act clause (what its
    first clause says was done: 无生产配额许可证生产消耗臭氧层物质的) shares a run of the question's words at least
    SAME_ACT_RATIO times as long as the first quote's does, and at least SAME_ACT_CHARS long: that quote punishes
    the act asked, the first a neighbouring one (无使用配额许可证使用…的, in the next article of the chapter)."""
    if PENALTY not in {f.name for f in q.forms} or PENALTY not in quotes[0][2].asked:
        return None
    runs = [shared_run(q.text, _act_clause(quote)) for quote in quotes]
    return _longest_run(runs, [i for i in range(1, len(quotes)) if PENALTY in quotes[i][2].asked])


def _longest_run(runs: Sequence[int], later: Sequence[int]) -> int | None:
    """Of the `later` quotes, the one whose run of the question's words (`runs`, the first quote's at 0) is longest,
    when it is at least SAME_ACT_CHARS long and SAME_ACT_RATIO times the first quote's: the quote that names what
    the question names (rules 5 and 8)."""
    best = max(later, key=lambda i: (runs[i], -i), default=None)
    if best is None or runs[best] < SAME_ACT_CHARS or runs[best] < SAME_ACT_RATIO * runs[0]:
        return None
    return best


def _act_clause(quote: Quote) -> str:
    """The quote's first clause after its label (and a leading 违反本法规定，): who did what, in a penalty article."""
    span = quote[0].span
    opening = QUOTE_OPENING_RE.match(span)
    found = _SUBJECT.match(span, opening.end()) if opening else None
    return found.group("subject") if found else ""


def shared_run(a: str, b: str) -> int:
    """The length of the longest run of characters `a` and `b` share."""
    return SequenceMatcher(None, a, b, autojunk=False).find_longest_match().size


def _named_act(q: Question, quotes: Sequence[Quote]) -> int | None:
    named = acts_named(q.text, [quote[1].chunk.meta.title for quote in quotes])
    if not named or title_key(quotes[0][1].chunk.meta.title) in named:
        return None
    later = [i for i, (_, c, _) in enumerate(quotes) if i and title_key(c.chunk.meta.title) in named]
    return next((i for i in later if _specific(quotes[i][2])), later[0] if later else None)


def acts_named(question: str, titles: Sequence[str]) -> set[str]:
    """The acts among `titles` the question names (按能源法 → 能源法): by title key, at least MIN_SHORT_TITLE
    characters (the bound query/temporal.py reads a named act by), and not inside the name of another of them it
    names (能源法 in 可再生能源法)."""
    keys = {key for key in map(title_key, titles) if len(key) >= MIN_SHORT_TITLE and key in question}
    return {key for key in keys if not any(key != other and key in other for other in keys)}


def _penalises(quote: Quote, body: re.Pattern[str]) -> bool:
    """The quote's first clause names a public body as who acted: the article is about what that body did. A body
    the clause names as the object of the act (不服从有关人民政府的统一指挥, 未经…主管部门同意, 由公安部门责令改正)
    is not who is punished: 能源法 第七十三条 punishes 能源企业 for disobeying the government."""
    clause = _act_clause(quote)
    return any(_OBJECT_BEFORE.search(clause[: found.start()]) is None for found in body.finditer(clause))


def _threshold_for_case(q: Question, quotes: Sequence[Quote]) -> int | None:
    """Rule 7 (the module docstring)."""
    units = q.case_units
    if not units or q.asks_figure or units_of_figures(quotes[0][0].span) & units:
        return None
    return next((i for i, quote in enumerate(quotes) if i and units_of_figures(quote[0].span) & units), None)


def _same_words(q: Question, quotes: Sequence[Quote]) -> int | None:
    """Rule 8 (the module docstring)."""
    runs = [shared_run(q.text, _body_of(quote)) for quote in quotes]
    held = _specific(quotes[0][2])
    asks = _specific_asks(q)
    later = [i for i in range(1, len(quotes)) if _specific(quotes[i][2]) >= held and (not asks or _held(q, quotes[i]))]
    return _longest_run(runs, later)


def _body_of(quote: Quote) -> str:
    """The quote without its article label (第三十三条 is in many questions and says nothing of what is asked)."""
    span = quote[0].span
    opening = QUOTE_OPENING_RE.match(span)
    return span[opening.end() :] if opening else span
