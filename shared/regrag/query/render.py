"""render: the answer a user reads, from the quotes and the verdict: a heading, verbatim bullets with their
〔《title》，生效：date〕 citations, one citation per document, version notes, and the notes of the verdict (cautions,
a low-confidence line, the day the answer is about); or an explicit "no matching provision" with its reasons.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from regrag import logs
from regrag.domain.models import DocumentMeta, Filters
from regrag.domain.results import Answer, Bullet, Citation
from regrag.query import temporal
from regrag.query.citations import annotate_versions, not_the_law
from regrag.query.confidence import CAUTION
from regrag.query.judge import BY_FLOOR, BY_NO_QUOTES, BY_NOTHING, PLACE_UNCOVERED, Verdict
from regrag.query.order import NATIONAL
from regrag.query.question import Question
from regrag.query.quote import Quotes, chinese_ratio
from regrag.text.inference import PROVINCE_NAMES
from regrag.text.segment import load_terms

log = logs.get("compose")

FOREIGN_NOTE = "有{n}段相关内容主要不是中文（译文、公式或数据表），未作为引文，请在检索到的条文中查看原文。"
ABSTAIN_TITLE = "未找到相关规定"
# what a refusal can truly say: the quotes found were not confirmed to answer, not that the law is silent (which
# a search cannot know: a question in everyday words, 偷电 for 窃电, misses articles the library holds)
ABSTAIN_TEXT = (
    "未能在检索到的条文中确认对该问题的回答，因此不引用任何条文。请调整问题或筛选条件后重试，或咨询主管部门。"
)
# the relevance floor refused: what was found shares few of the question's words, which is what a topic the
# library has no text on looks like, and also a question in everyday words: the note says both
FLOOR_NOTE = (
    "检索到的条文与问题的用语重合很少：库中可能没有就此作出规定的条文；若问题用的是日常说法，也可改用法规用语重试"
    "（如“窃电”而非“偷电”，“架空电力线路”而非“高压线”）。最接近的条文列在“依据与检索详情”中，未经确认，仅供参考。"
)
# a question set nowhere answered by local rules only: a reader elsewhere must not take them for the law where
# they are (a new user's 电力公司要砍我家果树…给不给补偿 read 济南's 不予补偿 first, with nothing saying it is 济南's)
LOCAL_ONLY_NOTE = (
    "引文均出自地方性规定（{places}），只在当地适用；问题未指明地区，引文中没有全国性规定。"
    "其他地区请在“省份”筛选中选择所在省份后重试。"
)
NOTE_HEAD = "提示："  # the heading of the notes under an answer
# no document at all is left to search by the filters: the answer is about them, not about the law
# nothing quoted because every candidate is another province's local rule (quote.py): they do not apply there
ELSEWHERE_NOTE = (
    "排在前列的条文都是其他省市的地方性规定，在{places}不适用，未予引用；全国性的法律法规和{places}本地的规定中"
    "未找到直接相关的条文。检索到的条文列在“依据与检索详情”中，仅供参考。"
)
NOTHING_NOTE = "所选筛选条件下没有可检索的条文（库中没有符合这些条件的文件），请放宽筛选条件后重试。"
ASSET_NAMES = {
    "solar": "光伏",
    "wind": "风电",
    "coal": "煤炭",
    "hydro": "水电",
    "nuclear": "核电",
    "grid": "电网",
    "general": "综合",
}

DocumentMetaLookup = Callable[[str], DocumentMeta | None]
CounterpartLookup = Callable[[Citation, DocumentMeta], dict[str, Any] | None]


def heading_for(question: str, filters: Filters) -> str:
    """'并网要点（广东 / 光伏）': the question's main regulatory term, then the province and asset filters."""
    terms = sorted((t for t, _ in load_terms() if t in question), key=lambda t: (-len(t), question.index(t)))
    topic = terms[0] if terms else "法规"
    tags = []
    if filters.province:
        tags.append("、".join(PROVINCE_NAMES.get(p, p) for p in filters.province))
    if filters.asset:
        tags.append("、".join(ASSET_NAMES.get(a, a) for a in filters.asset))
    return f"{topic}要点" + (f"（{' / '.join(tags)}）" if tags else "")


NOT_CHINESE_TITLE = "请用中文提问"
NOT_CHINESE_NOTE = (
    "请用中文提问：本库收录中文法规原文，检索和引用都按中文词句进行。"
    "(Please ask in Chinese: the library holds Chinese regulations and searches their Chinese text.)"
)


def render(
    q: Question,
    quotes: Quotes,
    verdict: Verdict,
    document_meta: DocumentMetaLookup | None = None,
    counterpart: CounterpartLookup | None = None,
) -> Answer:
    """The answer a user reads."""
    if verdict.abstained:
        return abstention_for(q, quotes, verdict)
    return finish(q, quoted(q, quotes, document_meta, counterpart), verdict)


def _language_note(q: Question, answer: Answer) -> Answer:
    """A question not in Chinese is told so: as the headline when nothing is quoted (未找到相关规定 above it reads as
    "the law says nothing", which the search in another language cannot tell), as a note under quotes."""
    if q.chinese:
        return answer
    if not answer.abstained:
        return with_note(answer, NOT_CHINESE_NOTE)
    body = answer.answer_zh.split("\n", 2)[2:]  # the lines after the heading and ABSTAIN_TEXT: the notes
    # the headline alone: a scope in brackets (（法规）) would be read from words the question does not have
    text = "\n".join([NOT_CHINESE_TITLE, f"- {NOT_CHINESE_NOTE}", *body])
    return replace(
        answer,
        answer_zh=text,
        title=NOT_CHINESE_TITLE,
        notes=(*answer.notes, NOT_CHINESE_NOTE),
        chinese_ratio=chinese_ratio(text),
    )


def quoted(
    q: Question,
    quotes: Quotes,
    document_meta: DocumentMetaLookup | None = None,
    counterpart: CounterpartLookup | None = None,
) -> Answer:
    """The answer around its quotes (not yet judged): heading, one citation per document, version and other
    notes. What the `compose` function returns."""
    filters = q.filters
    heading = heading_for(q.text, filters)
    bullets = list(quotes.bullets)
    first: dict[str, Citation] = {}  # one citation per document (or URL, without its #page): its first quote
    for b in bullets:
        first.setdefault((b.citation.url or "").split("#", 1)[0] or b.citation.doc_id, b.citation)
    citations = list(first.values())
    version_notes: list[str] = []
    if document_meta is not None:
        # before the lines are written: a quote of a superseded version says so in its own citation
        bullets, citations, version_notes = annotate_versions(
            bullets, citations, filters.as_of, document_meta, counterpart
        )
        # a version not in force on the day (quoted only when superseded versions are asked for too) comes after
        # every one that is: a comparison, never the answer read first (a new user's 包含已失效的版本 read the
        # 2009 矿产资源法 first, the law in force second); the order is otherwise kept
        bullets.sort(key=lambda b: not_the_law(b.citation))
        citations.sort(key=not_the_law)
    answer_zh = f"{heading}\n- 相关规定：\n" + "\n".join(b.render() for b in bullets)
    if version_notes:
        answer_zh += "\n- 版本提示：\n" + "\n".join(f" • {n}" for n in version_notes)
    ocr_notes = list(dict.fromkeys(b.citation.note for b in bullets if b.citation.note))
    local = _local_only(q, bullets, document_meta)
    other_notes = [
        *([LOCAL_ONLY_NOTE.format(places=local)] if local else []),
        *ocr_notes,
        *([FOREIGN_NOTE.format(n=quotes.foreign)] if quotes.foreign else []),
    ]
    if other_notes:
        answer_zh += f"\n- {NOTE_HEAD}\n" + "\n".join(f" • {n}" for n in other_notes)
    notes = version_notes + other_notes
    answer = Answer(
        answer_zh,
        heading,
        tuple(bullets),
        tuple(citations),
        False,
        quotes.dropped,
        chinese_ratio(answer_zh),
        tuple(notes),
    )
    problems = answer_problems(answer)
    if problems:  # our own output breaking its contract is a bug to fix, never a reason to fail the request
        logs.event(log, logging.ERROR, "composed answer breaks its contract", problems=problems)
    return answer


def _local_only(q: Question, bullets: Sequence[Bullet], document_meta: DocumentMetaLookup | None) -> str | None:
    """The places of the quotes, named, when the question is set nowhere (no province filter, no place named)
    and every quote is a province's own rule; None otherwise."""
    if q.filters.province or q.places.provinces or document_meta is None or not bullets:
        return None
    provinces = []
    for b in bullets:
        meta = document_meta(b.citation.doc_id)
        if meta is None or meta.province == NATIONAL:
            return None
        provinces.append(meta.province)
    return "、".join(PROVINCE_NAMES.get(p, p) for p in dict.fromkeys(provinces))


def finish(q: Question, answer: Answer, verdict: Verdict) -> Answer:
    """An answer with quotes, with what the verdict says about them: the cautions that weigh, a line when the
    confidence is low, and the day the answer is about when it came from the question."""
    if verdict.abstained:
        return abstention_for(q, Quotes(answer.bullets, answer.dropped_spans), verdict)
    for caution in verdict.cautions:
        answer = with_note(answer, f"请注意：{caution}")
    if verdict.low:
        answer = with_caution(answer)
    return _language_note(q, _day_notes(q, answer))


def _day_notes(q: Question, answer: Answer) -> Answer:
    for line in temporal.notes(q.as_of):
        answer = with_note(answer, line)
    return answer


def abstention_for(q: Question, quotes: Quotes, verdict: Verdict) -> Answer:
    """ "No matching provision", with what the verdict found: spans dropped and skipped when nothing was
    quotable, the reasons when the confidence rule withheld the quotes."""
    if verdict.abstained_by == BY_NO_QUOTES:
        answer = abstention(q.text, q.filters, quotes.dropped)
        answer = with_note(answer, FOREIGN_NOTE.format(n=quotes.foreign)) if quotes.foreign else answer
        if PLACE_UNCOVERED in verdict.reasons:  # the candidates are other places' rules (judge.unquoted_verdict)
            answer = with_note(answer, ELSEWHERE_NOTE.format(places="、".join(q.places.names)))
        return _language_note(q, _day_notes(q, answer))
    answer = abstention(q.text, q.filters)
    if verdict.abstained_by == BY_NOTHING:
        return _language_note(q, _day_notes(q, with_note(answer, NOTHING_NOTE)))
    # a reason comes first: the floor gives one when the place asked about has no candidate of its own, which
    # tells more than that the words shared are few
    for reason in verdict.reasons:
        answer = with_note(answer, f"最接近的条文未予引用：{reason}")
    if verdict.abstained_by == BY_FLOOR and q.chinese:  # in another language the words cannot meet at all
        answer = with_note(answer, FLOOR_NOTE)
    return _language_note(q, _day_notes(q, answer))


def with_caution(answer: Answer) -> Answer:
    """The same quotes, with a line after the heading saying they may not answer the question."""
    head, _, rest = answer.answer_zh.partition("\n")
    text = f"{head}\n- {CAUTION}\n{rest}"
    return replace(answer, answer_zh=text, chinese_ratio=chinese_ratio(text), caution=CAUTION)


def abstention(question: str, filters: Filters, dropped: int = 0) -> Answer:
    """ "No matching provision" for this question and scope."""
    scope = heading_for(question, filters).replace("要点", "")
    text = f"{ABSTAIN_TITLE}（{scope}）\n- {ABSTAIN_TEXT}"
    return Answer(text, ABSTAIN_TITLE, (), (), True, dropped, chinese_ratio(text))


def answer_problems(answer: Answer) -> list[str]:
    """What breaks the response contract (fields present; a non-abstaining answer has cited quotes)."""
    problems = []
    if not answer.answer_zh or not answer.title:
        problems.append("answer_zh and title must be present")
    if not answer.abstained and (not answer.bullets or not answer.citations):
        problems.append("a non-abstaining answer needs bullets and citations")
    return problems


def with_note(answer: Answer, note: str, *, first: bool = False) -> Answer:
    """The same answer with one more line under 提示 (under the last block when the answer ends with one: two
    reasons are two lines of one 提示, not two 提示); `first`: before the others, as the one that explains most."""
    before, block, lines = answer.answer_zh.rpartition("\n- ")
    if first and lines.startswith(NOTE_HEAD):
        head, _, rest = lines.partition("\n")
        text = f"{before}{block}{head}\n • {note}\n{rest}"
        return replace(answer, answer_zh=text, notes=(note, *answer.notes), chinese_ratio=chinese_ratio(text))
    head = "" if lines.startswith(NOTE_HEAD) else f"\n- {NOTE_HEAD}"
    text = f"{answer.answer_zh}{head}\n • {note}"
    return replace(answer, answer_zh=text, notes=(*answer.notes, note), chinese_ratio=chinese_ratio(text))
