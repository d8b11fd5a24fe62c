"""embed: DocumentChunked → vectors for every chunk → ChunksEmbedded message(s).

With the questions-answered index on, the stage also generates, embeds and stores the questions each article
answers (regrag.ingest.questions) before it publishes: the chunk's own upsert, which follows the message,
then writes the chunk's filter columns with the version links only the store knows. A failure there is logged
and counted, never raised: ingestion goes on without those questions.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from regrag import logs
from regrag.domain.errors import InvalidInput
from regrag.domain.messages import ChunksEmbedded, DocumentChunked, split_for_publish
from regrag.domain.models import Chunk
from regrag.ingest.questions import QuestionsIndexer
from regrag.ports import Embedder, Publisher

log = logs.get("embed")


def embedding_text(chunk: Chunk) -> str:
    """What the model embeds: the title and heading path as context, then the chunk's normalised text.

    The breadcrumb helps questions that name a place or an act (在深圳…, 按突发事件应对法…); it is never
    part of a quote, which always comes from `chunk.text`.
    """
    context = " ".join((chunk.meta.title, *chunk.heading_path))
    return f"{context}\n{chunk.search_text}"


def validate_vectors(vectors: np.ndarray, count: int, dimension: int) -> None:
    if vectors.shape != (count, dimension):
        raise InvalidInput(f"embedder returned shape {vectors.shape}, expected ({count}, {dimension})")
    if not np.all(np.isfinite(vectors)):
        raise InvalidInput("embedder returned non-finite values")


def embed_chunks(
    message: DocumentChunked,
    *,
    embedder: Embedder,
    publisher: Publisher,
    topic: str,
    batch_size: int = 32,
    questions: QuestionsIndexer | None = None,
) -> ChunksEmbedded:
    """Embed the chunks of one message (document task type) in batches and publish the result.

    `questions`: when given, the questions-answered index is filled for these chunks first (never raises).
    """
    started = time.perf_counter()
    texts = [embedding_text(c) for c in message.chunks]
    parts = [embedder.embed_documents(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
    vectors = np.vstack(parts) if parts else np.zeros((0, embedder.dimension), dtype=np.float32)
    validate_vectors(vectors, len(texts), embedder.dimension)
    out = ChunksEmbedded(
        message.meta, message.text, message.chunks, tuple(vectors), embedder.model_id, message.part, message.parts
    )
    asked = questions.index_chunks(message.chunks).to_dict() if questions is not None else None
    pieces = split_for_publish(out)
    for piece in pieces:
        publisher.publish(topic, piece.to_json(), {"kind": piece.kind, "doc_id": message.meta.doc_id})
    logs.event(
        log,
        logging.INFO,
        "chunks embedded",
        doc_id=message.meta.doc_id,
        chunks=len(texts),
        part=message.part,
        parts=message.parts,
        model=embedder.model_id,
        ms=round((time.perf_counter() - started) * 1000, 1),
        questions=asked,
    )
    return out
