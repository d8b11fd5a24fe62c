"""The licences a question names (要先办垂钓许可证 → 垂钓许可证, 办理电力业务许可证 → 业务许可证).

A licence is named by the word before a licence document word (许可证, 执照, 资格证 …: the kinds 行政许可法 第三十九条
lists), or by one word that holds both (营业执照). The word before does not name it when it says what is done to
a licence (取得, 吊销 …), qualifies it (相关, 有效 …) or is a function word (哪些, 一个): data/licence_words.tsv.
The name kept is that word and the document word only (业务许可证 of 电力业务许可证): an article naming the licence
holds it however much longer the full name is.
"""

from __future__ import annotations

from functools import cache

from regrag.data import table
from regrag.text.segment import CJK_CHAR_RE, STOPWORDS, words

_KINDS = ("document", "verb", "modifier")
MIN_NAMING_CHARS = 2  # a one-character word before the document word (的, 办) names nothing


@cache
def _words() -> dict[str, tuple[str, ...]]:
    """Each kind of data/licence_words.tsv → its words, longest first."""
    found: dict[str, list[str]] = {kind: [] for kind in _KINDS}
    for row in table.rows("licence_words.tsv", 3):
        word, kind, _source = row.cells
        if kind not in _KINDS:
            raise row.error("kind " + "|".join(_KINDS))
        found[kind].append(word)
    return {kind: tuple(sorted(ws, key=len, reverse=True)) for kind, ws in found.items()}


def _names(word: str) -> bool:
    """`word`, right before a licence document word, says which licence it is."""
    return (
        len(word) >= MIN_NAMING_CHARS
        and all(CJK_CHAR_RE.fullmatch(ch) for ch in word)
        and word not in STOPWORDS
        and word not in _words()["modifier"]
        and not word.endswith(_words()["verb"])  # 先办许可证, 依法取得许可证
    )


def licences_named(text: str) -> tuple[str, ...]:
    """The licences `text` names, in order, each once."""
    documents = _words()["document"]
    seen: list[str] = []
    parts = words(text)
    for i, word in enumerate(parts):
        kind = next((d for d in documents if word.endswith(d)), None)
        if kind is None:
            continue
        if word != kind:
            name = word if _names(word[: -len(kind)]) else None
        else:
            name = parts[i - 1] + word if i and _names(parts[i - 1]) else None
        if name and name not in seen:
            seen.append(name)
    return tuple(seen)
