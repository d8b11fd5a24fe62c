"""GCP mode: Cloud Storage, Pub/Sub, Vertex AI embeddings and Vector Search, Secret Manager, Gemini, Document AI.

The state bucket (under REGRAG_STATE_PREFIX) holds the chunk map, failures, the lexicon, the query log and
feedback, watches and alerts, and the eval question files and reports (`Services.reports`).
"""

from __future__ import annotations

from regrag import logs
from regrag.config import ConfigError, Settings
from regrag.query.embedding_cache import QueryEmbeddingCache
from regrag.query.retrieve import lexical_texts
from regrag.services import Services
from regrag.views.catalog import CorpusCatalog
from regrag.wiring import models


def gemini_api_key(settings: Settings) -> str | None:
    """GEMINI_API_KEY when set (deploy.sh mounts the secret with --set-secrets); else, when reranking or an aid
    needs the key and Vertex AI mode is off, the secret named by REGRAG_GEMINI_KEY_REF read from Secret
    Manager: one call per cold start."""
    needs_key = settings.rerank or settings.hyde
    if settings.gemini_api_key or not settings.gemini_key_ref or not needs_key or settings.gemini_on_vertex:
        return settings.gemini_api_key
    from regrag.adapters.gcp.clients import Endpoint
    from regrag.adapters.gcp.secrets import SecretManagerStore

    host = settings.key_store_emulator_host
    secrets = SecretManagerStore(str(settings.gcp_project), endpoint=Endpoint(host, True) if host else None)
    return secrets.get(settings.gemini_key_ref)


def build_gcp_services(settings: Settings) -> Services:
    """The GCP adapter set. Building opens no connection and imports no Google library except to read the
    Gemini key from Secret Manager (gemini_api_key); each adapter imports its client on first use, so a
    function loads only the clients it uses (ingest never imports aiplatform)."""
    from regrag.adapters.gcp.blobstore import GcsBlobStore, PrefixedBlobStore
    from regrag.adapters.gcp.bus import PubSubPublisher
    from regrag.adapters.gcp.chunk_store import GcsChunkStore
    from regrag.adapters.gcp.failures import GcsFailureRecorder
    from regrag.adapters.gcp.feedback import GcsFeedbackStore
    from regrag.adapters.gcp.index_metadata import IndexMetadata
    from regrag.adapters.gcp.lexicon import GcsLexicon
    from regrag.adapters.gcp.search_index import VertexLexicalIndex, VertexVectorIndex
    from regrag.adapters.gcp.staging import GcsPartStaging
    from regrag.adapters.gcp.watches import GcsWatchStore

    if settings.questions_index:
        # Vector Search would need a second index or datapoints keyed by question: refused, never ignored
        raise ConfigError("REGRAG_QUESTIONS_INDEX is supported in local mode only: GCP mode has no question index yet")
    logs.configure(settings.log_level, log_questions=settings.log_questions)
    project, prefix = str(settings.gcp_project), settings.state_prefix
    docs = GcsBlobStore(str(settings.bucket), project=project, timeout_s=settings.gcs_timeout_s)
    state = GcsBlobStore(str(settings.state_bucket), project=project, timeout_s=settings.gcs_timeout_s)
    embedder = QueryEmbeddingCache(_vertex_embedder(settings), settings.query_cache_size)
    index = _vertex_index(settings, embedder.dimension)
    store = GcsChunkStore(
        state,
        prefix=prefix,
        dimension=embedder.dimension,
        model_id=embedder.model_id,
        cache_s=settings.chunkmap_cache_s,
    )
    vectors = VertexVectorIndex(index, IndexMetadata(state, prefix, embedder.model_id, embedder.dimension))
    lexical = VertexLexicalIndex(index, GcsLexicon(state, f"{prefix}lexicon/df.json", settings.lexicon_refresh_s))
    api_key = gemini_api_key(settings)
    hyde = models.build_hyde(settings, embedder, lexical_texts(lexical, store), api_key=api_key)
    retriever = models.build_retriever(settings, embedder, vectors, lexical, store, hyde)
    reranker = models.build_reranker(settings, api_key=api_key)
    translator = models.build_translator(settings, api_key=api_key)
    caches = models.cache_counters(embedder, reranker, hyde, translator)
    remote_reranker, composer = models.build_remote_stages(settings)
    return Services(
        settings=settings,
        blobs=docs,
        publisher=PubSubPublisher(project, timeout_s=settings.pubsub_timeout_s),
        embedder=embedder,
        store=store,
        vectors=vectors,
        lexical=lexical,
        reranker=reranker,
        remote_reranker=remote_reranker,
        composer=composer,
        failures=GcsFailureRecorder(state, f"{prefix}failures/"),
        retriever=retriever,
        query_options=models.query_options_from(settings),
        catalog=CorpusCatalog(store),
        feedback=GcsFeedbackStore(state, prefix),
        reports=PrefixedBlobStore(state, prefix),
        caches=caches,
        ocr=models.build_ocr(settings),
        staging=GcsPartStaging(state, prefix),
        integrity=(store,),
        watches=GcsWatchStore(state, prefix),
        translator=translator,
    )


def _vertex_embedder(settings: Settings):  # type: ignore[no-untyped-def]
    from regrag.adapters.gcp.embedders import RetryPolicy, VertexEmbedder

    return VertexEmbedder(
        str(settings.gcp_project),
        str(settings.gcp_region),
        model=settings.embedding_model,
        output_dimensionality=settings.embedding_dimension or None,
        timeout_s=settings.embed_timeout_s,
        retry=RetryPolicy(settings.embed_max_attempts, settings.embed_backoff_s),
        max_texts_per_request=settings.embed_max_texts,
        max_tokens_per_request=settings.embed_max_tokens,
        base_url=settings.embeddings_emulator_url,
    )


def _vertex_index(settings: Settings, dimension: int):  # type: ignore[no-untyped-def]
    from regrag.adapters.gcp.clients import Endpoint
    from regrag.adapters.gcp.search_store import VertexIndex, VertexIndexConfig
    from regrag.text.terms import chunk_tokens

    fake = settings.vertex_emulator_host
    regional = settings.vertex_api_host or f"{settings.gcp_region}-aiplatform.googleapis.com"
    return VertexIndex(
        VertexIndexConfig(
            index=str(settings.vertex_index),
            index_endpoint=str(settings.vertex_index_endpoint),
            deployed_index_id=str(settings.vertex_deployed_index_id),
            index_api=Endpoint(fake, True) if fake else Endpoint(regional),
            match_api=Endpoint(fake, True) if fake else Endpoint(str(settings.vertex_public_host)),
            dimension=dimension,
            batch_size=settings.vertex_batch_size,
            timeout_s=settings.vertex_timeout_s,
        ),
        tokens_of=chunk_tokens,
        bm25=models.bm25_params_from(settings),
    )
