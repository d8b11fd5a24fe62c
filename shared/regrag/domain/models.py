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


@dataclass(frozen=True)
class Candidate:
    """A retrieved chunk with its fused score and the evidence of each leg."""

    chunk: Chunk
    score: float
    dense_rank: int | None = None
    lexical_rank: int | None = None
    dense_score: float | None = None
    lexical_score: float | None = None
    rerank_score: float | None = None
    rerank_reason: str | None = None
    corpora: tuple[str, ...] = ()  # every corpus that returned this document + article (after collapsing)
    fused_score: float | None = None  # the dense + lexical RRF score within its corpus (before the corpus merge)

    def to_dict(self) -> dict[str, Any]:
        """The API shape: {id, doc_id, article, title, score, text, corpus, corpora, metadata}."""
        meta = self.chunk.meta
        return {
            "id": self.chunk.id,
            "doc_id": self.chunk.doc_id,
            "article": self.chunk.article,
            "title": meta.title,
            "score": round(self.score, 6),
            "text": self.chunk.text,
            "corpus": meta.corpus,
            "corpora": list(self.corpora or (meta.corpus,)),
            "metadata": {
                "kind": self.chunk.kind,
                "part": self.chunk.part,
                "parts": self.chunk.parts,
                "heading_path": list(self.chunk.heading_path),
                "effective_date": meta.effective_date,
                "effective_to": meta.effective_to,
                "province": meta.province,
                "asset": meta.asset,
                "doc_class": meta.doc_class,
                "regulation_level": meta.regulation_level,
                "corpus": meta.corpus,
                "source_url": meta.source_url,
                "superseded_by": meta.superseded_by,
                "dense_rank": self.dense_rank,
                "lexical_rank": self.lexical_rank,
                "dense_score": None if self.dense_score is None else round(self.dense_score, 6),
                "lexical_score": None if self.lexical_score is None else round(self.lexical_score, 6),
                "fused_score": None if self.fused_score is None else round(self.fused_score, 6),
                "rerank_score": self.rerank_score,
                "rerank_reason": self.rerank_reason,
            },
        }


@dataclass(frozen=True)
class Citation:
    """Where a quote comes from: 〔《title》，生效：date〕 plus the ids that locate it."""

    title: str
    effective_date: str | None
    url: str | None
    doc_id: str
    article: str
    corpus: str = DEFAULT_CORPUS
    corpora: tuple[str, ...] = ()
    # version status on the question's as-of date: in_force | superseded (a newer version is in force
    # today) | upcoming (a newer version takes effect later); `successor` names the newer version.
    version_status: str = "in_force"
    successor: dict[str, Any] | None = None

    @property
    def marker(self) -> str:
        if self.effective_date:
            return f"〔《{self.title}》，生效：{self.effective_date}〕"
        return f"〔《{self.title}》〕"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["corpora"] = list(self.corpora or (self.corpus,))
        data["marker"] = self.marker
        return data


@dataclass(frozen=True)
class Bullet:
    """One verbatim span with its citation."""

    span: str
    citation: Citation
    chunk_id: str

    def render(self) -> str:
        return f" • {self.span}{self.citation.marker}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "span": self.span,
            "chunk_id": self.chunk_id,
            "text": self.render(),
            "citation": self.citation.to_dict(),
        }


@dataclass(frozen=True)
class Answer:
    """The composed answer: a heading, verbatim bullets, deduplicated citations, and what was dropped."""

    answer_zh: str
    title: str
    bullets: tuple[Bullet, ...]
    citations: tuple[Citation, ...]
    abstained: bool
    dropped_spans: int = 0
    chinese_ratio: float = 0.0
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer_zh": self.answer_zh,
            "title": self.title,
            "bullets": [b.to_dict() for b in self.bullets],
            "citations": [c.to_dict() for c in self.citations],
            "notes": list(self.notes),
            "abstained": self.abstained,
            "dropped_spans": self.dropped_spans,
        }
