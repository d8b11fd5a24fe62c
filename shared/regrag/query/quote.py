"""quote: the spans of the ranked candidates that answer the question, each checked verbatim in its stored text.

Nothing is paraphrased. Spans are whole sentences of the stored article text, chosen by the question's
keywords; every span is checked to be a substring of the stored document text before it is kept (a span that
fails is dropped, counted and logged). A candidate whose key-term coverage is below the quote floor is never
quoted (it stays visible as evidence), nor is a span that is mostly not Chinese.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from regrag import logs
from regrag.domain.results import Bullet, Candidate
from regrag.query.citations import citation_for
from regrag.query.question import Keyword, Question
from regrag.text.segment import CJK_CHAR_RE
from regrag.text.sentences import sentence_spans

log = logs.get("compose")

MIN_SPAN_CHARS = 20
FALLBACK_CHARS = 120
MAX_SPANS_PER_CANDIDATE = 2
MIN_CHINESE_RATIO = 0.30  # a quoted span below it is mostly not Chinese text


@dataclass(frozen=True)
class QuoteConfig:
    top_n: int = 5  # the candidates quoted from
    max_bullets: int = 4
    quote_floor: float = 0.2  # a candidate whose coverage is below it is never quoted


@dataclass(frozen=True)
class Quotes:
    """What quoting found: the verbatim bullets, spans dropped as not verbatim, spans skipped as not Chinese."""

    bullets: tuple[Bullet, ...] = ()
    dropped: int = 0
    foreign: int = 0

    @property
    def text(self) -> str:
        """Every quoted span, joined: what judge reads the answer's figures and terms from."""
        return "".join(b.span for b in self.bullets)


def chinese_ratio(text: str) -> float:
    visible = [c for c in text if not c.isspace()]
    return len(CJK_CHAR_RE.findall(text)) / len(visible) if visible else 0.0


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


def quote(
    q: Question, ranked: Sequence[Candidate], source_text: Callable[[str], str | None], config: QuoteConfig
) -> Quotes:
    """Up to `max_bullets` verbatim spans from the first `top_n` candidates that clear the quote floor."""
    quotable = [c for c in ranked[: config.top_n] if c.features.coverage >= config.quote_floor]
    texts: dict[str, str | None] = {}
    bullets: list[Bullet] = []
    dropped = foreign = 0
    for cand in quotable:
        doc_id = cand.chunk.doc_id
        if doc_id not in texts:
            texts[doc_id] = source_text(doc_id)
        stored = texts[doc_id]
        for span in select_spans(cand.chunk.text, q.keywords):
            if len(bullets) >= config.max_bullets:
                return Quotes(tuple(bullets), dropped, foreign)
            if chinese_ratio(span) < MIN_CHINESE_RATIO:
                # The product quotes Chinese regulations: a span that is mostly not Chinese (a translation, a
                # formula or a table of figures) is left to the evidence list, where the reader sees it whole.
                foreign += 1
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
    return Quotes(tuple(bullets), dropped, foreign)
