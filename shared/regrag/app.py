"""The entry points every adapter calls: Cloud Functions, the local server, the CLI and the in-process bus.

Each method decodes its trigger, runs one pipeline stage over the ports in `Services`, and encodes the
result; errors follow one policy (events: regrag.events.run_event; HTTP: regrag.api).
"""

from __future__ import annotations

import logging
from typing import Any

from regrag import logs
from regrag.domain.errors import InvalidInput, NotFound
from regrag.domain.messages import ChunksEmbedded, DocumentChunked, DocumentDeleted
from regrag.domain.models import Candidate
from regrag.events import (
    StorageEvent,
    decode_message,
    decode_pubsub_payload,
    decode_storage_event,
    decode_storage_notification,
    event_key,
    run_event,
)
from regrag.pipeline import admin as admin_stage
from regrag.pipeline import compose as compose_stage
from regrag.pipeline import embed as embed_stage
from regrag.pipeline import feedback as feedback_stage
from regrag.pipeline import ingest as ingest_stage
from regrag.pipeline import query as query_stage
from regrag.pipeline import reconcile as reconcile_stage
from regrag.pipeline import upsert as upsert_stage
from regrag.pipeline.filters import parse_filters
from regrag.pipeline.rerank import RetrievalOrderReranker, rerank_candidates
from regrag.text.legal import find_cross_references
from regrag.wiring import Services

log = logs.get("app")


class Regrag:
    def __init__(self, services: Services) -> None:
        self.s = services
        self.catalog = query_stage.CorpusCatalog(services.store)

    # --- event stages -------------------------------------------------------------------------------------

    def ingest_event(self, event: Any) -> ingest_stage.IngestResult | None:
        """GCS object event → DocumentChunked (finalized) or DocumentDeleted (deleted/archived)."""

        def handle() -> ingest_stage.IngestResult:
            ev = decode_storage_event(event)
            if ev.is_removal:
                return ingest_stage.delete_object(
                    ev.name, ev.generation, publisher=self.s.publisher, topic=self.s.settings.topic_embedded
                )
            return self.ingest_name(ev.name)

        return run_event("ingest", event_key(event), handle, self.s.failures)

    def ingest_name(self, name: str) -> ingest_stage.IngestResult:
        return ingest_stage.ingest_object(
            name,
            blobs=self.s.blobs,
            publisher=self.s.publisher,
            topic=self.s.settings.topic_chunked,
            max_chars=self.s.settings.chunk_max_chars,
        )

    def embed_event(self, event: Any) -> Any:
        return run_event("embed", event_key(event), lambda: self._embed(*decode_pubsub_payload(event)), self.s.failures)

    def embed_payload(self, payload: dict[str, Any], attributes: dict[str, str]) -> Any:
        return run_event(
            "embed", str(attributes.get("doc_id", "?")), lambda: self._embed(payload, attributes), self.s.failures
        )

    def _embed(self, payload: dict[str, Any], attributes: dict[str, str]) -> Any:
        message = decode_message(payload)
        if isinstance(message, DocumentDeleted):  # deletes need no vectors: pass them on
            self.s.publisher.publish(self.s.settings.topic_embedded, payload, attributes)
            return None
        if not isinstance(message, DocumentChunked):
            raise InvalidInput(f"embed expects DocumentChunked, got {message.kind}")
        return embed_stage.embed_chunks(
            message,
            embedder=self.s.embedder,
            publisher=self.s.publisher,
            topic=self.s.settings.topic_embedded,
            batch_size=self.s.settings.embed_batch_size,
            questions=self.s.questions_indexer,
        )

    def upsert_event(self, event: Any) -> Any:
        def handle() -> Any:
            payload, attributes = decode_pubsub_payload(event)
            notification = decode_storage_notification(payload, attributes)
            if notification is not None:  # GCP: the bucket's delete notifications share the embedded topic
                return self._remove_object(notification)
            return self._upsert(payload)

        return run_event("upsert", event_key(event), handle, self.s.failures)

    def _remove_object(self, event: StorageEvent) -> upsert_stage.UpsertResult | None:
        """An object deleted or archived in the bucket (Cloud Storage notification, infra/storage.tf)."""
        if not event.is_removal:
            raise InvalidInput(f"upsert handles object removals only; got {event.type}")
        if event.overwritten_by is not None or ingest_stage.is_sidecar(event.name):
            return None  # an overwrite is re-ingested by its own finalize event; a sidecar is not a document
        message = DocumentDeleted(ingest_stage.derive_doc_id(event.name), event.name, event.generation, "")
        self.catalog.invalidate()
        s = self.s
        return upsert_stage.delete_document(
            message, store=s.store, vectors=s.vectors, lexical=s.lexical, questions=s.question_index
        )

    def upsert_payload(self, payload: dict[str, Any], attributes: dict[str, str]) -> Any:
        return run_event("upsert", str(attributes.get("doc_id", "?")), lambda: self._upsert(payload), self.s.failures)

    def _upsert(self, payload: dict[str, Any]) -> upsert_stage.UpsertResult:
        message = decode_message(payload)
        s = self.s
        if isinstance(message, DocumentDeleted):
            self.catalog.invalidate()
            return upsert_stage.delete_document(
                message, store=s.store, vectors=s.vectors, lexical=s.lexical, questions=s.question_index
            )
        if not isinstance(message, ChunksEmbedded):
            raise InvalidInput(f"upsert expects ChunksEmbedded or DocumentDeleted, got {message.kind}")
        self.catalog.invalidate()
        if message.model != self.s.embedder.model_id:
            raise InvalidInput(
                f"vectors from model {message.model!r} cannot enter an index of {self.s.embedder.model_id!r}"
            )
        return upsert_stage.upsert_chunks(
            message, store=s.store, vectors=s.vectors, lexical=s.lexical, questions=s.question_index
        )

    # --- HTTP stages --------------------------------------------------------------------------------------

    def query(self, body: Any) -> dict[str, Any]:
        request = query_stage.parse_query_request(body)
        response = query_stage.answer_question(
            request,
            retriever=self.s.retriever,
            reranker=self.s.reranker,
            store=self.s.store,
            catalog=self.catalog,
            options=self.s.query_options,
        )
        if self.s.feedback is not None:
            try:
                self.s.feedback.log_query(response["query_id"], feedback_stage.query_record(body, response))
            except Exception as exc:  # noqa: BLE001 - losing a log entry must not lose the answer
                logs.event(
                    log,
                    logging.ERROR,
                    "query log write failed; feedback on this answer will be refused",
                    query_id=response["query_id"],
                    error=repr(exc),
                )
        return response

    def retrieve(self, query_text: str, top_k: int = 12, filters: Any = None) -> list[dict[str, Any]]:
        return query_stage.retrieve_relevant_chunks(self.s.retriever, query_text, top_k, filters)

    def _candidates_from(self, body: dict[str, Any]) -> list[Candidate]:
        """Candidates named by id in a request; texts always come from the store, never from the client."""
        raw = body.get("candidates")
        if not isinstance(raw, list) or not raw:
            raise InvalidInput("candidates must be a non-empty list of {id, score?}")
        ids, scores = [], []
        for item in raw:
            cid = item.get("id") if isinstance(item, dict) else item
            if not isinstance(cid, str) or not cid:
                raise InvalidInput("each candidate needs a string 'id'")
            ids.append(cid)
            score = item.get("score", 0.0) if isinstance(item, dict) else 0.0
            scores.append(float(score) if isinstance(score, int | float) else 0.0)
        chunks = {c.id: c for c in self.s.store.get_chunks(ids)}
        missing = [cid for cid in ids if cid not in chunks]
        if missing:
            raise NotFound(f"unknown candidate id(s): {missing[:5]}")
        return [Candidate(chunks[cid], score) for cid, score in zip(ids, scores, strict=True)]

    def rerank(self, body: Any) -> dict[str, Any]:
        question = query_stage.parse_question(body)
        candidates = self._candidates_from(body)
        top_n = query_stage.parse_top_k(body, "top_n") or self.s.settings.rerank_top_n
        ranked, status = rerank_candidates(
            question, candidates, self.s.reranker, top_n=top_n, enabled=self.s.settings.rerank
        )
        return {"candidates": [c.to_dict() for c in ranked], "rerank_status": status}

    def compose(self, body: Any) -> dict[str, Any]:
        question = query_stage.parse_question(body)
        candidates = self._candidates_from(body)
        filters = parse_filters(body.get("filters"))
        opts = self.s.query_options
        source_text, document_meta = query_stage.store_lookups(self.s.store)
        answer = compose_stage.compose_answer(
            question,
            candidates,
            filters,
            source_text=source_text,
            top_n=opts.compose_top_n,
            max_bullets=opts.max_bullets,
            floor=opts.floor,
            document_meta=document_meta,
        )
        return answer.to_dict()

    def corpora(self, _: Any = None) -> dict[str, Any]:
        """GET /corpora: every corpus with its document and chunk counts."""
        self.catalog.invalidate()
        return {"corpora": self.catalog.entries()}

    def document(self, doc_id: str) -> dict[str, Any]:
        """GET /documents/{doc_id}: the stored text, metadata and every chunk's anchor (article, offsets)."""
        found = self.s.store.get_document(doc_id)
        if found is None:
            raise NotFound(f"no document {doc_id!r}")
        meta, text = found
        chunks = self.s.store.document_chunks(doc_id)
        first_part = {c.article: c.id for c in chunks if c.kind == "article" and c.part == 0}
        return {
            "doc_id": doc_id,
            "metadata": {k: v for k, v in meta.to_dict().items() if k != "provenance"},
            "provenance": meta.provenance,
            "text": text,
            "anchors": [
                {
                    "id": c.id,
                    "kind": c.kind,
                    "article": c.article,
                    "part": c.part,
                    "parts": c.parts,
                    "heading_path": list(c.heading_path),
                    "start": c.start,
                    "end": c.end,
                    # "依照本法第二十条": offsets in `text` and the chunk that article starts in
                    "references": [
                        {
                            "article": r.label,
                            "start": c.start + r.start,
                            "end": c.start + r.end,
                            "target": first_part[r.label],
                        }
                        for r in find_cross_references(c.text)
                        if r.label in first_part and r.label != c.article
                    ],
                }
                for c in chunks
            ],
        }

    def versions(self, doc_id: str) -> dict[str, Any]:
        """GET /documents/{doc_id}/versions: the supersedes chain, oldest first, with validity dates."""
        found = self.s.store.get_document(doc_id)
        if found is None:
            raise NotFound(f"no document {doc_id!r}")
        chain = [found[0]]
        seen = {doc_id}
        while chain[0].supersedes and chain[0].supersedes not in seen:
            older = self.s.store.get_document(chain[0].supersedes)
            if older is None:
                break
            seen.add(older[0].doc_id)
            chain.insert(0, older[0])
        while chain[-1].superseded_by and chain[-1].superseded_by not in seen:
            newer = self.s.store.get_document(chain[-1].superseded_by)
            if newer is None:
                break
            seen.add(newer[0].doc_id)
            chain.append(newer[0])
        return {
            "doc_id": doc_id,
            "versions": [
                {
                    "doc_id": m.doc_id,
                    "title": m.title,
                    "effective_from": m.effective_date,
                    "effective_to": m.effective_to,
                    "supersedes": m.supersedes,
                    "superseded_by": m.superseded_by,
                    "corpus": m.corpus,
                }
                for m in chain
            ],
        }

    def feedback(self, body: Any) -> dict[str, Any]:
        """POST /feedback {query_id, helpful, citation?, comment?}."""
        if self.s.feedback is None:
            raise NotFound("feedback is not configured on this deployment")
        return feedback_stage.record_feedback(body, self.s.feedback)

    def export_feedback(self) -> list[dict[str, Any]]:
        if self.s.feedback is None:
            return []
        return feedback_stage.export_questions(self.s.feedback)

    # --- admin (token locally, IAM on GCP) ------------------------------------------------------------------

    def _admin(self, action: str, authorization: str | None, serverless_authorization: str | None) -> None:
        settings = self.s.settings
        caller = admin_stage.require_admin(
            settings.mode,
            settings.admin_token,
            settings.admin_principal_emails,
            authorization,
            serverless_authorization,
        )
        logs.event(admin_stage.log, logging.INFO, "admin request", action=action, caller=caller)

    def admin_prompts(self, authorization: str | None, serverless_authorization: str | None = None) -> dict[str, Any]:
        self._admin("prompts", authorization, serverless_authorization)
        return {"prompts": admin_stage.prompt_versions(), "active": self.active_prompts()}

    def active_prompts(self) -> dict[str, str]:
        return admin_stage.active_prompts(
            self.s.reranker, hyde=self.s.retriever.hyde, questions=self.s.questions_indexer
        )

    def admin_index(self, authorization: str | None, serverless_authorization: str | None = None) -> dict[str, Any]:
        self._admin("index", authorization, serverless_authorization)
        return admin_stage.index_info(self.s.store, self.s.embedder)

    def admin_eval(
        self, body: Any, authorization: str | None, serverless_authorization: str | None = None
    ) -> dict[str, Any]:
        """POST /admin/eval {questions, k?}: question files and reports live in `Services.reports` (locally the
        bucket folder; on GCP the state bucket, never the uploads bucket whose new objects trigger ingest)."""
        self._admin("eval", authorization, serverless_authorization)
        from regrag.evaluation import evaluate

        k = body.get("k", 10) if isinstance(body, dict) else 10
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 50:
            raise InvalidInput("k must be an integer between 1 and 50")
        return admin_stage.run_scheduled_eval(
            body,
            blobs=self.s.reports if self.s.reports is not None else self.s.blobs,
            evaluate=lambda questions: evaluate(self, questions, k=k),
            context=self.context(),
        )

    def context(self) -> dict[str, Any]:
        """What a result depends on: index version, embedding model and active prompt versions."""
        stats = self.s.store.stats()
        return {
            "index_version": stats.get("index_version"),
            "embedding_model": self.s.embedder.model_id,
            "prompts": self.active_prompts(),
        }

    def reconcile(self, body: Any) -> dict[str, Any]:
        """POST {dry_run?, max_republish?}: make the index agree with the bucket (Cloud Scheduler, OIDC)."""
        if not isinstance(body, dict):
            raise InvalidInput("request body must be a JSON object")
        dry_run = body.get("dry_run", False)
        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be true or false")
        limit = body.get("max_republish", reconcile_stage.DEFAULT_MAX_REPUBLISH)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= 10_000:
            raise InvalidInput("max_republish must be an integer between 0 and 10000")
        self.catalog.invalidate()
        s = self.s
        result = reconcile_stage.reconcile(
            blobs=s.blobs,
            store=s.store,
            publisher=s.publisher,
            lexical=s.lexical,
            topic_chunked=s.settings.topic_chunked,
            topic_embedded=s.settings.topic_embedded,
            max_chars=s.settings.chunk_max_chars,
            dry_run=dry_run,
            max_republish=limit,
        )
        return result.to_dict()

    def health(self) -> dict[str, Any]:
        stats = self.s.store.stats()
        return {
            "status": "ok",
            "mode": self.s.settings.mode,
            "embedding_model": self.s.embedder.model_id,
            "documents": stats.get("documents"),
            "chunks": stats.get("chunks"),
            # what was wired, not what is configured: Vertex AI mode reranks without a key
            "rerank": "skipped" if isinstance(self.s.reranker, RetrievalOrderReranker) else "gemini",
            "index_version": stats.get("index_version"),
            "caches": self.cache_stats(),
        }

    def cache_stats(self) -> dict[str, Any]:
        """Hit/miss counters of the query-embedding and rerank caches (and the document vector cache)."""
        out: dict[str, Any] = {}
        query_cache = getattr(self.s.embedder, "query_cache", None)
        if query_cache is not None:
            out["query_embedding"] = query_cache.stats()
        rerank_cache = getattr(self.s.reranker, "cache", None)
        if rerank_cache is not None and hasattr(rerank_cache, "stats"):
            out["rerank"] = rerank_cache.stats()
        if self.s.retriever.hyde is not None:
            out["hyde"] = self.s.retriever.hyde.cache.stats()
        vector_cache = getattr(getattr(self.s.embedder, "inner", None), "cache", None)
        if vector_cache is not None and hasattr(vector_cache, "hits"):
            out["document_vectors"] = {"hits": vector_cache.hits, "misses": vector_cache.misses}
        return out
