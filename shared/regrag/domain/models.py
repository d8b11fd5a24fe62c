"""The data that flows between stages, as typed, immutable values."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from regrag.domain.ocr import PageSpan, pages_for_span

DEFAULT_CORPUS = "default"


OPEN_END = 99991231  # date_int of the effective_to of a version still in force (both indexes' restricts)


def date_int(value: str | None) -> int | None:
    """'2024-01-31' → 20240131: dates as integers for numeric range filters (never floats)."""
    if not value:
        return None
    return int(value.replace("-", ""))


@dataclass(frozen=True)
class DateException:
    """Provisions that take effect on another day than the rest of the document (本法第三十六条自…起施行)."""

    scope: str  # the clause's words naming them: 第三十六条, 第五章, 第十条至第十二条
    articles: tuple[str, ...]  # the article labels that scope covers, where it names articles
    date: str
    clause: str  # the verbatim clause


@dataclass(frozen=True)
class TitleReference:
    """Another act this text names in a clause that matters for versions: one it repeals (……同时废止) or the law
    it implements (根据《中华人民共和国电力法》，制定本条例). `doc_id` is filled in when the store holds it."""

    kind: str  # repeals | implements
    title: str
    clause: str
    date: str | None = None
    doc_id: str | None = None
    key: str = ""  # the title's key (regrag.text.relations.title_key): how stores find the documents it names


REPEALS = "repeals"
SOURCE = "source"  # find_documents(SOURCE_SCOPE, SOURCE, object name): the documents an object produced
SOURCE_SCOPE = "_source"  # not a corpus: source names are looked up across corpora
IMPLEMENTS = "implements"


# how ingest's metadata warnings begin (DocumentMeta.metadata_warnings), so that what reads them can tell them apart:
# a province nothing tells, a text that may be cut short
PROVINCE_UNKNOWN = "province unknown"
INCOMPLETE_TEXT = "text may be incomplete"
NATIONAL = "national"  # the province of a rule that applies everywhere


def warned(warnings: Sequence[str], kind: str) -> bool:
    """Whether metadata warnings hold one of this kind (PROVINCE_UNKNOWN, INCOMPLETE_TEXT: its opening words)."""
    return any(w.startswith(kind) for w in warnings)


@dataclass(frozen=True)
class DocumentMeta:
    """What is known about one version of a regulation, and where each value came from.

    Two dates per version: `promulgated` (公布/通过/修正/修订: when this text was adopted) and `effective_date`
    (施行: when it took effect, which is what 〔…，生效：date〕 cites and what as-of questions compare with).
    They differ for about half of all laws (公司法 2023: promulgated 2023-12-29, in force 2024-07-01).
    `effective_to` is set when the version stops being in force: the day its successor took effect.
    """

    doc_id: str
    title: str
    effective_date: str | None = None
    effective_to: str | None = None
    province: str = "national"
    asset: str = "general"
    doc_class: str = "general"
    regulation_level: str = "unknown"
    supersedes: str | None = None
    superseded_by: str | None = None
    source_url: str | None = None
    corpus: str = DEFAULT_CORPUS
    source_name: str = ""
    generation: int = 0
    content_hash: str = ""
    format: str = "md"
    encoding: str = ""
    source: str | None = None  # provenance string from the publisher (e.g. a repository path)
    promulgated: str | None = None
    title_key: str = ""  # the title as versions share it (regrag.text.relations.title_key), set at ingest
    effective_clause: str | None = None  # the verbatim 施行 clause `effective_date` was read from
    # `effective_date` is the adoption of the latest amendment, whose own entry into force the text does not state
    # (可再生能源法: amended 2009-12-26, in force 2010-04-01); `amendment_line` is the header line recording it.
    # A sidecar's amendment_effective_date settles it (regrag.ingest.metadata.resolve_dates)
    effective_date_uncertain: bool = False
    amendment_line: str | None = None
    # the sidecar's 施行 of the latest amendment, when the text does not state it
    amendment_effective_date: str | None = None
    exceptions: tuple[DateException, ...] = ()
    references: tuple[TitleReference, ...] = ()
    # what ingest corrected or doubted about the dates it was given (shown by `regrag audit`)
    date_warnings: tuple[str, ...] = ()
    # what ingest could not tell about the other fields, e.g. a province no sidecar gives and the text does not
    # tell (shown by `regrag ingest` and `regrag audit`)
    metadata_warnings: tuple[str, ...] = ()
    # the words an inferred province was read from: "title: 深圳", "issuer: 国务院" (regrag.text.places)
    place_evidence: str | None = None
    # the rules that derived this metadata: a re-ingest of unchanged bytes redoes a document derived by older ones
    ingest_version: int = 0
    # PDFs and page images: where each page's text lies in the stored text, whether OCR read it (with its mean
    # confidence and the lines' boxes); `ocr_engine` read the OCR'd pages; `low_confidence_pages` are the OCR'd
    # pages whose confidence was below REGRAG_OCR_LOW_CONFIDENCE at ingest (quotes from them carry a note)
    pages: tuple[PageSpan, ...] = ()
    ocr_engine: str | None = None
    low_confidence_pages: tuple[int, ...] = ()
    # field name → "sidecar" | "object-metadata" | "text" | "inferred" | "unknown" (province: the text does not
    # tell and nothing else said; the value is UNKNOWN_PROVINCE) | "default"
    provenance: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def may_be_incomplete(self) -> bool:
        """Ingest found no article saying when the text takes effect (ingest.incomplete_warning)."""
        return warned(self.metadata_warnings, INCOMPLETE_TEXT)

    def to_dict(self) -> dict[str, Any]:
        pages, self_without = self.pages, replace(self, pages=())
        data = asdict(self_without)
        data["pages"] = [p.to_dict() for p in pages]  # compact: boxes as per-mille rows, not nested dicts
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocumentMeta:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["exceptions"] = tuple(
            e if isinstance(e, DateException) else DateException(**{**e, "articles": tuple(e.get("articles", ()))})
            for e in values.get("exceptions") or ()
        )
        values["references"] = tuple(
            r if isinstance(r, TitleReference) else TitleReference(**r) for r in values.get("references") or ()
        )
        values["date_warnings"] = tuple(values.get("date_warnings") or ())
        values["metadata_warnings"] = tuple(values.get("metadata_warnings") or ())
        values["pages"] = tuple(
            p if isinstance(p, PageSpan) else PageSpan.from_dict(p) for p in values.get("pages") or ()
        )
        values["low_confidence_pages"] = tuple(int(n) for n in values.get("low_confidence_pages") or ())
        return cls(**values)

    def pages_of(self, start: int, end: int) -> tuple[int, ...]:
        """The pages a span [start, end) of the stored text lies on (empty without page information)."""
        return tuple(pages_for_span(self.pages, start, end))

    def with_changes(self, **changes: Any) -> DocumentMeta:
        return replace(self, **changes)

    def in_force_on(self, day: dt.date) -> bool:
        """Whether this version is in force on `day` (effective_date ≤ day < effective_to)."""
        start = dt.date.fromisoformat(self.effective_date) if self.effective_date else None
        end = dt.date.fromisoformat(self.effective_to) if self.effective_to else None
        return (start is None or start <= day) and (end is None or day < end)

    def effective_for(self, article: str) -> str | None:
        """The day `article` took effect: its exception's date when a clause names it, else the document's."""
        for exc in self.exceptions:
            if article in exc.articles:
                return exc.date
        return self.effective_date

    def titled(self, kind: str) -> tuple[TitleReference, ...]:
        return tuple(r for r in self.references if r.kind == kind)

    def keys(self) -> dict[str, tuple[str, ...]]:
        """What stores index this document under: its title key, and the keys of the titles it repeals."""
        return {
            "title": (self.title_key,) if self.title_key else (),
            REPEALS: tuple(dict.fromkeys(r.key for r in self.titled(REPEALS) if r.key)),
        }

    def index_keys(self) -> list[tuple[str, str, str]]:
        """(scope, kind, key) rows for ChunkStore.find_documents: the keys() within the document's corpus, and its
        source object name across corpora (SOURCE_SCOPE), which a delete event names."""
        rows = [(self.corpus, kind, key) for kind, keys in self.keys().items() for key in keys]
        if self.source_name:
            rows.append((SOURCE_SCOPE, SOURCE, self.source_name))
        return rows

    def has_key(self, kind: str, key: str) -> bool:
        return self.source_name == key if kind == SOURCE else key in self.keys().get(kind, ())


@dataclass(frozen=True)
class Chunk:
    """A citable piece of a regulation: an article (or a part of a long one), a paragraph or an appendix.

    `text` is a verbatim slice `[start, end)` of the stored document text; `search_text` is its normalised
    form, used for lexical search and embedding. Quotes always come from `text`.
    """

    id: str
    doc_id: str
    kind: str
    article: str
    part: int
    parts: int
    ordinal: int
    heading_path: tuple[str, ...]
    start: int
    end: int
    text: str
    search_text: str
    meta: DocumentMeta

    def to_dict(self, *, with_meta: bool = True) -> dict[str, Any]:
        """`with_meta=False`: without the document metadata (messages carry it once per document; converting
        it for every chunk only to drop it was half of an ingest's time)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "meta"}
        data["heading_path"] = list(self.heading_path)
        if with_meta:
            data["meta"] = self.meta.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        """The chunk from `to_dict` form; `meta` may be the DocumentMeta itself (stores share one per document)."""
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["heading_path"] = tuple(values.get("heading_path", ()))
        meta = data["meta"]
        values["meta"] = meta if isinstance(meta, DocumentMeta) else DocumentMeta.from_dict(meta)
        return cls(**values)

    @property
    def pages(self) -> tuple[int, ...]:
        """The pages of its document this chunk's text lies on (PDFs and images; empty otherwise)."""
        return self.meta.pages_of(self.start, self.end)

    @property
    def breadcrumb(self) -> str:
        """《title》 › 第一章 总则 › 第三条: context for embeddings and display, never part of a quote."""
        parts = [f"《{self.meta.title}》", *self.heading_path]
        if self.article:
            parts.append(self.article)
        return " › ".join(parts)


@dataclass(frozen=True)
class Document:
    """A parsed regulation: metadata, the stored text every quote is checked against, and its chunks."""

    meta: DocumentMeta
    text: str
    chunks: tuple[Chunk, ...]
    header_lines: tuple[str, ...] = ()


# the list filters: each allows values of the document metadata field of the same name
LIST_FILTERS = ("province", "asset", "doc_class", "regulation_level", "corpus", "doc_id")


@dataclass(frozen=True)
class Filters:
    """Metadata filters, applied inside the index search (before top-k), never after it.

    Each list is an allow-list (OR within a field, AND across fields). Dates are ISO strings: `date_from` /
    `date_to` bound `effective_date`; `as_of` keeps only versions in force that day unless `include_superseded`.
    """

    province: tuple[str, ...] = ()
    asset: tuple[str, ...] = ()
    doc_class: tuple[str, ...] = ()
    regulation_level: tuple[str, ...] = ()
    corpus: tuple[str, ...] = ()
    doc_id: tuple[str, ...] = ()
    date_from: str | None = None
    date_to: str | None = None
    as_of: str | None = None
    include_superseded: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items() if v not in ((), None, False)
        }


@dataclass(frozen=True)
class Hit:
    """One result of one retrieval leg: a chunk id, its score there, and its rank (1-based)."""

    chunk_id: str
    score: float
    rank: int
