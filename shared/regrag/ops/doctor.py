"""`regrag doctor`: do the configured models and index answer, here and now? Run before traffic (deploy.sh runs
it before deploying) and after any change of model, region or index.

A retired Gemini model does not fail a query: every rerank falls back to the retrieval order and answers keep
coming, so nobody notices. An embedding model of another dimension or family than the index's finds garbage
neighbours without an error. Each check here makes the smallest real call that would show it and reports
ok / FAIL with the reason and the time taken.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from regrag.domain.models import Chunk, DocumentMeta, Filters
from regrag.domain.results import Candidate
from regrag.query.rerank import STATUS_OK
from regrag.services import Services

PROBE = "供电企业因计划检修需要停电的，应当提前几天通知用户？"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    ms: float

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name}: {self.detail} ({self.ms:.0f} ms)"


def run_checks(services: Services) -> list[Check]:
    settings = services.settings
    checks = [_timed("embedding model", lambda: _embedding(services))]
    checks.append(_timed("vector index", lambda: _vector_index(services)))
    configured = settings.gemini_on_vertex or settings.gemini_api_key or settings.gemini_key_ref
    if not settings.rerank:
        checks.append(Check("Gemini (rerank)", True, "rerank is off (RERANK=false): not called", 0.0))
    elif not configured:
        checks.append(Check("Gemini (rerank)", True, "no Gemini configured: answers keep the retrieval order", 0.0))
    else:
        checks.append(_timed("Gemini (rerank)", lambda: _gemini(services)))
    return checks


def _timed(name: str, check: Callable[[], str]) -> Check:
    started = time.perf_counter()
    try:
        detail, ok = check(), True
    except Exception as exc:  # noqa: BLE001 - every failure is a finding to print, not a crash
        detail, ok = f"{type(exc).__name__}: {exc}", False
    return Check(name, ok, detail, (time.perf_counter() - started) * 1000)


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


def _gemini(services: Services) -> str:
    meta = DocumentMeta(doc_id="doctor", title="电力供应与使用条例", effective_date="2019-03-02")
    texts = ["供电企业应当提前7天通知用户。", "用户应当安全用电。"]
    candidates = [
        Candidate(Chunk(f"doctor-{i}", "doctor", "article", f"第{i}条", 0, 1, 1, (), 0, len(t), t, t, meta), 1.0)
        for i, t in enumerate(texts, 1)
    ]
    _, status = services.reranker.rerank(PROBE, candidates, 1)
    if status != STATUS_OK:
        raise RuntimeError(f"rerank status {status!r} with model {services.settings.gemini_model}")
    via = "Vertex AI" if services.settings.gemini_on_vertex else "the Gemini API"
    return f"{services.settings.gemini_model} answered through {via} ({services.settings.gemini_location})"
