"""Events between stages, named in the past tense, serialised as JSON with a schema version.

A document's chunks travel in one or more parts (`part`/`parts`) so that no message exceeds the Pub/Sub
limit; every part carries the document metadata and text, so parts can be handled in any order.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from regrag.domain.errors import InvalidInput
from regrag.domain.models import Chunk, DocumentMeta

SCHEMA_VERSION = 1
MAX_MESSAGE_BYTES = 9_000_000  # Pub/Sub allows 10 MB per publish request; keep a margin for attributes


def _chunk_to_wire(chunk: Chunk) -> dict[str, Any]:
    return chunk.to_dict(with_meta=False)  # the message carries the document metadata once


def _chunk_from_wire(data: dict[str, Any], meta: DocumentMeta) -> Chunk:
    return Chunk.from_dict({**data, "meta": meta})


def encode_vector(vector: np.ndarray) -> str:
    """float32 little-endian, base64: a third of the size of JSON floats, and exact."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").copy()


@dataclass(frozen=True)
class DocumentChunked:
    """ingest → embed: a document (or one part of its chunks) was parsed and chunked."""

    meta: DocumentMeta
    text: str
    chunks: tuple[Chunk, ...]
    part: int = 0
    parts: int = 1

    kind = "DocumentChunked"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "document": self.meta.to_dict(),
            "text": self.text,
            "chunks": [_chunk_to_wire(c) for c in self.chunks],
            "part": self.part,
            "parts": self.parts,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocumentChunked:
        _check(data, cls.kind, ("document", "text", "chunks"))
        meta = DocumentMeta.from_dict(data["document"])
        chunks = tuple(_chunk_from_wire(c, meta) for c in data["chunks"])
        return cls(meta, data["text"], chunks, int(data.get("part", 0)), int(data.get("parts", 1)))


@dataclass(frozen=True)
class ChunksEmbedded:
    """embed → upsert: the chunks of a document part, with their vectors."""

    meta: DocumentMeta
    text: str
    chunks: tuple[Chunk, ...]
    vectors: tuple[np.ndarray, ...]
    model: str
    part: int = 0
    parts: int = 1

    kind = "ChunksEmbedded"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "document": self.meta.to_dict(),
            "text": self.text,
            "chunks": [_chunk_to_wire(c) for c in self.chunks],
            "vectors": [encode_vector(v) for v in self.vectors],
            "model": self.model,
            "part": self.part,
            "parts": self.parts,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChunksEmbedded:
        _check(data, cls.kind, ("document", "text", "chunks", "vectors", "model"))
        meta = DocumentMeta.from_dict(data["document"])
        chunks = tuple(_chunk_from_wire(c, meta) for c in data["chunks"])
        vectors = tuple(decode_vector(v) for v in data["vectors"])
        if len(vectors) != len(chunks):
            raise InvalidInput(f"{cls.kind}: {len(chunks)} chunks but {len(vectors)} vectors")
        return cls(
            meta, data["text"], chunks, vectors, data["model"], int(data.get("part", 0)), int(data.get("parts", 1))
        )


@dataclass(frozen=True)
class DocumentDeleted:
    """ingest → upsert: the object behind a document was deleted (or archived) in the bucket."""

    doc_id: str
    source_name: str
    generation: int
    corpus: str

    kind = "DocumentDeleted"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": self.kind,
            "doc_id": self.doc_id,
            "source_name": self.source_name,
            "generation": self.generation,
            "corpus": self.corpus,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocumentDeleted:
        _check(data, cls.kind, ("doc_id", "generation"))
        return cls(data["doc_id"], data.get("source_name", ""), int(data["generation"]), data.get("corpus", ""))


Message = DocumentChunked | ChunksEmbedded | DocumentDeleted
_KINDS: dict[str, Any] = {c.kind: c for c in (DocumentChunked, ChunksEmbedded, DocumentDeleted)}


def _check(data: dict[str, Any], kind: str, required: tuple[str, ...]) -> None:
    if not isinstance(data, dict):
        raise InvalidInput(f"{kind}: message body is not a JSON object")
    if data.get("kind") != kind:
        raise InvalidInput(f"expected a {kind} message, got kind={data.get('kind')!r}")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InvalidInput(f"{kind}: unsupported schema_version {version!r} (this code reads {SCHEMA_VERSION})")
    missing = [k for k in required if k not in data]
    if missing:
        raise InvalidInput(f"{kind}: missing fields {missing}")


def message_from_json(data: Any) -> Message:
    """Decode any stage message by its `kind`; raise InvalidInput for anything else."""
    if not isinstance(data, dict) or data.get("kind") not in _KINDS:
        kind = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise InvalidInput(f"unknown message kind {kind!r}; expected one of {sorted(_KINDS)}")
    try:
        return _KINDS[data["kind"]].from_json(data)  # type: ignore[no-any-return]
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InvalidInput):
            raise
        raise InvalidInput(f"malformed {data['kind']} message: {exc}") from exc


def encoded_size(message: Message) -> int:
    return len(json.dumps(message.to_json(), ensure_ascii=False).encode("utf-8"))


def split_for_publish(message: DocumentChunked | ChunksEmbedded, max_bytes: int = MAX_MESSAGE_BYTES) -> list[Any]:
    """Split a message's chunks into parts that each serialise to at most `max_bytes`.

    Parts keep the document metadata and text. A part is numbered within the message it came from, so an
    already-split message is split further as `part * k + i` of `parts * k` (ordering is never relied upon).
    """
    if encoded_size(message) <= max_bytes:
        return [message]
    n = len(message.chunks)
    if n <= 1:
        raise InvalidInput(f"one chunk of {message.meta.doc_id} does not fit in a {max_bytes}-byte message")
    k = 2
    while True:
        size = -(-n // k)
        groups = [range(i, min(i + size, n)) for i in range(0, n, size)]
        pieces = [
            _subset(message, g, message.part * len(groups) + j, message.parts * len(groups))
            for j, g in enumerate(groups)
        ]
        if all(encoded_size(p) <= max_bytes for p in pieces):
            return pieces
        if size == 1:
            raise InvalidInput(f"one chunk of {message.meta.doc_id} does not fit in a {max_bytes}-byte message")
        k *= 2


def part_span(part: int, parts: int) -> tuple[Fraction, Fraction]:
    """The share of the document's chunks that part `part` of `parts` carries, as [start, end) of the whole.

    A part split again downstream (embed's vectors make a message larger than the one it came from) becomes
    parts `part * k + i` of `parts * k`, which share its span: so parts of one document can be numbered out of
    different totals (0-1 of 8, 1 of 4, 4-7 of 8), and only their spans say whether they make the whole."""
    return Fraction(part, parts), Fraction(part + 1, parts)


def covers_whole(parts: Iterable[tuple[int, int]]) -> bool:
    """Whether (part, parts) pairs together carry every chunk of the document (redelivered duplicates allowed)."""
    end = Fraction(0)
    for start, stop in sorted(part_span(p, n) for p, n in set(parts)):
        if start > end:
            return False
        end = max(end, stop)
    return end == 1


def _subset(message: Any, idx: range, part: int, parts: int) -> Any:
    chunks = tuple(message.chunks[i] for i in idx)
    if isinstance(message, ChunksEmbedded):
        vectors = tuple(message.vectors[i] for i in idx)
        return ChunksEmbedded(message.meta, message.text, chunks, vectors, message.model, part, parts)
    return DocumentChunked(message.meta, message.text, chunks, part, parts)
