"""The data that flows between stages, as typed, immutable values."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

DEFAULT_CORPUS = "default"


def date_int(value: str | None) -> int | None:
    """'2024-01-31' → 20240131: dates as integers for numeric range filters (never floats)."""
    if not value:
        return None
    return int(value.replace("-", ""))


@dataclass(frozen=True)
class DocumentMeta:
    """What is known about one regulation, and where each value came from.

    `effective_date` is the date the version took effect (or, for the sample corpus, its latest promulgation
    or amendment date). `effective_to` is set when the version stops being in force (repealed or replaced).
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
    # field name → "sidecar" | "object-metadata" | "manifest" | "inferred" | "default"
    provenance: dict[str, str] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DocumentMeta:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def with_changes(self, **changes: Any) -> DocumentMeta:
        return replace(self, **changes)

    def in_force_on(self, day: dt.date) -> bool:
        """Whether this version is in force on `day` (effective_date ≤ day < effective_to)."""
        start = dt.date.fromisoformat(self.effective_date) if self.effective_date else None
        end = dt.date.fromisoformat(self.effective_to) if self.effective_to else None
        return (start is None or start <= day) and (end is None or day < end)


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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["heading_path"] = list(self.heading_path)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["heading_path"] = tuple(values.get("heading_path", ()))
        values["meta"] = DocumentMeta.from_dict(data["meta"])
        return cls(**values)

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

    def is_empty(self) -> bool:
        return self == Filters()

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
