"""ingest: a bucket object → parsed, normalised, chunked document → DocumentChunked message(s).

Metadata precedence, field by field (the first source that gives a value wins):
  1. the sidecar object `<object>.meta.json` (JSON; Chinese allowed),
  2. the object's custom metadata (ASCII; percent-encoded values are decoded),
  3. inferred from the text: title from the heading, effective date from 自…起施行 or the latest header date,
     province and level from the title,
  4. defaults (province national, asset general, doc_class general, level unknown, corpus from the prefix
     `corpora/<name>/` or `default`).
Each value's source is kept in `DocumentMeta.provenance`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import re
import urllib.parse
from collections import Counter
from dataclasses import dataclass
from typing import Any

from regrag import logs
from regrag.domain.errors import InvalidInput, UnsupportedDocument
from regrag.domain.messages import DocumentChunked, DocumentDeleted, split_for_publish
from regrag.domain.models import DEFAULT_CORPUS, Chunk, Document, DocumentMeta
from regrag.ports import Blob, BlobStore, Publisher
from regrag.text import metadata as infer
from regrag.text.chunking import KIND_ARTICLE, split_structure
from regrag.text.normalize import normalize
from regrag.text.parse import UnsupportedDocument as ParseFailure
from regrag.text.parse import parse_document

log = logs.get("ingest")

SIDECAR_SUFFIX = ".meta.json"
IGNORED_NAMES = ("manifest.jsonl",)
_META_FIELDS = (
    "doc_id", "title", "effective_date", "effective_to", "province", "asset", "doc_class",
    "regulation_level", "supersedes", "source_url", "source", "corpus",
)  # fmt: skip
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_CODE_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_CORPUS_PREFIX_RE = re.compile(r"^corpora/([a-z0-9][a-z0-9_-]{0,39})/")


@dataclass(frozen=True)
class IngestResult:
    """What happened to one object."""

    status: str  # chunked | skipped | deleted
    source_name: str
    doc_id: str | None = None
    generation: int = 0
    format: str | None = None
    encoding: str | None = None
    chunks: int = 0
    articles: int = 0
    messages: int = 0
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def is_sidecar(name: str) -> bool:
    return name.endswith(SIDECAR_SUFFIX)


def derive_doc_id(name: str) -> str:
    """A stable ASCII id from the object name: the file stem if it is a clean id, else a hash of the name."""
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if _ID_RE.match(stem):
        return stem
    return "doc-" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:16]


def chunk_id(doc_id: str, kind: str, label: str, occurrence: int, part: int) -> str:
    """Deterministic chunk id: a hash of (doc id, article path, part), stable across re-ingests and amendments
    that keep the article's label."""
    key = "\x1f".join((doc_id, kind, label, str(occurrence), str(part)))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:24]


def _parse_sidecar(name: str, blob: Blob | None) -> dict[str, Any]:
    if blob is None:
        return {}
    try:
        data = json.loads(blob.data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{name}: sidecar is not valid UTF-8 JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"{name}: sidecar must hold a JSON object")
    if "url" in data and "source_url" not in data:
        data["source_url"] = data["url"]
    return {k: data[k] for k in _META_FIELDS if data.get(k) not in (None, "")}


def _from_object_metadata(metadata: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _META_FIELDS:
        raw = metadata.get(key) or metadata.get(key.replace("_", "-"))
        if raw:
            out[key] = urllib.parse.unquote(raw)  # GCS custom metadata is kept ASCII: Chinese arrives %-encoded
    return out


def _validate(source: str, name: str, values: dict[str, Any]) -> dict[str, Any]:
    out = dict(values)
    for key in ("effective_date", "effective_to"):
        if key in out:
            try:
                out[key] = dt.date.fromisoformat(str(out[key]).strip()).isoformat()
            except ValueError as exc:
                raise InvalidInput(f"{name}: {source} {key}={out[key]!r} is not a YYYY-MM-DD date") from exc
    for key in ("province", "asset", "doc_class", "regulation_level", "corpus"):
        if key in out:
            out[key] = str(out[key]).strip().lower()
            if not _CODE_RE.match(out[key]) and not (
                key == "corpus" and re.match(r"^[a-z0-9][a-z0-9_-]{0,39}$", out[key])
            ):
                raise InvalidInput(
                    f"{name}: {source} {key}={values[key]!r} must be a lower-case code like 'gd' or 'grid'"
                )
    for key in ("doc_id", "supersedes"):
        if key in out and not _ID_RE.match(str(out[key])):
            raise InvalidInput(f"{name}: {source} {key}={out[key]!r} must be ASCII letters, digits, '.', '_' or '-'")
    if "title" in out:
        out["title"] = str(out["title"]).strip().strip("《》")
    return out


def build_document(name: str, blob: Blob, sidecar: Blob | None, max_chars: int) -> Document:
    """Parse, normalise and chunk one object. Raises UnsupportedDocument / InvalidInput on bad input."""
    try:
        parsed = parse_document(name, blob.data)
    except ParseFailure as exc:
        raise UnsupportedDocument(str(exc)) from exc
    norm = normalize(parsed.text)
    structure = split_structure(norm, max_chars=max_chars, markdown=parsed.format == "md")
    if not structure.segments:
        raise UnsupportedDocument(f"{name}: no regulation text found (only a title or header lines)")

    layers = [
        ("sidecar", _validate("sidecar", name, _parse_sidecar(name + SIDECAR_SUFFIX, sidecar))),
        ("object-metadata", _validate("object metadata", name, _from_object_metadata(blob.metadata))),
    ]
    title = parsed.title_hint or structure.title or name.rsplit("/", 1)[-1]
    inferred: dict[str, Any] = {"title": title}
    date = infer.infer_effective_date(norm.text, structure.header_lines)
    if date:
        inferred["effective_date"] = date
    province = infer.infer_province(title)
    if province:
        inferred["province"] = province
    level = infer.infer_level(title, province)
    if level:
        inferred["regulation_level"] = level
    prefix = _CORPUS_PREFIX_RE.match(name)
    defaults: dict[str, Any] = {
        "doc_id": derive_doc_id(name),
        "corpus": prefix.group(1) if prefix else DEFAULT_CORPUS,
    }
    layers += [("inferred", inferred), ("default", defaults)]
    values: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    for source, layer in layers:
        for key, value in layer.items():
            if key not in values:
                values[key] = value
                provenance[key] = source
    text_hash = hashlib.sha256(parsed.text.encode("utf-8")).hexdigest()
    meta = DocumentMeta(
        **values,
        source_name=name,
        generation=blob.generation,
        content_hash=text_hash,
        format=parsed.format,
        encoding=parsed.encoding,
        provenance=provenance,
    )

    seen: Counter[tuple[str, str]] = Counter()
    chunks: list[Chunk] = []
    for seg in structure.segments:
        if seg.part == 0:
            seen[(seg.kind, seg.label)] += 1
        occurrence = seen[(seg.kind, seg.label)]
        text = parsed.text[seg.start : seg.end]
        search_text = normalize(text).text
        chunks.append(
            Chunk(
                id=chunk_id(meta.doc_id, seg.kind, seg.label, occurrence, seg.part),
                doc_id=meta.doc_id,
                kind=seg.kind,
                article=seg.label,
                part=seg.part,
                parts=seg.parts,
                ordinal=seg.ordinal,
                heading_path=seg.heading_path,
                start=seg.start,
                end=seg.end,
                text=text,
                search_text=search_text,
                meta=meta,
            )
        )
    return Document(meta, parsed.text, tuple(chunks), tuple(structure.header_lines))


def ingest_object(name: str, *, blobs: BlobStore, publisher: Publisher, topic: str, max_chars: int) -> IngestResult:
    """Read, chunk and publish one object. A sidecar re-ingests the document it describes."""
    base = name.rsplit("/", 1)[-1]
    if base in IGNORED_NAMES or base.startswith("."):
        return IngestResult("skipped", name, reason="not a document (manifest or hidden file)")
    if is_sidecar(name):
        target = name[: -len(SIDECAR_SUFFIX)]
        if blobs.read_optional(target) is None:
            return IngestResult("skipped", name, reason="sidecar for a document not uploaded yet")
        return ingest_object(target, blobs=blobs, publisher=publisher, topic=topic, max_chars=max_chars)
    blob = blobs.read(name)
    sidecar = blobs.read_optional(name + SIDECAR_SUFFIX)
    document = build_document(name, blob, sidecar, max_chars)
    message = DocumentChunked(document.meta, document.text, document.chunks)
    pieces = split_for_publish(message)
    for piece in pieces:
        publisher.publish(topic, piece.to_json(), {"kind": piece.kind, "doc_id": document.meta.doc_id})
    result = IngestResult(
        "chunked",
        name,
        doc_id=document.meta.doc_id,
        generation=blob.generation,
        format=document.meta.format,
        encoding=document.meta.encoding,
        chunks=len(document.chunks),
        articles=len({(c.article, c.ordinal) for c in document.chunks if c.kind == KIND_ARTICLE}),
        messages=len(pieces),
    )
    logs.event(log, logging.INFO, "document chunked", **result.to_dict())
    return result


def delete_object(name: str, generation: int, *, publisher: Publisher, topic: str) -> IngestResult:
    """Announce that an object was deleted; upsert removes the documents it produced unless they are newer."""
    if is_sidecar(name):
        return IngestResult("skipped", name, reason="sidecar deleted; the document keeps its stored metadata")
    doc = derive_doc_id(name)  # a hint only: upsert finds documents by source name
    msg = DocumentDeleted(doc, name, generation, "")
    publisher.publish(topic, msg.to_json(), {"kind": msg.kind, "doc_id": doc})
    return IngestResult("deleted", name, doc_id=doc, generation=generation, messages=1)
