"""What changed between two versions of a regulation, article by article (what lawyers build 修订对照表 for).

Articles are matched by text first and label second: a revision renumbers freely (a new 第十条 pushes the old
one to 第十一条), so the same label is no proof of the same provision, while nearly the same words are. The
similarity is the Dice coefficient of the articles' character bigrams, bodies only (the label is left out):
cheap enough to compare every pair of two 300-article versions in well under a second, and robust to the small
edits a 修正 makes. Pairs are taken greedily from the most similar down to `MIN_SIMILARITY`; a pair with the same
label needs only `MIN_SIMILARITY_SAME_LABEL` (an article rewritten in place keeps its number).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from regrag.domain.models import Chunk
from regrag.text.chunking import KIND_ARTICLE

# On the corpus's 10 version pairs (723 articles of the newer versions), the best match of 353 articles is at 0.6 or
# more (kept or amended provisions), of 218 below 0.3 (new provisions), of 152 in between, 6 of these with the same
# label: an article at the same number in that band is rewritten in place, at another number a new provision
# reusing common phrases (应当, 依照本法规定).
MIN_SIMILARITY = 0.6
MIN_SIMILARITY_SAME_LABEL = 0.3
# among near-equal matches the same label wins (a provision kept in place is the likelier reading); smaller than
# any difference in wording worth showing
SAME_LABEL_BONUS = 0.05


@dataclass(frozen=True)
class Article:
    """One whole article (its parts joined) of one version."""

    label: str
    text: str  # verbatim, label included
    body: str  # the text after the label, for comparison

    def to_dict(self) -> dict[str, str]:
        return {"article": self.label, "text": self.text}


@dataclass(frozen=True)
class Change:
    """One article's fate from the older to the newer version."""

    kind: str  # unchanged | changed | renumbered | added | removed
    old: Article | None
    new: Article | None
    similarity: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "change": self.kind,
            "old": self.old.to_dict() if self.old else None,
            "new": self.new.to_dict() if self.new else None,
            "similarity": round(self.similarity, 3),
        }


def articles_of(chunks: Sequence[Chunk]) -> list[Article]:
    """The articles of a version in order, each long article's parts joined back together."""
    out: list[Article] = []
    last_ordinal = None
    for c in chunks:
        if c.kind != KIND_ARTICLE:
            continue
        if out and c.ordinal == last_ordinal and c.part > 0:
            prev = out[-1]
            out[-1] = Article(prev.label, prev.text + "\n" + c.text, prev.body + c.text)
            continue
        body = c.text[len(c.article) :] if c.text.startswith(c.article) else c.text
        out.append(Article(c.article, c.text, body))
        last_ordinal = c.ordinal
    return out


def _bigrams(text: str) -> frozenset[str]:
    squeezed = "".join(text.split())
    return frozenset(squeezed[i : i + 2] for i in range(len(squeezed) - 1)) or frozenset({squeezed})


def similarity(a: str, b: str) -> float:
    """Dice coefficient of character bigrams, whitespace ignored: 1.0 for the same text, 0.0 for nothing shared."""
    x, y = _bigrams(a), _bigrams(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x or y else 1.0


def diff_articles(old: Sequence[Article], new: Sequence[Article]) -> list[Change]:
    """Every article of both versions once: matched pairs (unchanged, changed, renumbered), then the rest
    (removed, added); in the newer version's order, removed articles where they stood in the older one."""
    old_grams = [_bigrams(a.body) for a in old]
    new_grams = [_bigrams(a.body) for a in new]
    pairs: list[tuple[float, float, int, int]] = []  # (rank, similarity, old index, new index)
    for i, og in enumerate(old_grams):
        for j, ng in enumerate(new_grams):
            shared = len(og & ng)
            if not shared:
                continue
            score = 2 * shared / (len(og) + len(ng))
            floor = MIN_SIMILARITY_SAME_LABEL if old[i].label == new[j].label else MIN_SIMILARITY
            if score >= floor:
                # same-label pairs first among equals: a provision kept in place is the likelier reading
                pairs.append((score + (SAME_LABEL_BONUS if old[i].label == new[j].label else 0.0), score, i, j))
    pairs.sort(key=lambda p: (-p[0], p[2], p[3]))
    match_old: dict[int, tuple[int, float]] = {}
    used_new: set[int] = set()
    for _rank, score, i, j in pairs:
        if i in match_old or j in used_new:
            continue
        match_old[i] = (j, score)
        used_new.add(j)
    by_new = {j: (i, s) for i, (j, s) in match_old.items()}
    changes: list[Change] = []
    pending_removed = [i for i in range(len(old)) if i not in match_old]
    for j, article in enumerate(new):
        if j in by_new:
            i, score = by_new[j]
            while pending_removed and pending_removed[0] < i:
                k = pending_removed.pop(0)
                changes.append(Change("removed", old[k], None, 0.0))
            changes.append(Change(_kind(old[i], article), old[i], article, score))
        else:
            changes.append(Change("added", None, article, 0.0))
    changes.extend(Change("removed", old[k], None, 0.0) for k in pending_removed)
    return changes


def _kind(old: Article, new: Article) -> str:
    if old.label != new.label:
        return "renumbered"
    return "unchanged" if "".join(old.body.split()) == "".join(new.body.split()) else "changed"


def summarize(changes: Sequence[Change]) -> dict[str, int]:
    out = {"unchanged": 0, "changed": 0, "renumbered": 0, "added": 0, "removed": 0}
    for c in changes:
        out[c.kind] += 1
    return out


def counterpart(article: str, text: str, other: Sequence[Article]) -> tuple[Article, float] | None:
    """The article of another version that corresponds to `article` (with its text), by the same rule as the
    diff: the most similar above the floor, the same label needing less."""
    body = text[len(article) :] if text.startswith(article) else text
    best: tuple[float, Article, float] | None = None  # (rank, article, similarity)
    for candidate in other:
        score = similarity(body, candidate.body)
        same = candidate.label == article
        if score >= (MIN_SIMILARITY_SAME_LABEL if same else MIN_SIMILARITY):
            rank = score + (SAME_LABEL_BONUS if same else 0.0)
            if best is None or rank > best[0]:
                best = (rank, candidate, score)
    return (best[1], best[2]) if best else None
