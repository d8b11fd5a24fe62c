"""Chinese word segmentation for lexical search: one tokenizer for the index and for queries.

A default BM25 tokenizer splits on whitespace and scores Chinese as zero; jieba's search mode gives words and
their sub-words (分布式 → 分布, 布式, 分布式), so a query word matches inside longer document words. rjieba is
jieba's dictionary and algorithm in Rust (identical tokens, about 6× faster; tests check the equality).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

from regrag.data import table

_lock = threading.Lock()
_jieba = None  # a private rjieba.Jieba with the custom dictionary; the module-level default stays untouched

# Function words and question scaffolding: frequent in questions, empty of regulatory meaning. Applied to
# documents and queries alike, so it never makes the two sides disagree.
STOPWORDS = frozenset(
    """的 了 和 与 及 或 等 是 在 对 把 被 将 为 于 以 由 从 向 按 其 之 也 都 而
    并且 或者 以及 有关 有 没有 这 那 这些 那些 这个 那个 什么 怎么 怎样 怎么办 如何
    哪些 哪个 哪里 哪 多少 多久 几 吗 呢 吧 啊 呀 我 我们 你 你们 他 他们 她 它
    自己 咱们 要 想 能 能不能 可以 可不可以 会 需要 应该 是否 是不是 还 还能 就 才 又
    再 都 一个 一些 这种 那种 比如 例如 请问 现在 已经 一下 一般 大约 大概 左右 情况
    问题 规定 时候""".split()  # noqa: SIM905
)


def _segmenter():  # type: ignore[no-untyped-def]
    global _jieba
    if _jieba is None:
        with _lock:
            if _jieba is None:
                import rjieba

                seg = rjieba.Jieba()
                for term, freq in load_terms():
                    seg.add_word(term, freq, None)
                _jieba = seg
    return _jieba


@lru_cache(maxsize=1)
def load_terms() -> tuple[tuple[str, int | None], ...]:
    """The custom dictionary shipped with the package: (term, frequency or None)."""
    terms = []
    for line in table.read("energy_terms.txt").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        terms.append((parts[0], int(parts[1]) if len(parts) > 1 else None))
    return tuple(terms)


@lru_cache(maxsize=1 << 16)  # tokens repeat: a lookup instead of a category per character (2.7 M calls a corpus)
def _is_word(token: str) -> bool:
    return any(unicodedata.category(ch)[0] in "LN" for ch in token)


def tokenize(text: str) -> list[str]:
    """Search-mode jieba tokens of `text`, lower-cased, without punctuation, spaces and stopwords."""
    tokens = (tok.strip().lower() for tok in _segmenter().cut_for_search(text))
    return [t for t in tokens if t and _is_word(t) and t not in STOPWORDS]


def words(text: str) -> list[str]:
    """Precise-mode jieba words of `text`, in order, without overlaps (垂钓许可证 → 垂钓, 许可证): what a phrase is
    made of, where `tokenize` gives every sub-word for search."""
    return list(_segmenter().cut(text))


# CJK Unified Ideographs and Extension A: the characters Chinese text is made of
CJK_CHAR_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# a clause of a question: the text between the punctuation that ends or separates clauses (Chinese and ASCII)
CLAUSE_RE = re.compile(r"[^，,。？?！!；;：:]+")


def chinese_share(text: str) -> float:
    """The share of a text's visible characters that are Chinese (CJK) characters (0–1)."""
    visible = [c for c in text if not c.isspace()]
    return len(CJK_CHAR_RE.findall(text)) / len(visible) if visible else 0.0


def cjk_characters(text: str) -> list[str]:
    """Every CJK character of `text`, in order: the unigram half of the lexical terms."""
    return CJK_CHAR_RE.findall(text)


def index_terms(text: str, words: list[str] | None = None) -> list[str]:
    """The lexical terms of a text: jieba search-mode words plus single characters (`words`: the text's
    `tokenize` already computed, so a caller that needs both tokenises once).

    Words carry meaning (分布式光伏); single characters still match when the question's wording differs from
    the statute's (光伏板 vs 光伏发电系统, 偷电 vs 窃电 share nothing, but 掺杂/掺入 share 掺). On the dev set
    characters alone beat words alone, and the two together beat either.
    """
    return (tokenize(text) if words is None else list(words)) + cjk_characters(text)
