"""Tuning values in one place: every default a class or function carries for a value Settings also has is the
Settings default, so a caller that leaves it out (a test, the Python API, a bench) gets what the product runs
with. Settings is the one place; the wiring (regrag/wiring) builds every object by keyword from it. This list
is how a default that drifted (LlmReranker's 4.0 s against REGRAG_RERANK_TIMEOUT_S 6.0) is caught."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import pytest

import regrag
from regrag.adapters.gcp.blobstore import GcsBlobStore
from regrag.adapters.gcp.bus import PubSubPublisher
from regrag.adapters.gcp.chunk_heads import HeadStore
from regrag.adapters.gcp.documentai import DocumentAiOcr
from regrag.adapters.gcp.embedders import RetryPolicy, VertexEmbedder
from regrag.adapters.gcp.lexicon import GcsLexicon
from regrag.adapters.gcp.search_store import VertexIndexConfig
from regrag.adapters.local.embedders import E5Embedder
from regrag.api import endpoints
from regrag.api.server import Limits
from regrag.config import Settings
from regrag.domain.bm25 import Bm25Params
from regrag.ingest.embed import embed_chunks
from regrag.ingest.ingest import OcrOptions
from regrag.query.embedding_cache import QueryEmbeddingCache
from regrag.query.judge import RelevanceFloor
from regrag.query.retrieve import RetrievalConfig, Retriever
from regrag.text.chunking import split_structure
from regrag.text.images import OcrLimits

RETRIEVAL = (
    "top_k", "dense_k", "lexical_k", "rrf_k", "dense_weight", "lexical_weight", "hyde_weight", "questions_weight",
    "hyde_lexical_weight", "coverage_weight", "form_weight", "place_scope", "national_preference",
)  # fmt: skip

# (where the default is, the parameter or field, the Settings field)
DEFAULTS: list[tuple[Any, str, str]] = [
    *[(RetrievalConfig, name, name) for name in RETRIEVAL],
    (Retriever.search, "timeout_s", "corpus_timeout_s"),
    (RelevanceFloor, "coverage", "relevance_floor"),
    (RelevanceFloor, "dense", "dense_floor"),
    (RelevanceFloor, "coverage_alone", "relevance_floor_alone"),
    (Bm25Params, "k1", "bm25_k1"),
    (Bm25Params, "b", "bm25_b"),
    (Bm25Params, "title_weight", "title_weight"),
    (Bm25Params, "avgdl", "bm25_avgdl"),
    (split_structure, "max_chars", "chunk_max_chars"),
    (E5Embedder, "batch_size", "embed_batch_size"),
    (embed_chunks, "batch_size", "embed_batch_size"),
    (QueryEmbeddingCache, "max_entries", "query_cache_size"),
    (regrag.retrieve_relevant_chunks, "top_k", "top_k"),
    (endpoints.retrieve_relevant_chunks, "top_k", "top_k"),
    (OcrLimits, "max_pages", "ocr_max_pages"),
    (OcrLimits, "max_image_pixels", "ocr_max_image_pixels"),
    (OcrLimits, "page_timeout_s", "ocr_page_timeout_s"),
    (OcrOptions, "low_confidence", "ocr_low_confidence"),
    (Limits, "max_active", "serve_max_active"),
    (Limits, "max_waiting", "serve_max_waiting"),
    (Limits, "wait_s", "serve_wait_s"),
    (DocumentAiOcr, "timeout_s", "documentai_timeout_s"),
    (VertexEmbedder, "model", "embedding_model"),
    (VertexEmbedder, "timeout_s", "embed_timeout_s"),
    (VertexEmbedder, "max_texts_per_request", "embed_max_texts"),
    (VertexEmbedder, "max_tokens_per_request", "embed_max_tokens"),
    (RetryPolicy, "max_attempts", "embed_max_attempts"),
    (RetryPolicy, "initial_s", "embed_backoff_s"),
    (VertexIndexConfig, "batch_size", "vertex_batch_size"),
    (VertexIndexConfig, "timeout_s", "vertex_timeout_s"),
    (GcsBlobStore, "timeout_s", "gcs_timeout_s"),
    (PubSubPublisher, "timeout_s", "pubsub_timeout_s"),
    (HeadStore, "cache_s", "chunkmap_cache_s"),
    (GcsLexicon, "refresh_s", "lexicon_refresh_s"),
]


def default_of(where: Any, name: str) -> Any:
    """The default of a dataclass field or of a function's (or class constructor's) parameter."""
    if dataclasses.is_dataclass(where):
        found = {f.name: f for f in dataclasses.fields(where)}[name]
        if found.default_factory is not dataclasses.MISSING:
            return found.default_factory()
        return found.default
    function: Callable[..., Any] = where.__init__ if inspect.isclass(where) else where
    return inspect.signature(function).parameters[name].default


@pytest.mark.parametrize(("where", "name", "setting"), DEFAULTS, ids=lambda v: getattr(v, "__qualname__", str(v)))
def test_a_default_is_the_settings_default(where: Any, name: str, setting: str) -> None:
    assert default_of(where, name) == getattr(Settings(), setting)


def test_the_list_names_real_settings() -> None:
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert {setting for _, _, setting in DEFAULTS} <= fields


def test_what_has_no_default_is_given_by_the_wiring() -> None:
    """The prompted models and the Gemini client take their deadlines, caches and counts from Settings only."""
    from regrag.adapters.gcp.generator import GeminiGenerator
    from regrag.ingest.questions import QuestionsIndexer
    from regrag.query.aids.hyde import Hyde
    from regrag.query.rerank import LlmReranker

    for where, names in (
        (LlmReranker, ("timeout_s", "cache_size")),
        (Hyde, ("timeout_s", "cache_size")),
        (QuestionsIndexer, ("timeout_s", "max_questions")),
        (GeminiGenerator, ("timeout_s",)),
    ):
        params = inspect.signature(where.__init__).parameters
        assert all(params[n].default is inspect.Parameter.empty for n in names), where
