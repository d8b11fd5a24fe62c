"""What each HTTP endpoint does, transport aside: a decoded JSON body → a pipeline stage → a JSON-able dict.

The routes (regrag.api.routes), the CLI and the evaluation call these; errors are the domain's own
(InvalidInput, NotFound, …), mapped to HTTP statuses in one place (regrag.api.routes.error_response).
"""

from __future__ import annotations

import logging
from typing import Any

from regrag import logs
from regrag.api import requests
from regrag.domain.errors import NotFound
from regrag.entrypoints import handlers
from regrag.ingest import reconcile as reconcile_stage
from regrag.ops import admin as admin_stage
from regrag.ops import feedback as feedback_stage
from regrag.query import answer as query_stage
from regrag.query import compose as compose_stage
from regrag.query.rerank import RetrievalOrderReranker, rerank_candidates
from regrag.services import Services
from regrag.views import documents

log = logs.get("api")
ANSWERED_MESSAGE = "answered"  # the log line per answer that infra/monitoring.tf counts by rerank_status


def query(services: Services, body: Any) -> dict[str, Any]:
    """POST /query: the cited answer; the query is logged so that feedback can refer to it."""
    s = services
    response = query_stage.answer_question(
        requests.parse_query_request(body),
        retriever=s.retriever,
        reranker=s.remote_reranker or s.reranker,
        store=s.store,
        catalog=s.catalog,
        options=s.query_options,
        composer=s.composer,
    )
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
    request = requests.parse_candidates_request(body)
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
    request = requests.parse_candidates_request(body)
    candidates = documents.stored_candidates(services.store, request.candidates)
    opts = services.query_options
    lookups = query_stage.StoreLookups(services.store)
    answer = compose_stage.compose_answer(
        request.question,
        candidates,
        request.filters,
        source_text=lookups.text,
        top_n=opts.compose_top_n,
        max_bullets=opts.max_bullets,
        floor=opts.floor,
        document_meta=lookups.meta,
        counterpart=lookups.counterpart,
    )
    return answer.to_dict()


def corpora(services: Services) -> dict[str, Any]:
    """GET /corpora: every corpus with its document and chunk counts (always fresh)."""
    services.catalog.invalidate()
    return {"corpora": services.catalog.entries()}


def document(services: Services, doc_id: str) -> dict[str, Any]:
    """GET /documents/{doc_id}."""
    return documents.document_view(services.store, doc_id)


def versions(services: Services, doc_id: str) -> dict[str, Any]:
    """GET /documents/{doc_id}/versions."""
    return documents.versions_view(services.store, doc_id)


def feedback(services: Services, body: Any) -> dict[str, Any]:
    """POST /feedback {query_id, helpful, citation?, comment?}."""
    request = requests.parse_feedback_request(body)
    if services.feedback is None:
        raise NotFound("feedback is not configured on this deployment")
    return feedback_stage.record_feedback(request, services.feedback)


def reconcile(services: Services, body: Any) -> dict[str, Any]:
    """POST {dry_run?, max_republish?}: make the index agree with the bucket (Cloud Scheduler, OIDC)."""
    request = requests.parse_reconcile_request(body)
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
        ocr=handlers.ocr_options(s),
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


def context(services: Services) -> dict[str, Any]:
    """What a result depends on: index version, embedding model and active prompt versions."""
    return {
        "index_version": services.store.stats().get("index_version"),
        "embedding_model": services.embedder.model_id,
        "prompts": active_prompts(services),
    }


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
    from regrag.ops.evaluation import evaluate

    request = requests.parse_eval_request(body)
    return admin_stage.run_scheduled_eval(
        request.questions,
        blobs=services.reports if services.reports is not None else services.blobs,
        evaluate=lambda questions: evaluate(services, questions, k=request.k),
        context=context(services),
    )


def admin_audit(services: Services) -> dict[str, Any]:
    """GET /admin/audit (after require_admin): every document whose dates the text corrected or contradicted."""
    return {"documents": documents.date_audit(services.store)}
