"""The entry points every adapter calls: Cloud Functions, the local server, the CLI and the in-process bus.

Each method decodes its trigger, runs one pipeline stage over the ports in `Services`, and encodes the
result; errors follow one policy (events: regrag.events.run_event; HTTP: regrag.api).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from regrag.domain.errors import InvalidInput, NotFound
from regrag.domain.messages import ChunksEmbedded, DocumentChunked, DocumentDeleted
from regrag.domain.models import Candidate
from regrag.events import decode_message, decode_pubsub_payload, decode_storage_event, event_key, run_event
from regrag.pipeline import compose as compose_stage
from regrag.pipeline import embed as embed_stage
from regrag.pipeline import ingest as ingest_stage
from regrag.pipeline import query as query_stage
from regrag.pipeline import upsert as upsert_stage
from regrag.pipeline.filters import parse_filters
from regrag.pipeline.rerank import rerank_candidates
from regrag.wiring import Services


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
        )

    def upsert_event(self, event: Any) -> Any:
        return run_event(
            "upsert", event_key(event), lambda: self._upsert(decode_pubsub_payload(event)[0]), self.s.failures
        )

    def upsert_payload(self, payload: dict[str, Any], attributes: dict[str, str]) -> Any:
        return run_event("upsert", str(attributes.get("doc_id", "?")), lambda: self._upsert(payload), self.s.failures)

    def _upsert(self, payload: dict[str, Any]) -> upsert_stage.UpsertResult:
        message = decode_message(payload)
        s = self.s
        if isinstance(message, DocumentDeleted):
            self.catalog.invalidate()
            return upsert_stage.delete_document(message, store=s.store, vectors=s.vectors, lexical=s.lexical)
        if not isinstance(message, ChunksEmbedded):
            raise InvalidInput(f"upsert expects ChunksEmbedded or DocumentDeleted, got {message.kind}")
        self.catalog.invalidate()
        if message.model != self.s.embedder.model_id:
            raise InvalidInput(
                f"vectors from model {message.model!r} cannot enter an index of {self.s.embedder.model_id!r}"
            )
        return upsert_stage.upsert_chunks(message, store=s.store, vectors=s.vectors, lexical=s.lexical)

    # --- HTTP stages --------------------------------------------------------------------------------------

    def query(self, body: Any) -> dict[str, Any]:
        request = query_stage.parse_query_request(body)
        return query_stage.answer_question(
            request,
            retriever=self.s.retriever,
            reranker=self.s.reranker,
            store=self.s.store,
            catalog=self.catalog,
            options=self.s.query_options,
        )

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
            relevance_floor=opts.relevance_floor,
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

    def health(self) -> dict[str, Any]:
        stats = self.s.store.stats()
        return {
            "status": "ok",
            "mode": self.s.settings.mode,
            "embedding_model": self.s.embedder.model_id,
            "documents": stats.get("documents"),
            "chunks": stats.get("chunks"),
            "rerank": "gemini" if self.s.settings.gemini_api_key and self.s.settings.rerank else "skipped",
        }

    def with_settings(self, **changes: Any) -> Regrag:
        """A copy with some settings changed (the CLI's flags); ports are shared."""
        return Regrag(replace(self.s, settings=replace(self.s.settings, **changes)))
