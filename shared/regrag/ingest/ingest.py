"""ingest: a bucket object → parsed, normalised, chunked document → DocumentChunked message(s).

Metadata comes from the sidecar, the object's metadata, the text and defaults, in that order of precedence,
except for the dates, where a 施行 clause in the text corrects an earlier sidecar date (regrag.ingest.metadata).
Oversized objects are refused before any parsing (IngestLimits). Page images and PDF pages without a text layer
are read by the OCR engine of `OcrOptions` (none: such documents are refused); a scan over an OCR limit (pages,
pixels, seconds per page) is refused too, with the limit named: a permanent failure the failure recorder keeps.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from regrag import logs
from regrag.config import Settings
from regrag.domain.errors import UnsupportedDocument
from regrag.domain.ids import DOC_ID_RE
from regrag.domain.messages import DocumentChunked, DocumentDeleted, split_for_publish
from regrag.domain.models import INCOMPLETE_TEXT, PROVINCE_UNKNOWN, Chunk, Document, DocumentMeta
from regrag.domain.ocr import PageSpan, low_confidence_pages
from regrag.ingest import metadata
from regrag.ports import Blob, BlobStore, OcrEngine, Publisher
from regrag.text import inference as infer
from regrag.text.chunking import KIND_ARTICLE, Segment, Structure, split_structure
from regrag.text.dates import states_entry_into_force
from regrag.text.images import OcrLimits
from regrag.text.normalize import normalize
from regrag.text.parse import ParsedText, UnreadableDocument, parse_document
from regrag.text.places import issuing_place

log = logs.get("ingest")

SIDECAR_SUFFIX = ".meta.json"
IGNORED_NAMES = ("manifest.jsonl",)
# Bumped whenever the rules that derive a document's metadata or chunks change: a stored document derived by
# older rules is re-ingested even when its bytes are unchanged (regrag ingest, the reconcile job).
INGEST_VERSION = 6  # 3: page spans (and OCR) of PDFs and images; 4: province from the issuer, unknown flagged;
# 5: scans turned upright, unsure lines read again, article labels kept; 6: a text no article of which says when it
# takes effect flagged as possibly incomplete


@dataclass(frozen=True)
class OcrOptions:
    """How ingest reads scans: the engine (None: images and text-less PDF pages are refused), the limits per
    document (pages, pixels per page image, seconds per page), and the mean confidence below which an OCR'd
    page is listed as low-confidence."""

    engine: OcrEngine | None = None
    limits: OcrLimits = field(default_factory=OcrLimits)
    low_confidence: float = 0.9

    @classmethod
    def from_settings(cls, settings: Settings, engine: OcrEngine | None) -> OcrOptions:
        """The wired OCR engine with the limits and the low-confidence threshold of the settings."""
        limits = OcrLimits(
            max_pages=settings.ocr_max_pages,
            max_image_pixels=settings.ocr_max_image_pixels,
            page_timeout_s=settings.ocr_page_timeout_s,
            max_rereads_per_page=settings.ocr_max_rereads,
        )
        return cls(engine, limits, settings.ocr_low_confidence)


@dataclass(frozen=True)
class IngestLimits:
    """What one document may be: its bytes, and its text once extracted (the longest law in the corpus, the
    民法典, is about 300,000 characters; a 56 MB text file took 22 s and 2.7 GB before failing late)."""

    max_bytes: int = 64_000_000
    max_chars: int = 3_000_000


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
    # what ingest corrected or doubted about the dates it was given (DocumentMeta.date_warnings)
    date_warnings: tuple[str, ...] | None = None
    # effective_date is an amendment's adoption, the text not stating when it took effect (DocumentMeta)
    effective_date_uncertain: bool | None = None
    # what ingest could not tell about the rest of the metadata (DocumentMeta.metadata_warnings)
    metadata_warnings: tuple[str, ...] | None = None
    # scans: the pages OCR read, the engine, and the OCR'd pages below the confidence threshold
    ocr_pages: tuple[int, ...] | None = None
    ocr_engine: str | None = None
    low_confidence_pages: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def is_sidecar(name: str) -> bool:
    return name.endswith(SIDECAR_SUFFIX)


def derive_doc_id(name: str) -> str:
    """A stable ASCII id from the object name: the file stem if it is a clean id, else a hash of the name."""
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if DOC_ID_RE.match(stem):
        return stem
    return "doc-" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:16]


def chunk_id(doc_id: str, kind: str, label: str, occurrence: int, part: int) -> str:
    """Deterministic chunk id: a hash of (doc id, article path, part), stable across re-ingests and amendments
    that keep the article's label."""
    key = "\x1f".join((doc_id, kind, label, str(occurrence), str(part)))
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:24]


def build_document(
    name: str,
    blob: Blob,
    sidecar: Blob | None,
    max_chars: int,
    limits: IngestLimits | None = None,
    ocr: OcrOptions | None = None,
) -> Document:
    """Parse, normalise and chunk one object. Raises UnsupportedDocument / InvalidInput on bad input (a scan
    over an OCR limit included), Unavailable when the OCR engine cannot answer now."""
    limits = limits or IngestLimits()
    ocr = ocr or OcrOptions()
    parsed = _parse_within_limits(name, blob, limits, ocr)
    norm = normalize(parsed.text)
    structure = split_structure(norm, max_chars=max_chars, markdown=parsed.format == "md")
    if not structure.segments:
        raise UnsupportedDocument(f"{name}: no regulation text found (only a title or header lines)")
    meta = _document_meta(name, blob, sidecar, parsed, norm.text, structure, ocr)
    chunks = _chunks(meta, parsed.text, structure.segments)
    return Document(meta, parsed.text, tuple(chunks), tuple(structure.header_lines))


def _parse_within_limits(name: str, blob: Blob, limits: IngestLimits, ocr: OcrOptions) -> ParsedText:
    """The text of the object (OCR'd where it has no text layer), refused over the size limits."""
    if len(blob.data) > limits.max_bytes:
        raise UnsupportedDocument(
            f"{name}: {len(blob.data) / 1e6:.1f} MB is over the {limits.max_bytes / 1e6:.0f} MB limit for one document "
            "(REGRAG_MAX_DOCUMENT_MB)"
        )
    try:
        recognize = ocr.engine.recognize if ocr.engine is not None else None
        parsed = parse_document(name, blob.data, ocr=recognize, limits=ocr.limits)
    except UnreadableDocument as exc:
        raise UnsupportedDocument(str(exc)) from exc
    if len(parsed.text) > limits.max_chars:
        raise UnsupportedDocument(
            f"{name}: {len(parsed.text):,} characters of text is over the {limits.max_chars:,}-character limit for "
            "one document (REGRAG_MAX_DOCUMENT_CHARS): split it into its regulations"
        )
    return parsed


def incomplete_warning(structure: Structure) -> str:
    """What to say of a text of articles none of which says when it takes effect (本条例自…起施行): a regulation's
    last articles do, so the text is likely cut short (a header's 施行 line does not count: it is what a truncated
    copy keeps). The source's own truncated texts (its README: zj-0004 stops at article 9, 长江保护法 at 79 of 96,
    eleven 山东 texts lacking their final articles) are 13 of the 17 documents of the corpus this reads so."""
    last = [seg.label for seg in structure.segments if seg.kind == KIND_ARTICLE][-1]
    return (
        f"{INCOMPLETE_TEXT}: it states no entry into force (本…自…起施行), which a regulation's last articles "
        f"do, and ends at {last}; compare it with the official text"
    )


def _document_meta(
    name: str,
    blob: Blob,
    sidecar: Blob | None,
    parsed: ParsedText,
    normalized: str,
    structure: Structure,
    ocr: OcrOptions,
) -> DocumentMeta:
    """Metadata, field by field from the sidecar, the object's metadata, the text, then defaults; dates from the
    text's entry-into-force clause (metadata.resolve_dates)."""
    explicit = [
        ("sidecar", metadata.sidecar_values(name + SIDECAR_SUFFIX, sidecar)),
        ("object-metadata", metadata.object_metadata_values(name, blob.metadata)),
    ]
    title = parsed.title_hint or structure.title or name.rsplit("/", 1)[-1]
    inferred: dict[str, Any] = {"title": title}
    place = issuing_place(title, [*structure.header_lines, *infer.signature_lines(normalized)])
    if place.province:
        inferred["province"] = place.province
    level = infer.infer_level(title, place.province)
    if level:
        inferred["regulation_level"] = level
    values, provenance = metadata.layered(
        [
            *explicit,
            ("inferred", inferred),
            # never silently national: a document that does not say where it was issued applies nowhere known
            ("unknown", {"province": infer.UNKNOWN_PROVINCE}),
            ("default", metadata.defaults(name, derive_doc_id)),
        ]
    )
    unknown_place = provenance["province"] == "unknown"
    values["place_evidence"] = place.evidence if provenance["province"] == "inferred" else None
    values["metadata_warnings"] = (
        (f"{PROVINCE_UNKNOWN}: {place.doubt}; give it in a sidecar (province)",) if unknown_place else ()
    )
    dates = metadata.resolve_dates(values, provenance, normalized, structure.header_lines)
    headings = {seg.label: seg.heading_path for seg in structure.segments if seg.kind == KIND_ARTICLE}
    if headings and not states_entry_into_force(normalized):
        values["metadata_warnings"] += (incomplete_warning(structure),)
    dates.values["exceptions"] = metadata.with_chapter_articles(dates.values["exceptions"], headings)
    return DocumentMeta(
        **{**values, **dates.values},
        source_name=name,
        generation=blob.generation,
        content_hash=hashlib.sha256(parsed.text.encode("utf-8")).hexdigest(),
        format=parsed.format,
        encoding=parsed.encoding,
        ingest_version=INGEST_VERSION,
        # as stored (boxes in thousandths, confidences rounded), so the metadata compares equal once read back
        pages=tuple(PageSpan.from_dict(p.to_dict()) for p in parsed.pages),
        ocr_engine=parsed.ocr_engine,
        low_confidence_pages=tuple(low_confidence_pages(parsed.pages, ocr.low_confidence)),
        provenance={**provenance, **dates.provenance},
    )


def _chunks(meta: DocumentMeta, text: str, segments: Sequence[Segment]) -> list[Chunk]:
    """One chunk per segment, its text a verbatim slice of the stored text, its id deterministic."""
    seen: Counter[tuple[str, str]] = Counter()
    chunks: list[Chunk] = []
    for seg in segments:
        if seg.part == 0:
            seen[(seg.kind, seg.label)] += 1
        piece = text[seg.start : seg.end]
        chunks.append(
            Chunk(
                id=chunk_id(meta.doc_id, seg.kind, seg.label, seen[(seg.kind, seg.label)], seg.part),
                doc_id=meta.doc_id,
                kind=seg.kind,
                article=seg.label,
                part=seg.part,
                parts=seg.parts,
                ordinal=seg.ordinal,
                heading_path=seg.heading_path,
                start=seg.start,
                end=seg.end,
                text=piece,
                search_text=normalize(piece).text,
                meta=meta,
            )
        )
    return chunks


def ingest_object(
    name: str,
    *,
    blobs: BlobStore,
    publisher: Publisher,
    topic: str,
    max_chars: int,
    limits: IngestLimits | None = None,
    ocr: OcrOptions | None = None,
) -> IngestResult:
    """Read, chunk and publish one object. A sidecar re-ingests the document it describes."""
    base = name.rsplit("/", 1)[-1]
    if base in IGNORED_NAMES or base.startswith("."):
        return IngestResult("skipped", name, reason="not a document (manifest or hidden file)")
    if is_sidecar(name):
        target = name[: -len(SIDECAR_SUFFIX)]
        if blobs.read_optional(target) is None:
            return IngestResult("skipped", name, reason="sidecar for a document not uploaded yet")
        return ingest_object(
            target, blobs=blobs, publisher=publisher, topic=topic, max_chars=max_chars, limits=limits, ocr=ocr
        )
    blob = blobs.read(name)
    sidecar = blobs.read_optional(name + SIDECAR_SUFFIX)
    document = build_document(name, blob, sidecar, max_chars, limits, ocr)
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
        date_warnings=document.meta.date_warnings or None,
        effective_date_uncertain=document.meta.effective_date_uncertain or None,
        metadata_warnings=document.meta.metadata_warnings or None,
        ocr_pages=tuple(p.page for p in document.meta.pages if p.ocr) or None,
        ocr_engine=document.meta.ocr_engine,
        low_confidence_pages=document.meta.low_confidence_pages or None,
    )
    logs.event(log, logging.INFO, "document chunked", **result.to_dict())
    if document.meta.low_confidence_pages:
        logs.event(log, logging.WARNING, "OCR confidence low", doc_id=document.meta.doc_id,
                   pages=list(document.meta.low_confidence_pages), engine=document.meta.ocr_engine)  # fmt: skip
    for warning in document.meta.date_warnings:
        logs.event(log, logging.WARNING, "document date corrected", doc_id=document.meta.doc_id, warning=warning)
    for warning in document.meta.metadata_warnings:
        logs.event(log, logging.WARNING, "document metadata unknown", doc_id=document.meta.doc_id, warning=warning)
    return result


def delete_object(name: str, generation: int, *, publisher: Publisher, topic: str) -> IngestResult:
    """Announce that an object was deleted; upsert removes the documents it produced unless they are newer."""
    if is_sidecar(name):
        return IngestResult("skipped", name, reason="sidecar deleted; the document keeps its stored metadata")
    doc = derive_doc_id(name)  # a hint only: upsert finds documents by source name
    msg = DocumentDeleted(doc, name, generation, "")
    publisher.publish(topic, msg.to_json(), {"kind": msg.kind, "doc_id": doc})
    return IngestResult("deleted", name, doc_id=doc, generation=generation, messages=1)
