"""score: the retrieved candidates put in their final order in one pass, each ordering signal stored on the
candidate as a named feature (`Features`) and combined by the one fusion helper (query/fusion.py).

The signals, each a ranking of the same candidates fused by RRF (no score is compared across signals):
- retrieval: the order of the legs' fusion and the corpus merge (weight 1);
- coverage: how much of the question's key terms the text covers (`coverage_weight`): a cheap local reranker
  that needs no model: +0.8 nDCG@10 on the dev set in one corpus, and most of what merging many corpora by rank
  loses (0.730 → 0.758 over 8 provincial corpora; bench/README.md);
- question forms: how many of the kinds of provision the question asks for the text answers (`form_weight`,
  off by default: query/forms.py).

Then where each rule applies: with no province filter, a question that names places ranks national rules and
those provinces' own first, other provinces' local rules after them (`applies`: they do not apply there, but can
share every word with the question; nothing is dropped from the candidates, and query/quote.py quotes none of
them; dev nDCG@10 0.805 → 0.815, 15 of 50 questions name a place); a question that names no place weighs local
rules' scores by `national_preference` (< 1: a national rule applies wherever the project is; dev, 8 provincial
corpora, 0.783 → 0.806 at 0.8). Explicit corpus weights replace the national preference (the caller said which
corpora matter).

`Candidate.score` is the fused score times the place factor; the final order is every candidate that applies,
then the rest, each group by that score (ties in retrieval order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from regrag.domain.models import NATIONAL
from regrag.domain.results import Candidate, Features
from regrag.query.fusion import positions, rrf
from regrag.query.question import Question
from regrag.text.places import PlaceScope


@dataclass(frozen=True)
class ScoringConfig:
    rrf_k: int
    coverage_weight: float
    form_weight: float
    place_scope: bool
    national_preference: float


@dataclass(frozen=True)
class Scored:
    candidates: list[Candidate]
    scope: PlaceScope  # the places that ordered the candidates (empty: none, or a province filter decided)


def score(
    q: Question, pool: Sequence[Candidate], config: ScoringConfig, corpus_weights: dict[str, float] | None = None
) -> Scored:
    """The final order of `pool` (in retrieval order, with the `coverage` feature set by retrieve)."""
    pool = list(pool)
    ids = [c.chunk.id for c in pool]
    by_coverage: dict[str, int] = {}
    by_form: dict[str, int] = {}
    if config.coverage_weight > 0 and len(pool) > 1:
        order = sorted(range(len(pool)), key=lambda i: (-pool[i].features.coverage, i))
        by_coverage = positions([ids[i] for i in order])
    forms = [sum(1 for f in q.forms if f.answered.search(c.chunk.text + c.chunk.breadcrumb)) for c in pool]
    if config.form_weight > 0 and len(set(forms)) > 1:  # every candidate alike: nothing to prefer
        order = sorted(range(len(pool)), key=lambda i: (-forms[i], i))
        by_form = positions([ids[i] for i in order])
    rankings = [(1.0, positions(ids))]
    rankings += [(config.coverage_weight, by_coverage)] if by_coverage else []
    rankings += [(config.form_weight, by_form)] if by_form else []
    fused = rrf(rankings, config.rrf_k)
    scope = place_scope(q, config.place_scope)
    factor = _place_factors(pool, q, config, scope, corpus_weights)
    scored = [
        replace(
            c,
            score=fused[c.chunk.id] * factor[i],
            features=Features(
                coverage=c.features.coverage,
                retrieval_rank=c.features.retrieval_rank or i + 1,
                retrieval_score=c.features.retrieval_score,
                coverage_rank=by_coverage.get(c.chunk.id),
                forms=forms[i],
                form_rank=by_form.get(c.chunk.id),
                applies=applies(scope, c.chunk.meta.province),
                place_factor=factor[i],
            ),
        )
        for i, c in enumerate(pool)
    ]
    # ties: the order the fused score alone gives (then retrieval order), as each signal was applied in turn
    by_fused = sorted(range(len(pool)), key=lambda i: (-fused[ids[i]], i))
    place = {i: n for n, i in enumerate(by_fused)}
    final = sorted(range(len(pool)), key=lambda i: (not scored[i].features.applies, -scored[i].score, place[i]))
    return Scored([scored[i] for i in final], scope)


def place_scope(q: Question, enabled: bool) -> PlaceScope:
    """The places that order the candidates: those the question names, unless the request filters by province
    (the filter decides) or the ordering is turned off (`enabled`, REGRAG_PLACE_SCOPE)."""
    if not enabled or q.filters.province:
        return PlaceScope()
    return q.places


def applies(scope: PlaceScope, province: str) -> bool:
    """Whether a rule of `province` applies where the question is about: national rules and the scope's own
    provinces' do (everything does when the scope is empty)."""
    return not scope or province == NATIONAL or province in scope.provinces


def _place_factors(
    pool: Sequence[Candidate],
    q: Question,
    config: ScoringConfig,
    scope: PlaceScope,
    corpus_weights: dict[str, float] | None,
) -> list[float]:
    """The national preference per candidate: local rules weigh `national_preference` when the question names no
    place, no province filter decides and no corpus weights were given; 1 otherwise."""
    if q.filters.province or scope or corpus_weights or config.national_preference >= 1.0:
        return [1.0] * len(pool)
    return [1.0 if c.chunk.meta.province == NATIONAL else config.national_preference for c in pool]
