"""How far to trust an answer: a few visible signals, combined simply, with levels calibrated on the dev set.

Signals (each 0–1):
- retrieval: the fused-score margin between the first and the fifth candidate (a clear winner vs a flat list),
  half of it, and whether the first candidate is in the top 5 of both the dense and the lexical leg, the other half;
- coverage: the share of the question's key terms found in the quoted spans;
- dense: the first candidate's cosine similarity above the dense floor (the model's own scale);
- rerank: the model's score of the first candidate / 10, when Gemini reranked.
`overall` is their mean. Levels: high ≥ 0.65, low < 0.5 (bench/README.md has the reliability table: how often
the top citation is a gold article at each level).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from regrag.domain.results import Candidate
from regrag.query.rerank_output import MAX_SCORE

HIGH = 0.65
LOW = 0.5
MARGIN_FULL = 0.3  # a first-to-fifth fused-score margin of 30 % counts as a clear winner
DENSE_SPAN = 0.05  # cosine above the floor that counts as a full dense signal (e5 scale)
# The fused scores compared are the first 12 (REGRAG_TOP_K's default, what a query returns), the margin is the
# first's over the fifth's, and the legs agree when both rank the first candidate in their top 5: the shape the
# levels were calibrated with on the dev set (module docstring); a leg that did not find it ranks it nowhere.
SCORED = 12
MARGIN_TO = 5
AGREE_TOP = 5
_UNRANKED = AGREE_TOP + 1
CAUTION = "提示：检索置信度较低，以下引文可能并未直接回答该问题，请核对原文或调整问题。"


@dataclass(frozen=True)
class Confidence:
    retrieval: float
    rerank: float | None
    overall: float
    level: str
    inputs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def abstained(cls) -> Confidence:
        """An abstention's confidence: low by definition."""
        return cls(0.0, None, 0.0, "low", {"abstained": True})

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("retrieval", "rerank", "overall"):
            if data[key] is not None:
                data[key] = round(data[key], 3)
        return data


def _clip(value: float) -> float:
    return max(0.0, min(1.0, value))


def assess(
    candidates: Sequence[Candidate],
    span_coverage: float,
    *,
    rerank_status: str,
    dense_floor: float | None,
) -> Confidence:
    """The confidence of one answer with quotes; `span_coverage`: the question's key-term coverage of the quoted
    spans."""
    if not candidates:
        return Confidence.abstained()
    fused = sorted((c.fused_score if c.fused_score is not None else c.score for c in candidates[:SCORED]), reverse=True)
    top = candidates[0]
    first = top.fused_score if top.fused_score is not None else top.score
    fifth = fused[min(MARGIN_TO - 1, len(fused) - 1)]
    margin = (first - fifth) / first if first > 0 else 0.0
    agree = (top.dense_rank or _UNRANKED) <= AGREE_TOP and (top.lexical_rank or _UNRANKED) <= AGREE_TOP
    retrieval = 0.5 * _clip(margin / MARGIN_FULL) + (0.5 if agree else 0.0)
    parts = [retrieval, span_coverage]
    dense_signal = None
    if top.dense_score is not None and dense_floor is not None:
        dense_signal = _clip((top.dense_score - dense_floor) / DENSE_SPAN)
        parts.append(dense_signal)
    rerank = None
    if rerank_status == "ok" and top.rerank_score is not None:
        rerank = _clip(top.rerank_score / MAX_SCORE)
        parts.append(rerank)
    overall = sum(parts) / len(parts)
    level = "high" if overall >= HIGH else "low" if overall < LOW else "medium"
    inputs = {
        "fused_margin": round(margin, 3),
        "legs_agree": agree,
        "span_coverage": round(span_coverage, 3),
        "dense_top": None if top.dense_score is None else round(top.dense_score, 4),
        "dense_signal": None if dense_signal is None else round(dense_signal, 3),
        "rerank_top": top.rerank_score,
    }
    return Confidence(retrieval, rerank, overall, level, inputs)
