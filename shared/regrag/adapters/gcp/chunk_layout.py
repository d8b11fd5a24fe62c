"""The chunk map's records in the state bucket: the per-document head and the bucket operations it needs.

Layout (under an optional prefix):

    docs/<doc_id>/head.json                          the document: metadata (with version links), its
                                                     current generation, where each live chunk's data is
                                                     (generation, part object) and which parts arrived
    docs/<doc_id>/<generation>/text-<sha>.txt        the stored text every quote is checked against
    docs/<doc_id>/<generation>/part-P-of-N-<sha>.json  the chunks of one message part
    chunk-ids/<chunk_id>.json                        chunk id → doc id (a chunk id hashes its doc id, so this
                                                     never changes; queries only know chunk ids)
    successors/<older_doc_id>/<newer_doc_id>         marker: the newer version supersedes the older one
    keys/<corpus>/<kind>/<sha>/<doc_id>              marker: find_documents (title, repeals) without listing heads
    keys/_source/source/<sha>/<doc_id>               marker: the documents an uploaded object produced (deletes)
    corpora/<corpus>                                 marker: corpus_names (the query path's fan-out)

regrag.adapters.gcp.chunk_store says how they are written and read.
"""

from __future__ import annotations

import builtins
import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from regrag.adapters.gcp.blobstore import Listed
from regrag.domain.errors import Unavailable
from regrag.domain.models import DocumentMeta
from regrag.ports import Blob, BlobInfo

SCHEMA_VERSION = 1
JSON_TYPE = "application/json; charset=utf-8"


class Objects(Protocol):
    """The bucket operations the chunk map needs (GcsBlobStore; an in-memory twin in the tests)."""

    def read_optional(self, name: str) -> Blob | None: ...

    def write(
        self,
        name: str,
        data: bytes,
        metadata: dict[str, str] | None = None,
        *,
        content_type: str | None = None,
        if_generation_match: int | None = None,
    ) -> BlobInfo: ...

    def delete(self, name: str, *, if_generation_match: int | None = None) -> None: ...

    def list(self, prefix: str = "", *, match_glob: str | None = None) -> list[BlobInfo]: ...

    def scan(self, prefix: str = "", *, match_glob: str | None = None) -> builtins.list[Listed]: ...


class StaleWrite(Unavailable):
    """A newer generation of the document was stored while this one was being written: redeliver, and the
    upsert stage will then drop the older message."""

    code = "stale_write"


@dataclass(frozen=True)
class PartRef:
    """One arrived part of a generation: how many parts there are, its chunk ids, and its object."""

    parts: int
    chunk_ids: tuple[str, ...]
    name: str


@dataclass
class Head:
    """The per-document record (docs/<doc_id>/head.json).

    `parts` mirrors the local index's doc_part table (which parts of each generation arrived, with their chunk
    ids); `chunks` says where each live chunk's data is (its generation and part object), since a chunk id
    written again by a newer generation moves to that generation's object. `complete` is the last generation
    written whole (ChunkStore.mark_complete, written after the vectors): a head whose generation is not its
    `complete` was left by a write that did not finish, and the next ingest (or the reconcile job) redoes it.
    A head written before the mark existed has none and counts as whole.
    """

    meta: DocumentMeta
    updated_at: str
    text_name: str
    parts: dict[int, dict[int, PartRef]] = field(default_factory=dict)  # doc generation → part → ref
    chunks: dict[str, tuple[int, str]] = field(default_factory=dict)  # chunk id → (doc generation, object)
    pointers: set[str] = field(default_factory=set)  # chunk ids with a chunk-ids/ object naming this document
    complete: int | None = None

    @property
    def whole(self) -> bool:
        return self.complete == self.meta.generation

    @property
    def generation(self) -> int:
        return self.meta.generation

    def copy(self, **changes: Any) -> Head:
        """A copy whose containers can be changed without touching this head (a CAS retry reuses it)."""
        base = replace(
            self,
            parts={g: dict(p) for g, p in self.parts.items()},
            chunks=dict(self.chunks),
            pointers=set(self.pointers),
        )
        return replace(base, **changes)

    def to_json(self) -> bytes:
        body = {
            "schema_version": SCHEMA_VERSION,
            "meta": self.meta.to_dict(),
            "updated_at": self.updated_at,
            "text": self.text_name,
            "parts": {
                str(g): {
                    str(p): {"parts": r.parts, "chunk_ids": list(r.chunk_ids), "name": r.name}
                    for p, r in sorted(by_part.items())
                }
                for g, by_part in sorted(self.parts.items())
            },
            "chunks": {cid: [g, name] for cid, (g, name) in self.chunks.items()},
            "pointers": sorted(self.pointers),
            "complete": self.complete,
        }
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, raw: bytes) -> Head:
        body = json.loads(raw.decode("utf-8"))
        if body.get("schema_version") != SCHEMA_VERSION:
            raise Unavailable(f"chunk map head has schema_version {body.get('schema_version')!r}; expected 1")
        parts = {
            int(g): {int(p): PartRef(int(r["parts"]), tuple(r["chunk_ids"]), r["name"]) for p, r in by_part.items()}
            for g, by_part in body["parts"].items()
        }
        chunks = {cid: (int(v[0]), str(v[1])) for cid, v in body["chunks"].items()}
        meta = DocumentMeta.from_dict(body["meta"])
        complete = body.get("complete", meta.generation)  # a head from before the mark counts as whole
        return cls(meta, body["updated_at"], body["text"], parts, chunks, set(body["pointers"]), complete)

    def metadata(self) -> dict[str, str]:
        """Custom metadata on the head object, so stats() and the completeness of every document are one listing
        (ASCII: codes and counts only)."""
        return {
            "corpus": self.meta.corpus,
            "chunks": str(len(self.chunks)),
            "updated": self.updated_at,
            "whole": "1" if self.whole else "0",
        }


class MissingObject(Unavailable):
    """A head names an object that is gone (garbage-collected by a concurrent writer) or damaged."""

    code = "chunk_map_object_missing"


def content_sha(data: bytes) -> str:
    """The content hash in the names of text and part objects (a SHA-256 prefix)."""
    return hashlib.sha256(data).hexdigest()[:16]
