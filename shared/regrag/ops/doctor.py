"""`regrag doctor`: do the configured models and index answer, here and now? Run before traffic (deploy.sh runs
it before deploying) and after any change of model, region or index.

A retired Gemini model does not fail a query: every rerank falls back to the retrieval order and answers keep
coming, so nobody notices. An embedding model of another dimension or family than the index's finds garbage
neighbours without an error. A model that ignores the temperature scores the same question differently from
one call to the next, and the rerank cache keeps whichever answer came first. Each check here makes the
smallest real call that would show it and reports ok / WARN / FAIL with the reason and the time taken; only
FAIL makes the command exit 1.

The Gemini check sends the production request: the reranker's own generator (model, temperature, thinking
level as `Settings.gemini_params` gives them), prompt and response schema, through a copy of the reranker
without a cache, twice, and compares the two sets of scores.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from regrag.cloud_facts import IGNORED, UNDOCUMENTED, GeminiModel, gemini_model
from regrag.domain.models import Chunk, DocumentMeta, Filters
from regrag.domain.results import Candidate
from regrag.query.rerank import STATUS_OK, LlmReranker
from regrag.services import Services

PROBE = "供电企业因计划检修需要停电的，应当提前几天通知用户？"
# four articles of different relevance, so that equal scores twice mean something
PROBE_ARTICLES = (
    "供电企业因供电设施计划检修需要停电时，应当提前七天通知用户或者进行公告。",
    "用户应当安全用电，不得危害供电、用电安全和扰乱供电、用电秩序。",
    "因故需要中止供电时，供电企业应当按照国家有关规定事先通知用户。",
    "电价实行统一政策，统一定价原则，分级管理。",
)
# a retirement closer than this is worth a warning: a model change is a review, a test run and a deploy
RETIREMENT_NOTICE = timedelta(days=90)


@dataclass(frozen=True)
class Check:
    """One finding: `ok` False fails the command; `warnings` are printed and do not."""

    name: str
    ok: bool
    detail: str
    ms: float
    warnings: tuple[str, ...] = ()

    def line(self) -> str:
        mark = "FAIL" if not self.ok else "WARN" if self.warnings else "ok  "
        text = f"{mark} {self.name}: {self.detail} ({self.ms:.0f} ms)"
        return "\n".join([text, *(f"     warning: {w}" for w in self.warnings)])


def run_checks(services: Services, today: date | None = None) -> list[Check]:
    """Every check, in order; `today` (default: the local date) is what retirement dates are compared with."""
    settings = services.settings
    checks = [_timed("embedding model", lambda: (_embedding(services), ()))]
    checks.append(_timed("vector index", lambda: (_vector_index(services), ())))
    configured = settings.gemini_on_vertex or settings.gemini_api_key or settings.gemini_key_ref
    if not settings.rerank:
        checks.append(Check("Gemini (rerank)", True, "rerank is off (RERANK=false): not called", 0.0))
    elif not configured:
        checks.append(Check("Gemini (rerank)", True, "no Gemini configured: answers keep the retrieval order", 0.0))
    else:
        checks.extend(_gemini_checks(services, today or date.today()))
    return checks


def _timed(name: str, check: Callable[[], tuple[str, tuple[str, ...]]]) -> Check:
    started = time.perf_counter()
    try:
        (detail, warnings), ok = check(), True
    except Exception as exc:  # noqa: BLE001 - every failure is a finding to print, not a crash
        detail, warnings, ok = f"{type(exc).__name__}: {exc}", (), False
    return Check(name, ok, detail, (time.perf_counter() - started) * 1000, warnings)


def _embedding(services: Services) -> str:
    vector = np.asarray(services.embedder.embed_query(PROBE), dtype=np.float32)
    if vector.shape != (services.embedder.dimension,) or not np.all(np.isfinite(vector)) or not vector.any():
        raise ValueError(f"{services.embedder.model_id} returned a vector of shape {vector.shape}")
    return f"{services.embedder.model_id} answered ({vector.shape[0]} dims)"


def _vector_index(services: Services) -> str:
    # one nearest-neighbour search: reaches the index and, on GCP, compares its recorded embedding model
    vector = np.asarray(services.embedder.embed_query(PROBE), dtype=np.float32)
    hits = services.vectors.search(vector, Filters(), 1)
    return f"searched ({'1 neighbour' if hits else 'empty index'}), embedding model matches"


def probe_candidates() -> list[Candidate]:
    """The candidates the Gemini check sends: real-looking articles of one regulation."""
    meta = DocumentMeta(doc_id="doctor", title="电力供应与使用条例", effective_date="2019-03-02")
    return [
        Candidate(Chunk(f"doctor-{i}", "doctor", "article", f"第{i}条", 0, 1, 1, (), 0, len(t), t, t, meta), 1.0)
        for i, t in enumerate(PROBE_ARTICLES, 1)
    ]


def _gemini_checks(services: Services, today: date) -> list[Check]:
    settings = services.settings
    model = gemini_model(settings.gemini_model)
    reranker = services.reranker
    if model is None or not isinstance(reranker, LlmReranker):  # the settings and wiring rule both out
        return [Check("Gemini (rerank)", False, f"no Gemini reranker for {settings.gemini_model}", 0.0)]
    # the production reranker's generator, prompt and limits; no cache, so both calls reach the model
    probe = LlmReranker(
        reranker.generator,
        reranker.model_id,
        reranker.prompt,
        timeout_s=reranker.timeout_s,
        cache_size=0,
        max_candidates=reranker.max_candidates,
        text_chars=reranker.text_chars,
    )
    candidates = probe_candidates()
    scores: list[dict[str, float | None]] = []

    def call() -> tuple[str, tuple[str, ...]]:
        ranked, status = probe.rerank(PROBE, candidates, 1)
        if status != STATUS_OK:
            raise RuntimeError(f"rerank status {status!r} with model {settings.gemini_model}")
        scores.append({c.chunk.id: c.rerank_score for c in ranked})
        via = "Vertex AI" if settings.gemini_on_vertex else "the Gemini API"
        sent = settings.gemini_params.describe()
        detail = (
            f"{settings.gemini_model} answered through {via} ({settings.gemini_location}) the production request: "
            f"{sent}, JSON schema of {len(candidates)} {{index, score 1–10, reason}}"
        )
        return detail, model_warnings(model, settings.gemini_temperature, today)

    checks = [_timed("Gemini (rerank)", call)]
    if not checks[0].ok:
        return checks
    checks.append(_timed("Gemini (same scores twice)", lambda: _repeat(call, scores)))
    return checks


def _repeat(
    call: Callable[[], tuple[str, tuple[str, ...]]], scores: list[dict[str, float | None]]
) -> tuple[str, tuple[str, ...]]:
    call()
    first, second = scores
    if first == second:
        return f"two identical requests scored the {len(first)} candidates alike", ()
    differ = sorted(k for k in first if first[k] != second.get(k))
    shown = ", ".join(f"{k}: {first[k]} then {second.get(k)}" for k in differ)
    return "two identical requests", (
        f"the scores differ ({shown}): the rerank is not deterministic with these settings, so the same "
        "question can be ordered differently and the rerank cache keeps whichever answer came first",
    )


def model_warnings(model: GeminiModel, temperature: float, today: date) -> tuple[str, ...]:
    """What the model's row says a reviewer should know: an ignored temperature, a retirement near or past."""
    warnings: list[str] = []
    if model.temperature == IGNORED:
        warnings.append(
            f"{model.model_id} ignores custom temperature values ({model.sources[0]}): the rerank samples at the "
            f"model's default instead of {temperature:g}; choose a model whose page lists a temperature range "
            "(REGRAG_GEMINI_MODEL, shared/regrag/cloud_facts.py)"
        )
    elif model.temperature == UNDOCUMENTED:
        warnings.append(
            f"no page read documents whether {model.model_id} honours temperature: {temperature:g} is sent, and "
            "only the repeat check shows whether its scores hold still"
        )
    if model.retires is not None:
        if model.retires <= today and not model.retires_or_later:
            warnings.append(f"{model.model_id} retired on {model.retires.isoformat()} ({model.sources[-1]})")
        elif model.retires <= today:
            warnings.append(
                f"{model.model_id}'s earliest retirement date, {model.retires.isoformat()}, has passed: check "
                f"{model.sources[-1]} for the date now announced"
            )
        elif model.retires - today <= RETIREMENT_NOTICE:
            warnings.append(
                f"{model.model_id} retires on {model.retirement()} ({(model.retires - today).days} days): plan "
                "the change now"
            )
    return tuple(warnings)
