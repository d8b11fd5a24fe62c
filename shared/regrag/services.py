"""The adapter set one process runs on, as typed ports: what every entry point receives.

`regrag.wiring` builds it (local or GCP); the event handlers (regrag.entrypoints.handlers), the HTTP routes
(regrag.api), the CLI and the evaluation read it. It holds no behaviour of its own beyond closing what it opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from regrag.config import Settings
from regrag.ports import (
    BlobStore,
    ChunkStore,
    Composer,
    Embedder,
    FailureRecorder,
    FeedbackStore,
    IntegrityCheck,
    LexicalIndex,
    MessageBus,
    OcrEngine,
    PartStaging,
    Publisher,
    QuestionIndex,
    Reranker,
    VectorIndex,
    WatchStore,
)
from regrag.query.answer import QueryOptions, ReadPath
from regrag.query.retrieve import Retriever
from regrag.query.translate import QuestionTranslator
from regrag.views.catalog import CorpusCatalog

if TYPE_CHECKING:
    from regrag.ingest.alerts import QuestionBacklog
    from regrag.ingest.questions import QuestionsIndexer

CacheStats = Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class Services:
    """Ports and pipeline settings of one process.

    Attributes:
        bus: the in-process bus (local mode), which delivers to the event handlers; None on GCP, where Pub/Sub
            push subscriptions call the deployed functions instead.
        feedback: the query log and user feedback.
        reports: where /admin/eval reads question files and writes reports: None means `blobs` (locally the
            bucket folder); on GCP the state bucket under the state prefix, never the uploads bucket whose new
            objects trigger ingest.
        question_index: the questions-answered index's storage (wired locally even when the aid is off, so
            deletes always clear it); `questions_indexer` the ingest-time generator (only when it is on).
        caches: name → hit/miss counters of each in-memory cache wiring built (reported by /healthz).
        ocr: the engine ingest reads scanned pages with (RapidOCR locally, Document AI on GCP; REGRAG_OCR), or
            None when OCR is off: scans are then refused. Built lazily: no model or client before the first scan.
        prepare_search: builds what searches read after a batch of writes (locally the search snapshot,
            saved on disk when the index is large), so that the next process to search maps it instead of
            building it; None where searching needs no preparation (Vector Search indexes on write).
        staging: where the parts of a document sent in several messages wait for the last one, so that it is
            written whole (locally a table of the index, in the same transaction; on GCP the state bucket).
        integrity: the stores that check what they hold (`regrag doctor`, GET /healthz, `regrag repair`):
            locally the index and the vector cache.
        writer_lock: `writer_lock(command)` is held by a command that writes to the local data folder (ingest,
            delete, repair), so a second one waits for the first; None where writers are events (GCP).
        remote_reranker, composer: the `rerank` and `compose` functions over HTTP (REGRAG_RERANK_URL,
            REGRAG_COMPOSE_URL), which the query path uses when set; `reranker` stays the in-process one, which
            the rerank endpoint itself serves with.
        watches: watches and the alerts recorded for them (None: not wired; the upsert stage then tells no one).
        question_backlog: the saved questions a batch of writes (regrag ingest) asks once at its end (local mode;
            None where each upsert asks them itself).
        translator: puts a question not in Chinese into Chinese before it is searched (Gemini; None when it is
            not configured or REGRAG_TRANSLATE is off: such a question then gets a note asking for Chinese).
    """

    settings: Settings
    blobs: BlobStore
    publisher: Publisher
    embedder: Embedder
    store: ChunkStore
    vectors: VectorIndex
    lexical: LexicalIndex
    reranker: Reranker
    failures: FailureRecorder
    retriever: Retriever
    query_options: QueryOptions
    catalog: CorpusCatalog
    bus: MessageBus | None = None
    feedback: FeedbackStore | None = None
    reports: BlobStore | None = None
    question_index: QuestionIndex | None = None
    questions_indexer: QuestionsIndexer | None = None
    caches: Mapping[str, CacheStats] = field(default_factory=dict)
    ocr: OcrEngine | None = None
    remote_reranker: Reranker | None = None
    composer: Composer | None = None
    prepare_search: Callable[[], None] | None = None
    staging: PartStaging | None = None
    integrity: tuple[IntegrityCheck, ...] = ()
    writer_lock: Callable[[str], AbstractContextManager[None]] | None = None
    watches: WatchStore | None = None
    question_backlog: QuestionBacklog | None = None
    translator: QuestionTranslator | None = None

    @property
    def read_path(self) -> ReadPath:
        """The parts the read path runs on: the remote rerank and compose functions when they are set."""
        return ReadPath(
            retriever=self.retriever,
            reranker=self.remote_reranker or self.reranker,
            store=self.store,
            catalog=self.catalog,
            options=self.query_options,
            composer=self.composer,
            translator=self.translator,
        )

    def close(self) -> None:
        """Close what holds files or connections open (the local SQLite stores)."""
        for part in (self.store, self.feedback, self.watches, *self.integrity):
            closer = getattr(part, "close", None)
            if closer:
                closer()
