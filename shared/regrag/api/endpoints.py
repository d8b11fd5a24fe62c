"""What each HTTP endpoint does, transport aside: a decoded JSON body → a pipeline stage → a JSON-able dict.

The routes (regrag.api.routes), the CLI and the evaluation call these; errors are the domain's own
(InvalidInput, NotFound, …), mapped to HTTP statuses in one place (regrag.api.routes.error_response).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import TYPE_CHECKING, Any

from regrag import logs
from regrag.domain.errors import InvalidInput, NotFound
from regrag.domain.models import Filters
from regrag.ingest import reconcile as reconcile_stage
from regrag.ingest.ingest import OcrOptions
from regrag.inputs import parse
from regrag.inputs.filters import parse_filters
from regrag.ops import admin as admin_stage
from regrag.ops import feedback as feedback_stage
from regrag.ops import watches as watch_stage
from regrag.ops.alert_feed import atom_feed
from regrag.query import answer as query_stage
from regrag.query.lookups import StoreLookups
from regrag.query.question import analyse
from regrag.query.rerank import RetrievalOrderReranker, rerank_candidates
from regrag.query.retrieve import Retriever
from regrag.services import Services

if TYPE_CHECKING:
    from regrag.ops.exports.files import Export
from regrag.views import documents

log = logs.get("api")
ANSWERED_MESSAGE = "answered"  # the log line per answer that infra/monitoring.tf counts by rerank_status


def query(services: Services, body: Any) -> dict[str, Any]:
    """POST /query: the cited answer; the query is logged so that feedback can refer to it."""
    s = services
    response = query_stage.answer_question(parse.parse_query_request(body), s.read_path)
    # one line per answer, no question text: what the rerank-fallback metric and alert in infra/ count
    logs.event(
        log,
        logging.INFO,
        ANSWERED_MESSAGE,
        query_id=response["query_id"],
        rerank_status=response["rerank_status"],
        compose_status=response["compose_status"],
        abstained=response["abstained"],
        confidence=response["confidence"]["level"],
        ms=response["timings_ms"]["total"],
    )
    if s.feedback is not None:
        try:
            s.feedback.log_query(response["query_id"], feedback_stage.query_record(body, response))
        except Exception as exc:  # noqa: BLE001 - losing a log entry must not lose the answer
            logs.event(
                log,
                logging.ERROR,
                "query log write failed; feedback on this answer will be refused",
                query_id=response["query_id"],
                error=repr(exc),
            )
    return response


def rerank(services: Services, body: Any) -> dict[str, Any]:
    """POST /rerank: the named candidates reordered, with rerank_status."""
    request = parse.parse_candidates_request(body)
    candidates = documents.stored_candidates(services.store, request.candidates)
    ranked, status = rerank_candidates(
        request.question,
        candidates,
        services.reranker,
        top_n=request.top_n or services.settings.rerank_top_n,
        enabled=services.settings.rerank,
    )
    return {"candidates": [c.to_dict() for c in ranked], "rerank_status": status}


def compose(services: Services, body: Any) -> dict[str, Any]:
    """POST /compose: verbatim quotes of the named candidates, or an explicit "no matching provision"."""
    request = parse.parse_candidates_request(body)
    candidates = documents.stored_candidates(services.store, request.candidates)
    q = analyse(request.question, request.filters, services.store.list_documents)
    lookups = StoreLookups(services.store)
    answer = query_stage.compose(
        q,
        candidates,
        services.query_options,
        source_text=lookups.text,
        document_meta=lookups.meta,
        counterpart=lookups.counterpart,
    )
    return answer.to_dict()


def corpora(services: Services) -> dict[str, Any]:
    """GET /corpora: every corpus with its document and chunk counts (always fresh)."""
    services.catalog.invalidate()
    return {"corpora": services.catalog.entries()}


def library(services: Services, query: parse.DocumentsQuery) -> dict[str, Any]:
    """GET /documents?province=&title=: the library's documents with their status today, and documents in force
    by province."""
    today = dt.date.today().isoformat()
    return documents.library_view(services.store, today, query.provinces, query.title)


def document(services: Services, doc_id: str) -> dict[str, Any]:
    """GET /documents/{doc_id}."""
    return documents.document_view(services.store, doc_id)


def versions(services: Services, doc_id: str) -> dict[str, Any]:
    """GET /documents/{doc_id}/versions."""
    return documents.versions_view(services.store, doc_id)


def feedback(services: Services, body: Any) -> dict[str, Any]:
    """POST /feedback {query_id, helpful, citation?, comment?}."""
    request = parse.parse_feedback_request(body)
    if services.feedback is None:
        raise NotFound("feedback is not configured on this deployment")
    return feedback_stage.record_feedback(request, services.feedback)


def reconcile(services: Services, body: Any) -> dict[str, Any]:
    """POST {dry_run?, max_republish?}: make the index agree with the bucket (Cloud Scheduler, OIDC)."""
    request = parse.parse_reconcile_request(body)
    s = services
    s.catalog.invalidate()
    result = reconcile_stage.reconcile(
        blobs=s.blobs,
        store=s.store,
        publisher=s.publisher,
        lexical=s.lexical,
        topic_chunked=s.settings.topic_chunked,
        topic_embedded=s.settings.topic_embedded,
        max_chars=s.settings.chunk_max_chars,
        dry_run=request.dry_run,
        max_republish=request.max_republish,
        ocr=OcrOptions.from_settings(s.settings, s.ocr),
    )
    return result.to_dict()


def health(services: Services) -> dict[str, Any]:
    """GET /healthz: what was wired (not what is configured: Vertex AI mode reranks without a key), and whether the
    index is whole: `degraded` with the findings of the quick integrity check (documents not written whole,
    version links to documents that are gone, rows that failed their checksum when read); `regrag doctor` runs the
    full check and names the repair."""
    from regrag.ops.doctor import finding_line, health_findings

    stats = services.store.stats()
    problems = [f for f in health_findings(services) if f.severity == "error"]
    return {
        "status": "degraded" if problems else "ok",
        "integrity": [finding_line(f) for f in problems[:20]],
        "mode": services.settings.mode,
        "embedding_model": services.embedder.model_id,
        "documents": stats.get("documents"),
        "chunks": stats.get("chunks"),
        "rerank": "skipped" if isinstance(services.reranker, RetrievalOrderReranker) else "gemini",
        "index_version": stats.get("index_version"),
        "caches": {name: stats_of() for name, stats_of in services.caches.items()},
    }


# --- watches, alerts and exports ---------------------------------------------------------------------------


def add_watch(services: Services, body: Any) -> dict[str, Any]:
    """POST /watches {doc_id, article?, owner?} | {question, filters?, owner?}: {watch_id, created, watch, …}."""
    return watch_stage.add_watch(services, parse.parse_watch_request(body))


def watches(services: Services) -> dict[str, Any]:
    """GET /watches."""
    return watch_stage.list_watches(services)


def remove_watch(services: Services, watch_id: str) -> dict[str, Any]:
    """DELETE /watches/{watch_id}."""
    return watch_stage.remove_watch(services, watch_id)


def alerts(services: Services, query: parse.AlertsQuery, page_url: str) -> dict[str, Any]:
    """GET /alerts (JSON): {alerts: [{alert_id, watch_id, doc_id, successor_id, kind, dates, diff, created, …}]}."""
    return {"alerts": watch_stage.list_alerts(services, query, page_url)}


def alerts_atom(services: Services, query: parse.AlertsQuery, page_url: str, feed_url: str) -> bytes:
    """GET /alerts as an Atom feed."""
    return atom_feed(watch_stage.list_alerts(services, query, page_url), feed_url=feed_url)


def answer_export(services: Services, query_id: str, fmt: str, page_url: str) -> Export:
    """GET /query/{query_id}/export?format=docx|md."""
    from regrag.ops.exports import files as exports  # python-docx: only the query function ships it

    return exports.answer_export(services, query_id, fmt, page_url)


def versions_export(services: Services, doc_id: str, fmt: str, page_url: str) -> Export:
    """GET /documents/{doc_id}/versions/export?format=docx|md."""
    from regrag.ops.exports import files as exports

    return exports.versions_export(services, doc_id, fmt, page_url)


def admin_watches_check(services: Services) -> dict[str, Any]:
    """POST /admin/watches/check (after require_admin): every watch compared, every saved question asked again."""
    return watch_stage.check_all(services).to_dict()


# --- admin: a token locally, Cloud Run IAM + REGRAG_ADMIN_PRINCIPALS on GCP (ops/admin.py) -------------


def require_admin(services: Services, action: str, authorization: str | None, serverless: str | None) -> None:
    """Unauthorized/Forbidden unless the caller may run admin `action`; logs who did."""
    settings = services.settings
    caller = admin_stage.require_admin(
        settings.mode, settings.admin_token, settings.admin_principal_emails, authorization, serverless
    )
    logs.event(admin_stage.log, logging.INFO, "admin request", action=action, caller=caller)


def active_prompts(services: Services) -> dict[str, str]:
    return admin_stage.active_prompts(
        services.reranker, hyde=services.retriever.hyde, questions=services.questions_indexer
    )


def admin_prompts(services: Services) -> dict[str, Any]:
    """GET /admin/prompts (after require_admin)."""
    return {"prompts": admin_stage.prompt_versions(), "active": active_prompts(services)}


def admin_index(services: Services) -> dict[str, Any]:
    """GET /admin/index (after require_admin)."""
    return admin_stage.index_info(services.store, services.embedder)


def admin_eval(services: Services, body: Any) -> dict[str, Any]:
    """POST /admin/eval {questions, k?} (after require_admin): question files and reports live in
    `Services.reports` (locally the bucket folder; on GCP the state bucket, never the uploads bucket whose new
    objects trigger ingest)."""
    from regrag.ops.evaluation import context as evaluation_context
    from regrag.ops.evaluation import evaluate

    request = parse.parse_eval_request(body)
    return admin_stage.run_scheduled_eval(
        request.questions,
        blobs=services.reports if services.reports is not None else services.blobs,
        evaluate=lambda questions: evaluate(services, questions, k=request.k),
        context=evaluation_context(services),
    )


def admin_audit(services: Services) -> dict[str, Any]:
    """GET /admin/audit (after require_admin): every document whose metadata ingest corrected or doubts."""
    return {"documents": documents.metadata_audit(services.store)}


def retrieve_relevant_chunks(
    retriever: Retriever, query_text: str, top_k: int = 12, filters: Filters | dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Retrieval alone (the Python API): [{id, chunk_text, source_document_name, score, metadata}], best first."""
    if not isinstance(query_text, str) or not query_text.strip():
        raise InvalidInput("query_text must be a non-empty string")
    parsed = filters if isinstance(filters, Filters) else parse_filters(filters)
    result = retriever.retrieve(query_text.strip(), parsed, top_k)
    out = []
    for cand in result.candidates:
        data = cand.to_dict()
        out.append(
            {
                "id": data["id"],
                "chunk_text": data["text"],
                "source_document_name": cand.chunk.meta.title,
                "score": data["score"],
                "metadata": {
                    "doc_id": data["doc_id"],
                    "article": data["article"],
                    "corpus": data["corpus"],
                    **data["metadata"],
                },
            }
        )
    return out


# --- the citation check ------------------------------------------------------------------------------------


def _check_limits(services: Services) -> Any:
    from regrag.check.run import CheckLimits

    s = services.settings
    return CheckLimits(max_chars=s.check_max_chars, max_citations=s.check_max_citations)


def check(services: Services, body: Any) -> dict[str, Any]:
    """POST /check {text, as_of?}: every citation of the text checked against the law in force."""
    from regrag.check.run import check_text

    request = parse.parse_check_request(body)
    assert request.text is not None
    report = check_text(
        request.text, services.store, lexical=services.lexical, as_of=request.as_of, limits=_check_limits(services)
    )
    report["document"] = {"name": None, "format": "text", "chars": len(request.text)}
    _log_check(report)
    return report


def check_upload(services: Services, request: parse.CheckRequest) -> dict[str, Any]:
    """POST /check with an uploaded .docx / .pdf / .md / .txt: its text is extracted first and returned with the
    report (the citations' offsets are offsets in that text)."""
    from regrag.check.run import check_text, read_document

    assert request.name is not None and request.data is not None
    text, fmt = read_document(request.name, request.data)
    report = check_text(
        text, services.store, lexical=services.lexical, as_of=request.as_of, limits=_check_limits(services)
    )
    report["document"] = {"name": request.name, "format": fmt, "chars": len(text), "text": text}
    _log_check(report)
    return report


def _log_check(report: dict[str, Any]) -> None:
    # counts only: a lawyer's memo is confidential
    summary = report["summary"]
    logs.event(log, logging.INFO, "citations checked", citations=summary["citations"], problems=summary["problems"])
