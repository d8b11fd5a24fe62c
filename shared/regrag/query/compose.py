"""compose: verbatim quotes from the top candidates, each with its 〔《title》，生效：date〕 citation.

Nothing is paraphrased. Spans are whole sentences of the stored article text, chosen by the question's
keywords; every span is checked to be a substring of the stored document text before it is emitted (a span
that fails is dropped and counted). With no candidate above the relevance floor the answer says that the
corpus has no matching provision instead of quoting noise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from regrag import logs
from regrag.domain.errors import InvalidInput
from regrag.domain.models import DocumentMeta, Filters
from regrag.domain.results import Answer, Bullet, Candidate, Citation
from regrag.query.citations import annotate_versions, citation_for
from regrag.query.keywords import Keyword, coverage, question_keywords
from regrag.text.inference import PROVINCE_NAMES
from regrag.text.segment import CJK_CHAR_RE, load_terms
from regrag.text.sentences import sentence_spans

log = logs.get("compose")

MIN_SPAN_CHARS = 20
FALLBACK_CHARS = 120
MAX_SPANS_PER_CANDIDATE = 2
MIN_CHINESE_RATIO = 0.30  # a quoted span below it is mostly not Chinese text
FOREIGN_NOTE = "有{n}段相关内容主要不是中文（译文、公式或数据表），未作为引文，请在检索到的条文中查看原文。"
ABSTAIN_TITLE = "未找到相关规定"
ABSTAIN_TEXT = "语料库中没有与该问题直接对应的条款。请调整问题或筛选条件后重试，或咨询主管部门。"
ASSET_NAMES = {
    "solar": "光伏",
    "wind": "风电",
    "coal": "煤炭",
    "hydro": "水电",
    "nuclear": "核电",
    "grid": "电网",
    "general": "综合",
}


@dataclass(frozen=True)
class RelevanceFloor:
    """When to say "no matching provision" instead of quoting the best of a bad lot.

    Abstain when the best of the top candidates is weak on both signals: keyword coverage below `coverage`
    and dense similarity below `dense`. When no dense score is known (a /compose call with bare ids), coverage
    below `coverage_alone` decides. A candidate whose own coverage is below `quote` is never quoted (it stays
    visible as evidence). Calibrated with the abstention rule on the dev, lay dev and unanswerable sets for the
    local e5 model (bench/abstention.py, bench/README.md); a different embedding model has another cosine scale,
    so `dense` must be set for it (REGRAG_DENSE_FLOOR).
    """

    coverage: float = 0.55
    dense: float | None = 0.89
    coverage_alone: float = 0.25
    quote: float = 0.2

    def weak(self, best_coverage: float, best_dense: float | None) -> bool:
        if best_dense is None or self.dense is None:
            return best_coverage < self.coverage_alone
        return best_coverage < self.coverage and best_dense < self.dense


def candidate_relevance(candidates: Sequence[Candidate], keywords: Sequence[Keyword]) -> list[float]:
    """Each candidate's share of the question's key terms in its text and breadcrumb: what the floor reads."""
    return [coverage(c.chunk.text + c.chunk.breadcrumb, keywords) for c in candidates]


def best_dense(candidates: Sequence[Candidate]) -> float | None:
    """The highest dense similarity among the candidates (None when no dense score is known)."""
    dense = [c.dense_score for c in candidates if c.dense_score is not None]
    return max(dense) if dense else None


def _span_score(text: str, keywords: Sequence[Keyword]) -> float:
    return sum(k.weight for k in keywords if k.term in text)


def select_spans(text: str, keywords: Sequence[Keyword], max_spans: int = MAX_SPANS_PER_CANDIDATE) -> list[str]:
    """Up to `max_spans` runs of whole sentences (each over MIN_SPAN_CHARS) that carry the most keyword weight.

    Falls back to the text's leading FALLBACK_CHARS characters when no sentence mentions a keyword.
    """
    spans = sentence_spans(text)
    scored = [(i, _span_score(text[s:e], keywords)) for i, (s, e) in enumerate(spans)]
    ranked = sorted((x for x in scored if x[1] > 0), key=lambda x: (-x[1], x[0]))
    chosen: list[tuple[int, int]] = []  # sentence index ranges [a, b]
    for i, _ in ranked:
        if len(chosen) >= max_spans:
            break
        if any(a <= i <= b for a, b in chosen):
            continue
        a = b = i
        # Grow a short sentence with its neighbours (forward first) until the span is long enough.
        while spans[b][1] - spans[a][0] <= MIN_SPAN_CHARS and (b + 1 < len(spans) or a > 0):
            if b + 1 < len(spans) and not any(x <= b + 1 <= y for x, y in chosen):
                b += 1
            elif a > 0 and not any(x <= a - 1 <= y for x, y in chosen):
                a -= 1
            else:
                break
        if spans[b][1] - spans[a][0] > MIN_SPAN_CHARS:
            chosen.append((a, b))
    if not chosen:
        lead = text.strip()[:FALLBACK_CHARS].strip()
        return [lead] if lead else []
    chosen.sort()
    return [text[spans[a][0] : spans[b][1]] for a, b in chosen]


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


def chinese_ratio(text: str) -> float:
    visible = [c for c in text if not c.isspace()]
    return len(CJK_CHAR_RE.findall(text)) / len(visible) if visible else 0.0


def compose_answer(
    question: str,
    candidates: Sequence[Candidate],
    filters: Filters,
    *,
    source_text: Callable[[str], str | None],
    top_n: int = 5,
    max_bullets: int = 4,
    floor: RelevanceFloor | None = None,
    document_meta: Callable[[str], DocumentMeta | None] | None = None,
    counterpart: Callable[[Citation, DocumentMeta], dict[str, Any] | None] | None = None,
) -> Answer:
    """Build the answer from the first `top_n` candidates (already in final order).

    Args:
        source_text: doc_id → the stored document text, which every span must be a substring of.
        floor: when the candidates are too weak to quote (see RelevanceFloor).
        document_meta: doc_id → stored metadata, used to name newer versions of cited documents.
        counterpart: (citation, another version) → that version's corresponding article (see citations.py).
    """
    if not question.strip():
        raise InvalidInput("question is empty")
    keywords = question_keywords(question)
    top = list(candidates[:top_n])
    floor = floor or RelevanceFloor()
    relevance = candidate_relevance(top, keywords)
    if not top or floor.weak(max(relevance, default=0.0), best_dense(candidates)):
        return abstention(question, filters)
    quotable = [c for c, rel in zip(top, relevance, strict=True) if rel >= floor.quote]
    bullets, dropped, foreign = _quote(quotable, keywords, source_text, max_bullets)
    if not bullets:
        answer = abstention(question, filters, dropped)
        return with_note(answer, FOREIGN_NOTE.format(n=foreign)) if foreign else answer
    return _assemble(question, filters, bullets, dropped, foreign, document_meta, counterpart)


def _assemble(
    question: str,
    filters: Filters,
    bullets: list[Bullet],
    dropped: int,
    foreign: int,
    document_meta: Callable[[str], DocumentMeta | None] | None,
    counterpart: Callable[[Citation, DocumentMeta], dict[str, Any] | None] | None,
) -> Answer:
    """The answer around its quotes: heading, one citation per document, version and other notes."""
    heading = heading_for(question, filters)
    answer_zh = f"{heading}\n- 相关规定：\n" + "\n".join(b.render() for b in bullets)
    first: dict[str, Citation] = {}  # one citation per document (or URL, without its #page): its first quote
    for b in bullets:
        first.setdefault((b.citation.url or "").split("#", 1)[0] or b.citation.doc_id, b.citation)
    citations = list(first.values())
    version_notes: list[str] = []
    if document_meta is not None:
        bullets, citations, version_notes = annotate_versions(
            bullets, citations, filters.as_of, document_meta, counterpart
        )
    if version_notes:
        answer_zh += "\n- 版本提示：\n" + "\n".join(f" • {n}" for n in version_notes)
    ocr_notes = list(dict.fromkeys(b.citation.note for b in bullets if b.citation.note))
    other_notes = ocr_notes + ([FOREIGN_NOTE.format(n=foreign)] if foreign else [])
    if other_notes:
        answer_zh += "\n- 提示：\n" + "\n".join(f" • {n}" for n in other_notes)
    notes = version_notes + other_notes
    answer = Answer(
        answer_zh,
        heading,
        tuple(bullets),
        tuple(citations),
        False,
        dropped,
        chinese_ratio(answer_zh),
        tuple(notes),
    )
    problems = answer_problems(answer)
    if problems:  # our own output breaking its contract is a bug to fix, never a reason to fail the request
        logs.event(log, logging.ERROR, "composed answer breaks its contract", problems=problems)
    return answer


def _quote(
    candidates: Sequence[Candidate],
    keywords: Sequence[Keyword],
    source_text: Callable[[str], str | None],
    max_bullets: int,
) -> tuple[list[Bullet], int, int]:
    """Up to `max_bullets` spans from the candidates, each checked to be verbatim in its stored document (a span
    that is not is dropped, counted and logged): (bullets, dropped, spans skipped as mostly not Chinese)."""
    texts: dict[str, str | None] = {}
    bullets: list[Bullet] = []
    dropped = skipped_foreign = 0
    for cand in candidates:
        doc_id = cand.chunk.doc_id
        if doc_id not in texts:
            texts[doc_id] = source_text(doc_id)
        stored = texts[doc_id]
        for span in select_spans(cand.chunk.text, keywords):
            if len(bullets) >= max_bullets:
                return bullets, dropped, skipped_foreign
            if chinese_ratio(span) < MIN_CHINESE_RATIO:
                # The product quotes Chinese regulations: a span that is mostly not Chinese (a translation, a
                # formula or a table of figures) is left to the evidence list, where the reader sees it whole.
                skipped_foreign += 1
                continue
            if not stored or span not in stored:
                dropped += 1
                logs.event(
                    log,
                    logging.WARNING,
                    "span dropped: not verbatim in the stored text",
                    doc_id=doc_id,
                    chunk_id=cand.chunk.id,
                )
                continue
            bullets.append(Bullet(span, citation_for(cand, span), cand.chunk.id))
    return bullets, dropped, skipped_foreign


def with_caution(answer: Answer) -> Answer:
    """The same quotes, with a line after the heading saying they may not answer the question."""
    from regrag.query.confidence import CAUTION

    head, _, rest = answer.answer_zh.partition("\n")
    text = f"{head}\n- {CAUTION}\n{rest}"
    return replace(answer, answer_zh=text, chinese_ratio=chinese_ratio(text))


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


def with_note(answer: Answer, note: str) -> Answer:
    """The same answer with one more line under 提示."""
    text = f"{answer.answer_zh}\n- 提示：\n • {note}"
    return replace(answer, answer_zh=text, notes=(*answer.notes, note), chinese_ratio=chinese_ratio(text))
