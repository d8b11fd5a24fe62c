"""Evaluation on graded questions, with the conventions of shared/eval/README.md.

Article level: a gold article is found when any chunk with its doc_id and article label is retrieved; the
ranked list is deduplicated to unique (doc_id, article) before cutting at k. Recall@k and MRR count grade-3
articles; nDCG@10 uses gain 2^grade − 1 over unique articles; unanswerable questions count only for the
abstention rate. Each question's `filters` (including `as_of`) go into the request.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from regrag.domain.errors import RegragError
from regrag.inputs.filters import parse_filters
from regrag.inputs.parse import EVAL_K, parse_query_request
from regrag.ops.admin import active_prompts
from regrag.ops.answer_keys import calibration, key_metrics, key_row
from regrag.query.answer import answer_question
from regrag.services import Services

NDCG_AT = 10  # nDCG@10, the metric the question sets are tuned and reported on (shared/eval/README.md)


def load_questions(path: str | Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc})") from exc
        if not isinstance(q, dict) or "question" not in q:
            raise ValueError(f"{path}:{n}: needs a 'question'")
        rows.append(q)
    return rows


def unique_articles(candidates: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for c in candidates:
        seen.setdefault((c["doc_id"], c["article"]), None)
    return list(seen)


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def score_ranking(
    ranked: Sequence[tuple[str, str]], relevant: Sequence[dict[str, Any]], k: int = EVAL_K
) -> dict[str, float]:
    """Recall@5, Recall@k, nDCG@10, MRR (within k) and hit@k for one question's unique-article ranking."""
    grades = {(r["doc_id"], r["article"]): int(r["grade"]) for r in relevant}
    gold3 = {a for a, g in grades.items() if g == 3}
    out: dict[str, float] = {}
    for cut in sorted({5, k}):
        out[f"recall@{cut}"] = len(gold3 & set(ranked[:cut])) / len(gold3) if gold3 else float("nan")
    gains = [2 ** grades.get(a, 0) - 1 for a in ranked[:NDCG_AT]]
    ideal = sorted((2**g - 1 for g in grades.values()), reverse=True)[:NDCG_AT]
    out["ndcg@10"] = dcg(gains) / dcg(ideal) if ideal and dcg(ideal) > 0 else float("nan")
    rr = 0.0
    for i, a in enumerate(ranked[:k], 1):
        if a in gold3:
            rr = 1.0 / i
            break
    out["mrr"] = rr
    out[f"hit@{k}"] = 1.0 if gold3 & set(ranked[:k]) else 0.0
    return out


def _mean(values: Sequence[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else float("nan")


def _pct(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[idx]


MODES = ("full", "hybrid", "dense", "lexical")


def _full(services: Services) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The read path itself, as the API runs it, but not through the API: an evaluation question is not a
    user's question, so it is neither written to the query log (which feedback export reads) nor counted in the
    `answered` log line that monitoring alerts on."""
    path = services.read_path
    return lambda body: answer_question(parse_query_request(body), path)


def _retrieval_only(services: Services, mode: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A query function that returns only retrieval candidates, for one leg or the fused pair (no rerank)."""
    config = services.retriever.config
    if mode == "dense":
        config = replace(config, lexical_weight=0.0)
    elif mode == "lexical":
        config = replace(config, dense_weight=0.0)
    retriever = replace(services.retriever, config=config, hyde=None, questions=None)

    def run(body: dict[str, Any]) -> dict[str, Any]:
        result = retriever.retrieve(body["question"], parse_filters(body.get("filters")), body.get("top_k"))
        found = result.candidates
        if mode == "dense":
            found = [c for c in found if c.dense_rank is not None]
        elif mode == "lexical":
            found = [c for c in found if c.lexical_rank is not None]
        return {
            "candidates": [c.to_dict() for c in found],
            "bullets": [],
            "abstained": False,
            "timings_ms": {f"retrieve_{k}": v for k, v in result.timings_ms.items()},
        }

    return run


def evaluate(
    services: Services,
    questions: Sequence[dict[str, Any]],
    k: int = EVAL_K,
    top_k: int | None = None,
    mode: str = "full",
) -> dict[str, Any]:
    """Run every question through the query path (or one retrieval mode) and score it.

    Modes: `full` (retrieve → rerank → compose; the only mode that measures quotes and abstention),
    `hybrid` (fused retrieval alone), `dense` and `lexical` (one leg alone).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; one of {MODES}")
    run = _full(services) if mode == "full" else _retrieval_only(services, mode)
    rows: list[dict[str, Any]] = []
    timings: dict[str, list[float]] = {}
    quotes = _QuoteCheck(services)
    started = time.perf_counter()
    for q in questions:
        body = {"question": q["question"], "filters": q.get("filters") or {}, "top_k": top_k or max(20, 2 * k)}
        try:
            resp = run(body)
        except RegragError as exc:  # a bad question file line, an index that cannot answer: counted, not fatal
            rows.append({"id": q.get("id"), "error": {"code": exc.code, "message": str(exc)}})
            continue
        for stage, ms in resp.get("timings_ms", {}).items():
            timings.setdefault(stage, []).append(float(ms))
        rows.append(_score_question(q, resp, k))
        quotes.check(resp["bullets"])
    answerable = [r for r in rows if r.get("answerable") and "ndcg@10" in r]
    unanswerable = [r for r in rows if r.get("answerable") is False]
    metrics = {
        **_ranking_metrics(answerable, k),
        **_abstention_metrics(answerable, unanswerable),
        **key_metrics(rows),
        "verbatim_rate": quotes.verbatim / quotes.spans if quotes.spans else float("nan"),
        "citation_accuracy": quotes.citations_ok / quotes.spans if quotes.spans else float("nan"),
    }
    latency = {
        stage: {"p50": round(statistics.median(v), 1), "p95": round(_pct(v, 95), 1)} for stage, v in timings.items()
    }
    return {
        "mode": mode,
        "context": context(services),
        "reliability": _reliability(answerable),
        # per confidence level, how often the first quote shows the answer (sets with answer_keys)
        "calibration": calibration(rows),
        "by_type": _by_type(answerable, k),
        "questions": len(questions),
        "answerable_scored": len(answerable),
        "unanswerable": len(unanswerable),
        "errors": sum(1 for r in rows if "error" in r),
        "k": k,
        "metrics": {m: round(v, 4) for m, v in metrics.items()},
        "latency_ms": latency,
        "spans": {"total": quotes.spans, "verbatim": quotes.verbatim},
        "seconds": round(time.perf_counter() - started, 1),
        "per_question": rows,
    }


def context(services: Services) -> dict[str, Any]:
    """What a result depends on, written into every report so a figure can be reproduced: the index version, the
    embedding model, the active prompts, every step's settings (retrieval and scoring, quoting, judging), and the
    whole configuration they were built from (secrets shown only as set or not)."""
    return {
        "index_version": services.store.stats().get("index_version"),
        "embedding_model": services.embedder.model_id,
        "prompts": active_prompts(
            services.reranker, hyde=services.retriever.hyde, questions=services.questions_indexer
        ),
        "retrieval": asdict(services.retriever.config),
        "read_path": services.query_options.to_dict(),
        "settings": services.settings.redacted(),
    }


def _score_question(q: dict[str, Any], resp: dict[str, Any], k: int) -> dict[str, Any]:
    """One question's row: its ranking metrics, abstention, and the grade of the first quoted article."""
    ranked = unique_articles(resp["candidates"])
    row: dict[str, Any] = {
        "id": q.get("id"),
        "type": q.get("type"),
        "answerable": q.get("answerable", True),
        "abstained": resp["abstained"],
        "top": [f"{d}:{a}" for d, a in ranked[:5]],
    }
    # a set of the quotes-dev kind names its gold articles without grades: each answers the question (grade 3)
    relevant = q.get("relevant") or [{**g, "grade": 3} for g in q.get("gold") or []]
    if q.get("answer_keys") and "bullets" in resp and "confidence" in resp:
        row["keys"] = key_row(q, resp)
    if q.get("answerable", True) and relevant:
        row.update(score_ranking(ranked, relevant, k))
        if "confidence" in resp and resp["bullets"]:
            first = resp["bullets"][0]["citation"]
            grades = {(r["doc_id"], r["article"]): int(r["grade"]) for r in relevant}
            row["confidence"] = resp["confidence"]["level"]
            row["top_citation_grade"] = grades.get((first["doc_id"], first["article"]), 0)
    return row


class _QuoteCheck:
    """Counts quotes that are verbatim in their stored document and citations that name it rightly."""

    def __init__(self, services: Services) -> None:
        self.store = services.store
        self.texts: dict[str, tuple[Any, str] | None] = {}
        self.spans = self.verbatim = self.citations_ok = 0

    def check(self, bullets: Sequence[dict[str, Any]]) -> None:
        for bullet in bullets:
            self.spans += 1
            cite = bullet["citation"]
            if cite["doc_id"] not in self.texts:
                self.texts[cite["doc_id"]] = self.store.get_document(cite["doc_id"])
            found = self.texts[cite["doc_id"]]
            if found and all(piece in found[1] for piece in bullet.get("pieces") or [bullet["span"]]):
                self.verbatim += 1
            if found and cite["title"] == found[0].title and cite["effective_date"] == found[0].effective_date:
                self.citations_ok += 1


def _ranking_metrics(answerable: Sequence[dict[str, Any]], k: int) -> dict[str, float]:
    keys = ("recall@5", f"recall@{k}", "ndcg@10", "mrr", f"hit@{k}")
    return {key: _mean([r[key] for r in answerable]) for key in keys}


def _abstention_metrics(
    answerable: Sequence[dict[str, Any]], unanswerable: Sequence[dict[str, Any]]
) -> dict[str, float]:
    def rate(rows: Sequence[dict[str, Any]]) -> float:
        return sum(1 for r in rows if r["abstained"]) / len(rows) if rows else float("nan")

    return {"abstention_rate_unanswerable": rate(unanswerable), "false_abstention_rate": rate(answerable)}


def _reliability(answerable: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per confidence level: how often the first quote comes from a grade-3 (or graded) article."""
    out: dict[str, dict[str, Any]] = {}
    for level in ("high", "medium", "low"):
        subset = [r for r in answerable if r.get("confidence") == level]
        if subset:
            out[level] = {
                "n": len(subset),
                "top_citation_grade3": round(sum(r["top_citation_grade"] == 3 for r in subset) / len(subset), 3),
                "top_citation_graded": round(sum(r["top_citation_grade"] >= 2 for r in subset) / len(subset), 3),
            }
    return out


def _by_type(answerable: Sequence[dict[str, Any]], k: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for qtype in sorted({str(r.get("type")) for r in answerable}):
        subset = [r for r in answerable if str(r.get("type")) == qtype]
        out[qtype] = {
            "n": len(subset),
            "ndcg@10": round(_mean([r["ndcg@10"] for r in subset]), 4),
            f"recall@{k}": round(_mean([r[f"recall@{k}"] for r in subset]), 4),
        }
    return out


def format_table(report: dict[str, Any]) -> str:
    m = report["metrics"]
    lines = [f"mode: {report.get('mode', 'full')}", "", "| metric | value |", "|---|---|"]
    lines += [f"| {name} | {value:.3f} |" for name, value in m.items()]
    lines.append(
        f"| questions (answerable scored / unanswerable / errors) | {report['questions']} "
        f"({report['answerable_scored']} / {report['unanswerable']} / {report['errors']}) |"
    )
    lines += ["", "| stage | p50 ms | p95 ms |", "|---|---|---|"]
    lines += [f"| {stage} | {v['p50']} | {v['p95']} |" for stage, v in sorted(report["latency_ms"].items())]
    if report.get("reliability"):
        lines += ["", "| confidence | answers | top citation grade 3 | top citation grade ≥ 2 |", "|---|---|---|---|"]
        lines += [
            f"| {lvl} | {v['n']} | {v['top_citation_grade3']:.0%} | {v['top_citation_graded']:.0%} |"
            for lvl, v in report["reliability"].items()
        ]
    if report.get("calibration"):
        lines += ["", "| confidence | answers | first quote shows the answer |", "|---|---|---|"]
        lines += [f"| {lvl} | {v['n']} | {v['first_quote_key']:.0%} |" for lvl, v in report["calibration"].items()]
    if report.get("by_type"):
        lines += ["", f"| question type | n | nDCG@10 | Recall@{report['k']} |", "|---|---|---|---|"]
        recall = f"recall@{report['k']}"
        lines += [f"| {t} | {v['n']} | {v['ndcg@10']:.3f} | {v[recall]:.3f} |" for t, v in report["by_type"].items()]
    return "\n".join(lines)
