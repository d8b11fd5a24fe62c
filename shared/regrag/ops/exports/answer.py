"""An answer as the user saw it (the query log's record, ops/feedback.query_record), laid out for a memo: the
question, the day it is about, the filters, then each quote verbatim with its complete citation (the marker the
page shows: 〔《title》第X条，生效：date〕, with ，已被取代 / ，尚未施行 for a version not in force that day), the
version's status in words, its page of a PDF, the corresponding article of the other version, and a link back
to the document at that article; the notes (versions, cautions); the disclaimer. A low-confidence answer's
caution comes before its quotes."""

from __future__ import annotations

from typing import Any

from regrag.domain.errors import NotFound
from regrag.ops.exports.labels import AS_OF_SOURCES, filter_summary, version_words
from regrag.ops.exports.memo import DISCLAIMER, Block, Heading, Link, Memo, Quote, Rule, para
from regrag.query.lookups import NO_COUNTERPART_NOTE

TITLE = "法规检索结果"


def answer_memo(record: dict[str, Any], query_id: str, link: Any) -> Memo:
    """The memo of a logged answer. `link(doc_id, article)`: the page's address of a document at an article.

    NotFound when the record was logged before answers were kept whole (ask the question again)."""
    answer = record.get("answer")
    if not isinstance(answer, dict):
        raise NotFound(
            f"the answer of query {query_id} was logged before whole answers were kept; ask the question again",
            code="answer_not_kept",
        )
    blocks: list[Block] = [
        para(str(record.get("question") or ""), label="问题："),
        para(_as_of(record.get("temporal") or {}), label="时点："),
        para(filter_summary(record.get("filters") or {}), label="筛选条件："),
        para(f"{record.get('time', '')}（UTC）；检索编号 {query_id}", label="检索时间：", small=True),
    ]
    bullets = answer.get("bullets") or []
    if answer.get("abstained") or not bullets:
        blocks += [
            Heading("未找到相关规定"),
            *(para(line) for line in str(answer.get("answer_zh", "")).split("\n")[1:]),
        ]
    else:
        blocks.append(Heading(f"相关规定（逐字摘录原文，共 {len(bullets)} 条）"))
        if answer.get("caution"):  # low confidence: read before the quotes, as on the page
            blocks.append(para(str(answer["caution"])))
        for n, bullet in enumerate(bullets, 1):
            blocks += _bullet(n, bullet, link)
    notes = _notes(answer, bullets)
    if notes:
        blocks.append(Heading("提示"))
        blocks += [para(note) for note in notes]
    blocks += [Rule(), para(DISCLAIMER, small=True)]
    return Memo(TITLE, tuple(blocks))


def _as_of(temporal: dict[str, Any]) -> str:
    """2026-11-26（今天）, 2019-12-31（依据问题中的日期“2019年”）: the versions quoted are those in force that day."""
    day = temporal.get("as_of") or "今天"
    source = str(temporal.get("source") or "")
    if source == "today":
        why = AS_OF_SOURCES["today"]
    elif source in AS_OF_SOURCES:
        why = f"依据{AS_OF_SOURCES[source]}" + (f"“{temporal['text']}”" if temporal.get("text") else "")
    else:
        return str(day)
    return f"{day}（{why}）；引用的是当日有效的版本"


def _bullet(n: int, bullet: dict[str, Any], link: Any) -> list[Block]:
    cite = bullet.get("citation") or {}
    pages = cite.get("pages") or []
    page = ""
    if pages:
        first, last = min(pages), max(pages)
        page = f"（第{first}页）" if first == last else f"（第{first}–{last}页）"
    blocks: list[Block] = [
        # a paragraph per 款, lead-in or item quoted, as the statute lays them out (Bullet.lines)
        Quote("\n\n".join(bullet.get("lines") or [str(bullet.get("span", ""))]), n),
        para(f"{cite.get('marker', '')}{page}", label="引用："),
        para(version_words(cite), label="版本状态："),
    ]
    counterpart = cite.get("counterpart") or {}
    if counterpart and cite.get("version_status") not in (None, "in_force"):
        which = "当时有效的版本" if cite.get("version_status") == "not_yet_in_force" else "新版本"
        target = counterpart.get("article")
        found = f"{which}对应条文：{target}" if target else f"{which}：{counterpart.get('note') or NO_COUNTERPART_NOTE}"
        blocks.append(para(found, small=True))
    if cite.get("note"):
        blocks.append(para(f"⚠ {cite['note']}", small=True))
    where = link(cite.get("doc_id", ""), cite.get("article"))
    blocks.append(
        para(Link(f"《{cite.get('title', '')}》{cite.get('article') or ''}", where), label="原文：", small=True)
    )
    return blocks


def _notes(answer: dict[str, Any], bullets: list[dict[str, Any]]) -> list[str]:
    """The answer's notes (versions, cautions, the day asked) except those already under their quote (OCR
    notes)."""
    under_quotes = {(b.get("citation") or {}).get("note") for b in bullets}
    return [str(n) for n in answer.get("notes") or [] if n not in under_quotes]
