"""`regrag doctor`: do the configured models and index answer, here and now, and is the index whole? Run before
traffic (deploy.sh runs it before deploying), after any change of model, region or index, and after a crash.

A retired Gemini model does not fail a query: every rerank falls back to the retrieval order and answers keep
coming, so nobody notices. An embedding model of another dimension or family than the index's finds garbage
neighbours without an error. A model that ignores the temperature scores the same question differently from
one call to the next, and the rerank cache keeps whichever answer came first. Each check here makes the
smallest real call that would show it and reports ok / WARN / FAIL with the reason and the time taken; only
FAIL makes the command exit 1.

The Gemini check sends the production request: the reranker's own generator (model, temperature, thinking
level as `Settings.gemini_params` gives them), prompt and response schema, through a copy of the reranker
without a cache, twice, and compares the two sets of scores.

A half-written index does not fail a query either: a chunk without its vector is never found, a version whose
successor is gone is hidden, a damaged vector finds the wrong neighbours. The integrity check asks every store
that can check itself (ports.IntegrityCheck) and compares the index with the bucket; each finding is one FAIL
line naming its document or file and the command that repairs it (`regrag repair`, which re-reads the named
documents from the bucket, or rebuilds the index from it).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import numpy as np

from regrag.cloud_facts import IGNORED, UNDOCUMENTED, GeminiModel, gemini_model
from regrag.domain import integrity as I
from regrag.domain.errors import StorageError
from regrag.domain.integrity import Finding
from regrag.domain.models import Chunk, DocumentMeta, Filters
from regrag.domain.results import Candidate
from regrag.domain.watches import QUESTION
from regrag.ingest import alerts
from regrag.ingest.ingest import derive_doc_id
from regrag.ingest.reconcile import is_document_object
from regrag.ports import IntegrityCheck, Versioned
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
    # the integrity check first: the search below loads (and would silently rebuild) a damaged saved snapshot
    started = time.perf_counter()
    findings = integrity_findings(services)
    integrity = finding_checks(findings, (time.perf_counter() - started) * 1000, services)
    checks = [_timed("embedding model", lambda: (_embedding(services), ()))]
    checks.append(_timed("vector index", lambda: (_vector_index(services), ())))
    checks += integrity
    if services.watches is not None:
        checks.append(_timed("watches", lambda: _watches_behind(services)))
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


def _watches_behind(services: Services) -> tuple[str, tuple[str, ...]]:
    """Document and article watches not told of a change the index holds: the upsert stage tells them after the
    document's transaction commits, so a process killed in between leaves them behind (nothing is lost: the
    check of every watch compares them again). Saved questions are not asked again here (that needs the model)."""
    assert services.watches is not None
    watches = services.watches.list_watches()
    texts = alerts.VersionTexts(services.store)
    behind = [
        w.watch_id
        for w in watches
        if w.kind != QUESTION and alerts.compare_version(w, services.store, texts)[0] is not None
    ]
    detail = f"{len(watches)} watches, {len(watches) - len(behind)} up to date with the index"
    if not behind:
        return detail, ()
    named = ", ".join(behind[:5]) + (" …" if len(behind) > 5 else "")
    return detail, (f"{len(behind)} not yet told of a change the index holds ({named}): run `regrag watch check`",)


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


# --- the index's integrity ------------------------------------------------------------------------------------


def integrity_findings(services: Services, deep: bool = True) -> list[Finding]:
    """Every finding of the stores that check themselves, and of the index against the bucket (`deep`: every row
    and file; otherwise what a few indexed queries tell, for GET /healthz). A store that cannot even be read is
    a finding too."""
    checkers: list[IntegrityCheck] = list(services.integrity)
    if not checkers and isinstance(services.store, IntegrityCheck):
        checkers.append(services.store)
    findings: list[Finding] = []
    for checker in checkers:
        try:
            findings += checker.check_integrity(deep)
        except StorageError as exc:
            findings.append(Finding("damaged_file", exc.path, str(exc), I.REBUILD if exc.kind == "damaged" else I.NONE))
    if deep:
        try:
            findings += bucket_findings(services)
        except StorageError as exc:
            findings.append(Finding("damaged_file", exc.path, str(exc), I.REBUILD if exc.kind == "damaged" else I.NONE))
    return findings


_RETRIED = ("transient", "dead_lettered", "unavailable")  # reasons a later run may not meet again


def bucket_findings(services: Services) -> list[Finding]:
    """The index against the bucket: documents whose object is gone (a delete that did not finish), and objects
    the index lacks or holds an older version of (an ingest that did not finish, a dead letter; one that failed
    for good is only a warning: failures.jsonl says why)."""
    objects = {b.name: b.generation for b in services.blobs.list() if is_document_object(b.name)}
    documents = services.store.list_documents()
    findings = []
    for meta in documents:
        if meta.source_name and meta.source_name not in objects:
            detail = f"its file {meta.source_name} is no longer in the bucket (a delete that did not finish)"
            findings.append(Finding("orphan_document", meta.doc_id, detail, I.DELETE, (meta.doc_id,)))
    indexed = {m.source_name: m for m in documents if m.source_name}
    # refused for good (a bad file, an invalid claim): recorded by object name or by document id
    refused = {str(f.get("key")) for f in services.failures.list() if f.get("reason") not in _RETRIED}
    for name, generation in sorted(objects.items()):
        stored = indexed.get(name)
        if stored is not None and stored.generation >= generation:
            continue
        failed = name in refused or (stored.doc_id if stored else derive_doc_id(name)) in refused
        where = "not in the index" if stored is None else f"newer than the version the index holds ({stored.doc_id})"
        kind = "missing_document" if stored is None else "outdated_document"
        if failed:
            detail = f"in the bucket but {where}: its ingest failed (failures.jsonl says why)"
            findings.append(Finding(kind, name, detail, I.REINGEST, severity=I.WARNING))
        else:
            detail = f"in the bucket but {where} (an ingest that did not finish, or a dead letter)"
            findings.append(Finding(kind, name, detail, I.REINGEST))
    return findings


def repair_command(finding: Finding) -> str:
    """The command that repairs a finding (none for a warning that needs nothing)."""
    if finding.remedy == I.NONE:
        return ""
    if finding.doc_ids and finding.remedy in (I.REINGEST, I.DELETE):
        return "regrag repair " + " ".join(finding.doc_ids)
    return "regrag repair"


def finding_line(finding: Finding) -> str:
    command = repair_command(finding)
    return f"{finding.kind}: {finding.subject}: {finding.detail}" + (f" → {command}" if command else "")


def finding_checks(findings: Sequence[Finding], ms: float, services: Services) -> list[Check]:
    """One Check per finding (FAIL for errors, ok for warnings), or one ok line when the index is whole."""
    if not findings:
        try:
            stats = services.store.stats()
            what = f"{stats.get('documents')} documents, {stats.get('chunks')} chunks"
        except StorageError as exc:
            return [Check("index integrity", False, str(exc), ms)]
        return [Check("index integrity", True, f"whole ({what}: written whole, checksums match)", ms)]
    return [Check("index integrity", f.severity == I.WARNING, finding_line(f), ms) for f in findings]


_HEALTH_TTL_S = 60.0  # a store without a write counter (GCP) is checked again after this long
_health: weakref.WeakKeyDictionary[Any, tuple[Any, list[Finding]]] = weakref.WeakKeyDictionary()
_health_lock = threading.Lock()


def health_findings(services: Services) -> list[Finding]:
    """The quick integrity check (no row or file read in full) for GET /healthz: run again when the store has
    changed (its write counter) or rows failed their checksum on a read since, else the last result."""
    store = services.store
    version = store.index_version() if isinstance(store, Versioned) else int(time.monotonic() // _HEALTH_TTL_S)
    key = (version, len(getattr(store, "damage_seen", ())))
    with _health_lock:
        cached = _health.get(store)
    if cached is not None and cached[0] == key:
        return cached[1]
    findings = integrity_findings(services, deep=False)
    with _health_lock:
        _health[store] = (key, findings)
    return findings
