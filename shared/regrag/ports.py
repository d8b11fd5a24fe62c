"""The capabilities the pipeline needs, as Protocols. Local and GCP adapters implement them.

Dependencies point one way: functions → regrag's stages (ingest/, query/, views/) → regrag.ports ← regrag.adapters.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from regrag.domain.integrity import Finding
from regrag.domain.messages import ChunksEmbedded
from regrag.domain.models import Chunk, DocumentMeta, Filters, Hit
from regrag.domain.ocr import OcrPage
from regrag.domain.results import Candidate
from regrag.domain.watches import Alert, Baseline, SavedQuestion, Watch


@dataclass(frozen=True)
class Blob:
    """An object in the bucket: its bytes, its generation (version) and its custom metadata."""

    name: str
    data: bytes
    generation: int
    metadata: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None


@dataclass(frozen=True)
class BlobInfo:
    """An object listed in the bucket, without its bytes."""

    name: str
    generation: int
    size: int


@runtime_checkable
class BlobStore(Protocol):
    """The bucket that users upload regulations to (GCS, or a local folder)."""

    def read(self, name: str) -> Blob:
        """The object's bytes and metadata; raises NotFound if it does not exist."""
        ...

    def read_optional(self, name: str) -> Blob | None:
        """The object, or None if it does not exist (sidecars)."""
        ...

    def write(self, name: str, data: bytes, metadata: dict[str, str] | None = None) -> BlobInfo: ...

    def delete(self, name: str) -> None: ...

    def list(self, prefix: str = "") -> list[BlobInfo]: ...


Handler = Callable[[dict[str, Any], dict[str, str]], Any]


@runtime_checkable
class Publisher(Protocol):
    """Sends stage messages to a topic (Pub/Sub, or the in-process bus)."""

    def publish(self, topic: str, payload: dict[str, Any], attributes: dict[str, str] | None = None) -> str:
        """Publish one JSON message; return its message id."""
        ...


class MessageBus(Publisher, Protocol):
    """A Publisher that also delivers to handlers in this process (local mode's stand-in for Pub/Sub push
    subscriptions); messages no handler could take after every retry end in `dead_letters`, and are recorded
    with the stage (`stage`, or the topic) that could not take them."""

    dead_letters: list[Any]

    def subscribe(self, topic: str, handler: Handler, stage: str | None = None) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors. Documents and queries may be embedded differently (task types)."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dimension) float32, L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dimension,) float32, L2-normalised."""
        ...


@dataclass(frozen=True)
class PutResult:
    """What storing a document part changed: the stored metadata (with version links) and relinked docs."""

    meta: DocumentMeta
    relinked: tuple[str, ...]


@runtime_checkable
class ChunkStore(Protocol):
    """Documents (metadata and stored text) and their chunks, by id; the source of every quote."""

    def put_part(self, meta: DocumentMeta, text: str, chunks: Sequence[Chunk], part: int, parts: int) -> PutResult:
        """Store a document version's metadata, text and one part of its chunks (idempotent).

        Also links versions: if a stored document supersedes this one (or this one supersedes a stored one),
        the older version gets `superseded_by` and `effective_to`; the returned metadata carries the links.
        """
        ...

    def set_supersedes(self, doc_id: str, older_id: str | None) -> PutResult:
        """Record (or, with None, withdraw) that a stored document supersedes `older_id`, and relink both versions
        as put_part does: a link found after both were stored (a repeal clause naming a version that arrived
        later), or a claim that turned out invalid. NotFound if `doc_id` is not stored."""
        ...

    def obsolete_chunk_ids(self, doc_id: str) -> list[str]:
        """Chunks of older versions, and chunks of the current version that its complete set of parts lacks."""
        ...

    def mark_complete(self, doc_id: str, generation: int) -> None:
        """Record, last, that `generation` of the document was written whole: its chunks, their vectors and
        terms, its version links and the removal of obsolete chunks. Nothing if another generation is stored."""
        ...

    def incomplete_documents(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        """Of `doc_ids` (every stored document when None), those whose stored generation was not written whole:
        never marked complete, or (where the store can tell) a chunk without its vector or terms, or a row that
        fails its checksum. An ingest redoes these instead of calling them unchanged."""
        ...

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None: ...

    def delete_document(self, doc_id: str) -> list[str]:
        """Remove a document and its chunks; return the chunk ids removed."""
        ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks that still exist, in the order asked."""
        ...

    def get_document(self, doc_id: str) -> tuple[DocumentMeta, str] | None: ...

    def list_documents(self, corpus: str | None = None) -> list[DocumentMeta]: ...

    def find_documents(self, corpus: str, kind: str, key: str) -> list[DocumentMeta]:
        """The documents of `corpus` stored under `key` (DocumentMeta.keys): kind "title" finds the versions
        titled so, kind "repeals" the documents whose text repeals a text titled so. Cost independent of how
        many documents the store holds."""
        ...

    def document_chunks(self, doc_id: str) -> list[Chunk]: ...

    def corpus_names(self) -> list[str]:
        """The corpora documents were stored in, sorted (a corpus emptied since may stay listed). Cost independent
        of how many documents the store holds: the query path asks it to know where to search."""
        ...

    def stats(self) -> dict[str, Any]: ...


@runtime_checkable
class Versioned(Protocol):
    """A store with a counter that every committed write changes, cheap to read (one row): what readers key their
    caches on, so that a process serving queries sees another process's finished ingest at its next query."""

    def index_version(self) -> int: ...


@runtime_checkable
class Transactional(Protocol):
    """A store whose writes, and those of the indexes that share its storage, can be made one transaction
    (locally: one SQLite file holds the documents, chunks, vectors and terms). Where no store can (Cloud
    Storage and Vector Search), the completion marker (ChunkStore.mark_complete) written last does the job."""

    def atomically(self) -> AbstractContextManager[None]:
        """Every write on this thread inside the block commits together, or none does: a reader (in any process)
        sees the state before or after, and a process killed inside the block leaves nothing behind."""
        ...


@runtime_checkable
class PartStaging(Protocol):
    """Where the parts of a document whose chunks travel in several messages wait for the last one, so that
    the document is written whole rather than part by part (a reader would otherwise see half of a version)."""

    def stage(self, message: ChunksEmbedded) -> list[ChunksEmbedded]:
        """Keep this part; every part of its document generation kept so far (this one included), by part."""
        ...

    def clear(self, doc_id: str, generation: int) -> None:
        """Forget the kept parts of `generation` and of every older generation of the document."""
        ...


@runtime_checkable
class IntegrityCheck(Protocol):
    """A store that can check what it holds against itself: rows against their checksums, chunks against their
    vectors and terms, version links against the documents they name, files against their recorded checksums."""

    def check_integrity(self, deep: bool = True) -> list[Finding]:
        """What is wrong, each finding naming its subject. `deep`: read every row and file (`regrag doctor`);
        otherwise only what costs a few indexed queries (GET /healthz)."""
        ...

    def fix(self, findings: Sequence[Finding]) -> list[Finding]:
        """Fix what the store can fix by itself without the bucket (derived data: orphan rows, a saved snapshot,
        cache entries, a version link to a document that is gone); the findings fixed."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Dense vectors with metadata restricts; filters run inside the search, before top-k."""

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None: ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]: ...

    def warm(self) -> None:
        """Make ready what the first search would otherwise set up (clients and their imports, in-memory arrays,
        statistics), so that a search's time is searching: a query warms before its per-corpus deadlines start."""
        ...

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        """Rewrite the restricts of existing chunks (a successor changed their validity dates)."""
        ...


@runtime_checkable
class LexicalIndex(Protocol):
    """BM25 over segmented Chinese; the pipeline segments both sides with the same tokenizer."""

    def upsert(
        self, chunks: Sequence[Chunk], body_tokens: Sequence[Sequence[str]], title_tokens: Sequence[Sequence[str]]
    ) -> None: ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def search(self, tokens: Sequence[str], filters: Filters, k: int) -> list[Hit]: ...

    def warm(self) -> None:
        """As VectorIndex.warm."""
        ...

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None: ...


@runtime_checkable
class Reranker(Protocol):
    """Reorders candidates for a question; never fails (falls back to the order it was given)."""

    def rerank(self, question: str, candidates: Sequence[Candidate], top_n: int) -> tuple[list[Candidate], str]:
        """(reordered candidates, rerank_status: ok | skipped | fallback:<reason>)."""
        ...


class Composer(Protocol):
    """Composes the answer somewhere else (the `compose` function over HTTP): the API body of POST /compose.

    Raises on any failure (unreachable, refused, timed out, malformed); the query path then composes in
    process and says so in `compose_status`. The body is checked before it is used (every span verbatim)."""

    def compose(self, question: str, candidate_ids: Sequence[str], filters: dict[str, Any]) -> dict[str, Any]: ...


@runtime_checkable
class Generator(Protocol):
    """A text model (Gemini) that answers a prompt with JSON that matches a schema."""

    def generate_json(
        self, prompt: str, schema: dict[str, Any], *, system: str | None = None, timeout_s: float | None = None
    ) -> Any: ...


@runtime_checkable
class SecretStore(Protocol):
    def get(self, name: str) -> str | None: ...


class FailureRecorder(Protocol):
    """Where permanent failures of event handling, and messages dead-lettered after their last retry, are
    recorded, so nothing is lost silently."""

    def record(self, stage: str, key: str, reason: str, detail: dict[str, Any]) -> None: ...

    def list(self, stage: str | None = None) -> list[dict[str, Any]]: ...

    def recorded(self) -> builtins.list[dict[str, Any]]:
        """The records this recorder wrote in this process, oldest first: what a command reports as its own
        failures (another process may be recording into the same place at the same time)."""
        ...


@runtime_checkable
class DeliveryCounter(Protocol):
    """A failure recorder that counts the failed deliveries of each message, where the platform does not tell
    the handler which attempt a delivery is (Pub/Sub through Eventarc): the delivery that reaches the maximum is
    the one Pub/Sub dead-letters, and is recorded as such (regrag.entrypoints.events.run_event)."""

    def failed_delivery(self, stage: str, message_id: str) -> int:
        """Count one more failed delivery of the message; the count so far, this one included."""
        ...


@runtime_checkable
class FeedbackStore(Protocol):
    """What users said about answers, and the queries they said it about (local: SQLite; GCP: the bucket)."""

    def log_query(self, query_id: str, record: dict[str, Any]) -> None:
        """Keep what a query asked and returned, so later feedback can be turned into an eval question."""
        ...

    def get_query(self, query_id: str) -> dict[str, Any] | None: ...

    def add_feedback(self, record: dict[str, Any]) -> None: ...

    def list_feedback(self) -> list[dict[str, Any]]:
        """Every feedback record joined with its query record (key `query`), oldest first."""
        ...


@runtime_checkable
class WatchStore(Protocol):
    """Watches and the alerts recorded for them (local: SQLite; GCP: the state bucket).

    Lookups the upsert stage makes on every document are indexed: `watches_following` costs what it returns,
    not how many watches exist, and `saved_questions` lists only what the cheap pre-check reads."""

    def put_watch(self, watch: Watch) -> bool:
        """Store a new watch; False, and nothing written, when a watch with its id exists already."""
        ...

    def get_watch(self, watch_id: str) -> Watch | None: ...

    def list_watches(self) -> list[Watch]:
        """Every watch, oldest first."""
        ...

    def remove_watch(self, watch_id: str) -> bool:
        """Remove a watch (its alerts stay); False when there was none."""
        ...

    def watches_following(self, doc_ids: Sequence[str]) -> list[Watch]:
        """The watches whose `followed` documents include one of `doc_ids` (by watch id)."""
        ...

    def saved_questions(self) -> list[SavedQuestion]:
        """Every question watch's words and filters."""
        ...

    def update_baseline(self, watch_id: str, baseline: Baseline) -> None:
        """Replace what a watch last saw (and what it follows); nothing when the watch was removed meanwhile."""
        ...

    def add_alert(self, alert: Alert) -> bool:
        """Record an alert once: False, and nothing written, when its id is recorded already."""
        ...

    def list_alerts(self, *, since: str | None = None, watch_id: str | None = None, limit: int = 100) -> list[Alert]:
        """Alerts newest first: created at or after `since` (an ISO date or time), of one watch, at most `limit`."""
        ...


@runtime_checkable
class TermStatistics(Protocol):
    """A lexical index that cannot count document frequencies itself (Vertex sparse vectors; the local one can).

    The reconcile job counts them over the chunk store and hands them over; the index uses them for idf.
    """

    def update_statistics(
        self, chunks: int, document_frequency: dict[str, int], body_tokens: int, title_tokens: int
    ) -> None:
        """`chunks` counted; `document_frequency[token]` = chunks containing it; total body and title tokens."""
        ...


@runtime_checkable
class QuestionIndex(Protocol):
    """Vectors of the questions each chunk answers (generated at ingest), beside the chunk vectors.

    A search ranks chunks by their best-matching question, with the same metadata filters applied inside the
    search, before top-k. Local: SqliteQuestionIndex; GCP has no implementation yet (the setting is refused).
    """

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[np.ndarray]]) -> None:
        """Replace each chunk's question vectors by `vectors[i]` (possibly none); an older generation never
        replaces a newer one (a redelivered message)."""
        ...

    def delete(self, chunk_ids: Sequence[str]) -> None: ...

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        """Chunks by their best question's cosine similarity to `vector` (score), best first."""
        ...


@runtime_checkable
class OcrEngine(Protocol):
    """Reads the text lines on one page image (local: RapidOCR; GCP: Document AI).

    `parse_document(..., ocr=engine.recognize)` calls it for every image upload and every PDF page without a
    text layer; the engine never sees the whole document, so its limits (pages, size) stay per page.
    """

    @property
    def engine_id(self) -> str:
        """Engine and model version, stored with every page it reads (e.g. "rapidocr-3.10.0/PP-OCRv6-small",
        "documentai:ocr123@pretrained-ocr-v2.1-2024-08-07")."""
        ...

    def recognize(self, image: bytes) -> OcrPage:
        """The lines on a page image (PNG, JPEG or TIFF bytes), with confidences and boxes.

        Raises:
            regrag.domain.errors.InvalidInput: the engine refuses this image (permanent).
            regrag.domain.errors.Unavailable: the engine could not answer now (transient).
        """
        ...
