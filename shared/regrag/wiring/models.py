"""The model-backed parts, built from settings: the local embedder, the reranker, and the retrieval aids.

Which model answers is a deployment choice, made here once: e5 or the hashing embedder locally (Vertex AI on
GCP, see wiring.gcp), Gemini (API key or Vertex AI) or the retrieval order for reranking, Gemini or the
deterministic local stand-in for the aids.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from regrag.config import ConfigError, Settings
from regrag.domain.bm25 import Bm25Params
from regrag.ingest.questions import QuestionsIndexer
from regrag.ports import (
    ChunkStore,
    Composer,
    Embedder,
    Generator,
    LexicalIndex,
    OcrEngine,
    QuestionIndex,
    Reranker,
    VectorIndex,
)
from regrag.query.aids.hyde import Hyde
from regrag.query.answer import QueryOptions
from regrag.query.embedding_cache import QueryEmbeddingCache
from regrag.query.judge import AbstentionRule, JudgeConfig, RelevanceFloor
from regrag.query.quote import QuoteConfig
from regrag.query.rerank import LlmReranker, RetrievalOrderReranker
from regrag.query.retrieve import RetrievalConfig, Retriever
from regrag.query.translate import QuestionTranslator
from regrag.services import CacheStats

if TYPE_CHECKING:
    from regrag.adapters.local.vector_cache import CachingEmbedder

# Pinned prompt versions: a new version is a reviewed change here, never a silent "latest".
RERANK_PROMPT = "rerank_v1"
TRANSLATE_PROMPT = "translate_v1"
HYDE_PROMPT = "hyde_v1"
QUESTIONS_PROMPT = "questions_v1"
# GCP mode: corpora searched at once. Its searches wait on Vector Search and GCS, not on this process's cores, so
# one thread each for the 8 provincial corpora measured (local mode uses the cores: bench/README.md "Fan-out
# threads = cores", 8 threads p50 127 ms against 93 ms with 2 on two cores)
GCP_FAN_OUT_WORKERS = 8
# the remote rerank's deadline over the in-process one: the HTTP round trip and the ID token to the rerank function
REMOTE_ROUND_TRIP_S = 1.0


def limit_blas_threads() -> None:
    """One BLAS thread per process. The local search's matrix products are small (2–3 ms on one core), and
    OpenBLAS threads that spin after each product starve the embedder's OpenMP threads: measured here, query
    embedding went from 22 to 111 ms p50 with two BLAS threads (bench/query_latency.py)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def build_local_embedder(settings: Settings) -> tuple[CachingEmbedder, Embedder]:
    """(the model behind the on-disk vector cache, the model itself): ingest embeds through the cache; the
    retrieval aids embed their throwaway texts with the model itself."""
    from regrag.adapters.local.vector_cache import CachingEmbedder, SqliteVectorCache

    model: Embedder
    if settings.embedder == "e5":
        from regrag.adapters.local.embedders import E5Embedder

        model = E5Embedder(batch_size=settings.embed_batch_size)
    elif settings.embedder == "hash":
        from regrag.adapters.local.embedders import HashEmbedder

        model = HashEmbedder()
    else:
        raise ConfigError(f"REGRAG_EMBEDDER={settings.embedder!r} needs REGRAG_MODE=gcp")
    return CachingEmbedder(model, SqliteVectorCache(settings.vector_cache_path)), model


def build_ocr(settings: Settings) -> OcrEngine | None:
    """The OCR engine REGRAG_OCR picks (`Settings.ocr_engine`): RapidOCR, Document AI, or None (off). Neither
    loads a model or opens a connection here: RapidOCR loads on the first scanned page, the Document AI client
    is built on the first request."""
    engine = settings.ocr_engine
    if engine == "local":
        from regrag.adapters.local.ocr import RapidOcrEngine

        return RapidOcrEngine()
    if engine == "documentai":
        from regrag.adapters.gcp.clients import Endpoint
        from regrag.adapters.gcp.documentai import DocumentAiOcr
        from regrag.domain.errors import InvalidInput

        fake = settings.documentai_emulator_host
        try:
            return DocumentAiOcr(
                str(settings.documentai_processor),
                settings.documentai_location,
                endpoint=Endpoint(fake, True) if fake else None,
                timeout_s=settings.documentai_timeout_s,
            )
        except InvalidInput as exc:
            raise ConfigError(f"REGRAG_DOCUMENTAI_PROCESSOR: {exc}") from exc
    return None


def bm25_params_from(settings: Settings) -> Bm25Params:
    return Bm25Params(
        k1=settings.bm25_k1, b=settings.bm25_b, title_weight=settings.title_weight, avgdl=settings.bm25_avgdl
    )


def query_options_from(settings: Settings) -> QueryOptions:
    return QueryOptions(
        rerank_enabled=settings.rerank,
        rerank_top_n=settings.rerank_top_n,
        quote=QuoteConfig(
            top_n=settings.compose_top_n,
            max_bullets=settings.max_bullets,
            quote_floor=settings.quote_floor,
        ),
        judge=JudgeConfig(
            floor=RelevanceFloor(
                coverage=settings.relevance_floor,
                dense=settings.dense_floor,
                coverage_alone=settings.relevance_floor_alone,
            ),
            rule=AbstentionRule(below=settings.abstain_below),
            top_n=settings.compose_top_n,
        ),
        corpus_timeout_s=settings.corpus_timeout_s,
        place_scope=settings.place_scope,
    )


def retrieval_config_from(settings: Settings) -> RetrievalConfig:
    return RetrievalConfig(
        top_k=settings.top_k,
        dense_k=settings.dense_k,
        lexical_k=settings.lexical_k,
        rrf_k=settings.rrf_k,
        dense_weight=settings.dense_weight,
        lexical_weight=settings.lexical_weight,
        hyde_weight=settings.hyde_weight,
        questions_weight=settings.questions_weight,
        hyde_lexical_weight=settings.hyde_lexical_weight,
        coverage_weight=settings.coverage_weight,
        form_weight=settings.form_weight,
        place_scope=settings.place_scope,
        national_preference=settings.national_preference,
    )


def gemini_generator(settings: Settings, key: str | None, timeout_s: float) -> Generator:
    """Gemini through google-genai: the API key, or Vertex AI with the service account (REGRAG_GEMINI_VERTEX)."""
    from regrag.adapters.gcp.generator import GeminiGenerator

    return GeminiGenerator(
        settings.gemini_model,
        api_key=None if settings.gemini_on_vertex else key,
        vertexai=settings.gemini_on_vertex,
        project=settings.gemini_project or settings.gcp_project,
        location=settings.gemini_location,
        base_url=settings.gemini_base_url,
        timeout_s=timeout_s,
        params=settings.gemini_params,
    )


def reach_gemini(settings: Settings, api_key: str | None) -> tuple[bool, str | None]:
    """Whether Gemini is reachable, and the API key to reach it with: the key the caller resolved (GCP: read from
    Secret Manager) or GEMINI_API_KEY; Vertex AI mode (REGRAG_GEMINI_VERTEX) needs none."""
    key = api_key or settings.gemini_api_key
    return bool(key or settings.gemini_on_vertex), key


def build_reranker(settings: Settings, api_key: str | None = None) -> Reranker:
    """Gemini scores the candidates when reranking is on and Gemini is reachable; else the retrieval order.

    `api_key`: the Gemini API key the caller resolved (GCP: read from Secret Manager); locally GEMINI_API_KEY.
    Vertex AI mode (REGRAG_GEMINI_VERTEX) needs no key: the service account's credentials are used.
    """
    reachable, key = reach_gemini(settings, api_key)
    if not settings.rerank or not reachable:
        return RetrievalOrderReranker()
    from regrag.prompts import load_prompt

    return LlmReranker(
        gemini_generator(settings, key, settings.rerank_timeout_s),
        settings.gemini_model,
        load_prompt(RERANK_PROMPT),
        timeout_s=settings.rerank_timeout_s,
        cache_size=settings.rerank_cache_size,
    )


class BuiltOnFirstUse:
    """A `Generator` built by `build` on its first call. The translator is wired wherever Gemini is, but nearly
    every question is in Chinese and never calls it: its client (and the Google libraries) wait for the first
    one that is not, so building the services stays free of imports and calls (tests/gcp/test_gcp_config.py)."""

    def __init__(self, build: Callable[[], Generator]) -> None:
        self._build = build
        self._built: Generator | None = None
        self._lock = threading.Lock()

    def generate_json(
        self, prompt: str, schema: dict[str, Any], *, system: str | None = None, timeout_s: float | None = None
    ) -> Any:
        with self._lock:
            if self._built is None:
                self._built = self._build()
        return self._built.generate_json(prompt, schema, system=system, timeout_s=timeout_s)


def build_translator(settings: Settings, api_key: str | None = None) -> QuestionTranslator | None:
    """Gemini puts a question not in Chinese into Chinese when translation is on and Gemini is reachable (a key,
    or Vertex AI mode, as for rerank); None otherwise, and such a question gets a note asking for Chinese."""
    reachable, key = reach_gemini(settings, api_key)
    if not settings.translate or not reachable:
        return None
    from regrag.prompts import load_prompt

    return QuestionTranslator(
        BuiltOnFirstUse(lambda: gemini_generator(settings, key, settings.translate_timeout_s)),
        settings.gemini_model,
        load_prompt(TRANSLATE_PROMPT),
        timeout_s=settings.translate_timeout_s,
        cache_size=settings.translate_cache_size,
    )


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
    reachable, key = reach_gemini(settings, api_key)
    if not reachable:
        raise ConfigError(
            "REGRAG_HYDE / REGRAG_QUESTIONS_INDEX with REGRAG_GENERATOR=gemini need GEMINI_API_KEY or "
            "REGRAG_GEMINI_VERTEX=true (REGRAG_GENERATOR=local selects the deterministic stand-in)"
        )
    return gemini_generator(settings, key, timeout_s), settings.gemini_model


def build_retriever(
    settings: Settings,
    embedder: Embedder,
    vectors: VectorIndex,
    lexical: LexicalIndex,
    store: ChunkStore,
    hyde: Hyde | None,
    questions: QuestionIndex | None = None,
    *,
    fan_out_workers: int = GCP_FAN_OUT_WORKERS,
) -> Retriever:
    """The one place a deployment's Retriever is put together (both modes; the evaluation uses the services').
    `fan_out_workers`: corpora searched at once (Retriever.max_workers)."""
    return Retriever(
        embedder=embedder,
        vectors=vectors,
        lexical=lexical,
        store=store,
        config=retrieval_config_from(settings),
        max_workers=fan_out_workers,
        hyde=hyde,
        questions=questions,
    )


def cores() -> int:
    """The CPUs this process may run on (its affinity, which containers and taskset narrow; os.cpu_count() does not)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on every platform
        return max(1, os.cpu_count() or 1)


def build_hyde(
    settings: Settings,
    embedder: Embedder,
    lexical_search: Callable[[str], list[str]],
    api_key: str | None = None,
) -> Hyde | None:
    """HyDE when REGRAG_HYDE is on. `embedder` embeds the passage as a document; pass one without a
    persistent vector cache (a hypothetical passage is not worth keeping on disk)."""
    if not settings.hyde:
        return None
    from regrag.prompts import load_prompt

    generator, model_id = build_aid_generator(
        settings, timeout_s=settings.hyde_timeout_s, lexical_search=lexical_search, api_key=api_key
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


def cache_counters(
    embedder: QueryEmbeddingCache,
    reranker: Reranker,
    hyde: Hyde | None,
    translator: QuestionTranslator | None = None,
) -> dict[str, CacheStats]:
    """The in-memory caches this wiring built, by the name /healthz reports them under."""
    caches: dict[str, CacheStats] = {"query_embedding": embedder.query_cache.stats}
    if isinstance(reranker, LlmReranker):
        caches["rerank"] = reranker.cache.stats
    if hyde is not None:
        caches["hyde"] = hyde.cache.stats
    if translator is not None:
        caches["translate"] = translator.cache.stats
    return caches


def build_remote_stages(settings: Settings) -> tuple[Reranker | None, Composer | None]:
    """The rerank and compose functions over HTTP when their URLs are set (the deployed topology on GCP).

    The remote rerank gets the rerank deadline plus a second for the round trip; the in-process fallbacks
    (retrieval order, local compose) apply on any failure."""
    if not (settings.rerank_url or settings.compose_url):
        return None, None
    from regrag.adapters.gcp.remote import MetadataIdTokens, RemoteComposer, RemoteReranker

    tokens = MetadataIdTokens()
    deadline_s = settings.rerank_timeout_s + REMOTE_ROUND_TRIP_S
    reranker = RemoteReranker(settings.rerank_url, tokens, deadline_s) if settings.rerank_url else None
    composer = (
        RemoteComposer(settings.compose_url, tokens, settings.compose_timeout_s) if settings.compose_url else None
    )
    return reranker, composer
