"""The key terms of a question, and how much of them a text covers: shared by compose (span choice,
abstention), the corpus merge (corpus relevance) and confidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from regrag.text.segment import CJK_CHAR_RE, STOPWORDS, load_terms, tokenize


@dataclass(frozen=True)
class Keyword:
    term: str
    weight: float


def question_keywords(question: str) -> list[Keyword]:
    """Content words of the question: jieba search-mode tokens (words and their sub-words, stopwords out)
    plus the dictionary terms inside it. Longer words weigh more (环境影响评价 says more than 企业); sub-words
    let a lay word still meet the statute's word (光伏板 → 光伏, 住宅楼 → 住宅). Single characters are dropped.
    """
    words = tokenize(question)
    terms = {t for t, _ in load_terms() if t in question}
    seen: dict[str, float] = {}
    for w in [*words, *terms]:
        if len(w) < 2 or w in STOPWORDS or (not CJK_CHAR_RE.search(w) and not w.isalnum()):
            continue
        seen[w] = max(seen.get(w, 0.0), min(len(w), 4) * (1.5 if w in terms else 1.0))
    return [Keyword(t, w) for t, w in seen.items()]


def coverage(text: str, keywords: Sequence[Keyword]) -> float:
    """Share of the keyword weight found in `text` (0–1)."""
    total = sum(k.weight for k in keywords)
    if total == 0:
        return 0.0
    return sum(k.weight for k in keywords if k.term in text) / total
