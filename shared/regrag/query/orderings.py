"""Orderings applied after fusion: key-term coverage, and where a rule applies (the places a question names,
else national rules slightly first); and the relevance of each corpus to a question for the corpus merge."""

from __future__ import annotations

from dataclasses import replace

from regrag.domain.models import Filters
from regrag.domain.results import Candidate
from regrag.query.keywords import coverage, question_keywords
from regrag.text.places import PlaceScope, mentioned_provinces


def coverage_rerank(candidates: list[Candidate], question: str, k: int, weight: float) -> list[Candidate]:
    """Fuse the retrieval order with a second ranking of the same candidates: by how much of the question's key
    terms each one's text covers (RRF again, so no score is compared). A cheap local reranker that needs no
    model: +0.8 nDCG@10 on the dev set in one corpus, and it recovers most of what merging many corpora by
    rank loses (0.730 → 0.758 over 8 provincial corpora; bench/README.md). `weight` 0 turns it off."""
    if weight <= 0 or len(candidates) < 2:
        return candidates
    keywords = question_keywords(question)
    covered = [coverage(c.chunk.text + c.chunk.breadcrumb, keywords) for c in candidates]
    by_coverage = sorted(range(len(candidates)), key=lambda i: (-covered[i], i))
    fused = [1.0 / (k + i + 1) for i in range(len(candidates))]
    for rank, i in enumerate(by_coverage, 1):
        fused[i] += weight / (k + rank)
    order = sorted(range(len(candidates)), key=lambda i: (-fused[i], i))
    return [replace(candidates[i], score=fused[i]) for i in order]


def question_scope(question: str, filters: Filters, enabled: bool = True) -> PlaceScope:
    """The provinces the question names, when they should steer the ranking: not when the request already
    filters by province (the filter decides) and not when turned off."""
    if not enabled or filters.province:
        return PlaceScope()
    return mentioned_provinces(question)


def scope_first(candidates: list[Candidate], scope: PlaceScope) -> list[Candidate]:
    """Rules that apply where the question is about first: national ones and those of the provinces it names;
    other provinces' local rules after them, each group in its own order.

    Another province's local regulation does not apply to a project in the named province, but it can share
    every word with the question (two provinces' 供用电条例 read alike). This is a preference, not a filter:
    nothing is dropped, so a question that names a place only in passing still finds what else matches.
    On the dev set: nDCG@10 0.805 → 0.815 (15 of 50 questions name a place; bench/README.md).
    """
    if not scope:
        return candidates
    allowed = {"national", *scope.provinces}
    ordered = [c for c in candidates if c.chunk.meta.province in allowed]
    cap = min((c.score for c in ordered), default=float("inf"))
    for c in candidates:
        if c.chunk.meta.province not in allowed:  # the score stays a ranking score: never above an earlier rule
            cap = min(cap, c.score)
            ordered.append(replace(c, score=cap))
    return ordered


def prefer_national(candidates: list[Candidate], factor: float) -> list[Candidate]:
    """When the question names no place: local rules' scores times `factor` (< 1), then re-sorted.

    A national rule applies wherever the project is; a local one only in its province. Without this, merging
    corpora by rank puts each provincial corpus's best match beside the national answer (a question on notice
    before planned outages quoted 上海 and 河南 before the national 电力供应与使用条例). Dev set: one corpus
    0.815 → 0.817 (noise), 8 provincial corpora 0.783 → 0.806 at 0.8 (bench/README.md). 1 turns it off.
    """
    if factor >= 1.0:
        return candidates
    weighted = [
        (c.score * (1.0 if c.chunk.meta.province == "national" else factor), i) for i, c in enumerate(candidates)
    ]
    weighted.sort(key=lambda t: (-t[0], t[1]))
    return [replace(candidates[i], score=score) for score, i in weighted]


def by_applicability(
    candidates: list[Candidate],
    question: str,
    filters: Filters,
    *,
    place_scope: bool = True,
    national_preference: float = 1.0,
    corpus_weights: dict[str, float] | None = None,
) -> tuple[list[Candidate], PlaceScope]:
    """Order candidates by where their rules apply: the places the question names first (scope_first), else
    national rules slightly ahead (prefer_national). A province filter in the request decides alone, and
    explicit corpus weights replace the national preference (the caller said which corpora matter)."""
    if filters.province:
        return candidates, PlaceScope()
    scope = question_scope(question, filters, place_scope)
    if scope:
        return scope_first(candidates, scope), scope
    if corpus_weights:
        return candidates, scope
    return prefer_national(candidates, national_preference), scope


def corpus_relevance(ranked: dict[str, list[Candidate]], question: str, top: int = 3) -> dict[str, float]:
    """How well each corpus's own best candidates match the question, relative to the best corpus (0–1].

    Every corpus ranks its best match first, however poor: merging ranks alone interleaves the top of a corpus
    that has nothing on the question with the top of the one that has the answer (on the dev set, split into 8
    provincial corpora, round-robin merging took nDCG@10 from 0.797 to 0.494). The weight is the key-term
    coverage of the corpus's top candidates (their text, not any retrieval score, so nothing is compared across
    corpora but the question's own words), scaled so the best corpus weighs 1.
    """
    keywords = question_keywords(question)
    raw: dict[str, float] = {}
    for corpus, found in ranked.items():
        covered = [coverage(c.chunk.text + c.chunk.breadcrumb, keywords) for c in found[:top]]
        raw[corpus] = sum(covered) / len(covered) if covered else 0.0
    best = max(raw.values(), default=0.0)
    return {c: (max(v / best, 0.05) if best > 0 else 1.0) for c, v in raw.items()}
