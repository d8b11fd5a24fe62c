"""What a query produces: candidates with the evidence of each retrieval leg, and the composed answer of verbatim
spans with their citations."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from regrag.domain.models import DEFAULT_CORPUS, Chunk


@dataclass(frozen=True)
class Features:
    """The ordering signals of one candidate, each computed once (query/retrieve.py, query/score.py) and read by
    every later step, never recomputed: what the final `Candidate.score` is made of, and what judge reads.

    Attributes:
        coverage: the share of the question's key-term weight in the chunk's text and breadcrumb (0–1).
        retrieval_rank, retrieval_score: the place and score after fusing the legs and merging the corpora.
        coverage_rank: the place in the ordering by coverage (ties in retrieval order).
        forms, form_rank: how many of the question's asked forms the text answers, and the place by that.
        applies: the rule applies where the question is about (national, or a province it names); False ranks
            it after every rule that does.
        place_factor: the national preference applied to a local rule when the question names no place (1: none).
    """

    coverage: float = 0.0
    retrieval_rank: int | None = None
    retrieval_score: float | None = None
    coverage_rank: int | None = None
    forms: int = 0
    form_rank: int | None = None
    applies: bool = True
    place_factor: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["coverage"] = round(self.coverage, 4)
        if self.retrieval_score is not None:
            data["retrieval_score"] = round(self.retrieval_score, 6)
        return data


@dataclass(frozen=True)
class Candidate:
    """A retrieved chunk with its final score, the evidence of each leg and the ordering features."""

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
    features: Features = field(default_factory=Features)

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
                # the date is an amendment's adoption: when the amendment took effect, the text does not say
                "effective_date_uncertain": meta.effective_date_uncertain,
                "effective_to": meta.effective_to,
                "province": meta.province,
                "asset": meta.asset,
                "doc_class": meta.doc_class,
                "regulation_level": meta.regulation_level,
                "corpus": meta.corpus,
                "source_url": meta.source_url,
                "pages": list(self.chunk.pages),
                "superseded_by": meta.superseded_by,
                "dense_rank": self.dense_rank,
                "lexical_rank": self.lexical_rank,
                "dense_score": None if self.dense_score is None else round(self.dense_score, 6),
                "lexical_score": None if self.lexical_score is None else round(self.lexical_score, 6),
                "fused_score": None if self.fused_score is None else round(self.fused_score, 6),
                "rerank_score": self.rerank_score,
                "rerank_reason": self.rerank_reason,
                "features": self.features.to_dict(),
            },
        }


ELLIPSIS = "……"  # where a quote leaves text out: between two of its verbatim pieces, or after the last one
# what the copied citation says of a version that is not the law in force on the day asked
_STATUS_WORDS = {"superseded": "已被取代", "not_yet_in_force": "尚未施行"}


@dataclass(frozen=True)
class Citation:
    """Where a quote comes from: 〔《title》第X条，生效：date〕 plus the ids that locate it.

    `article` is the article's label (第二十八条); `provision` the part the quote is (第二十八条第（二）项,
    第十条第二款), when it is one part of the article.
    """

    title: str
    effective_date: str | None
    url: str | None
    doc_id: str
    article: str
    corpus: str = DEFAULT_CORPUS
    corpora: tuple[str, ...] = ()
    # the cited version's status on the question's as-of date (query/citations.py version_status):
    # in_force | upcoming | superseded_since | superseded | not_yet_in_force; `successor` names the newer version, and
    # `counterpart` the article of the other version that corresponds to the cited one
    version_status: str = "in_force"
    successor: dict[str, Any] | None = None
    promulgated: str | None = None
    counterpart: dict[str, Any] | None = None
    # PDFs and page images: the pages the quote lies on (`url` then opens the first: `#page=N` for a PDF);
    # `low_confidence` when one of them was OCR'd with a confidence under the threshold, `note` saying so
    pages: tuple[int, ...] = ()
    low_confidence: bool = False
    note: str | None = None
    provision: str | None = None
    # the date is the adoption of an amendment whose own entry into force the text does not state (metadata's
    # effective_date_uncertain): the marker says the date needs checking
    date_uncertain: bool = False

    @property
    def marker(self) -> str:
        """The complete citation a lawyer pastes: 〔《title》第二十八条第（二）项，生效：2019-03-02〕, and for a version
        that is not the one in force on the day asked, what it is (，已被取代 / ，尚未施行). A version that was the law
        on the day asked but has been replaced since says from when (，2019-03-02起已被取代): pasted into a memo about
        that day the citation is right, and a reader of it today must not take it for the law now."""
        where = self.provision or self.article
        parts = [f"《{self.title}》{where}"]
        if self.effective_date:
            parts.append(f"生效：{self.effective_date}" + ("（施行日期待核）" if self.date_uncertain else ""))
        if self.version_status in _STATUS_WORDS:
            parts.append(_STATUS_WORDS[self.version_status])
        elif self.version_status == "superseded_since":
            since = (self.successor or {}).get("effective_date")
            parts.append(f"{since}起已被取代" if since else "此后已被取代")
        return f"〔{'，'.join(parts)}〕"

    @property
    def page_label(self) -> str:
        """（第3页） or （第3–4页） after the marker of a quote with pages; "" without."""
        if not self.pages:
            return ""
        first, last = min(self.pages), max(self.pages)
        return f"（第{first}页）" if first == last else f"（第{first}–{last}页）"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["corpora"] = list(self.corpora or (self.corpus,))
        data["pages"] = list(self.pages)
        data["marker"] = self.marker
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Citation:
        """The citation from its `to_dict` form (an answer composed by the remote `compose` function)."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["corpora"] = tuple(known.get("corpora") or ())
        known["pages"] = tuple(int(p) for p in known.get("pages") or ())
        return cls(**known)


# what ends a paragraph of a regulation's text as quoted: a sentence (。), an item of a list (；), a lead-in (：)
PARAGRAPH_ENDS = ("。", "；", "：", ";", ":")


@dataclass(frozen=True)
class Bullet:
    """One quote with its citation. `pieces` are the verbatim slices of the stored text it is made of (the
    article label, an item's lead-in, the item …); `span` shows them in order, with …… where text is left out
    (between two pieces, and after the last when the paragraph it cites goes on). A quote of one contiguous slice
    has that slice as its only piece."""

    span: str
    citation: Citation
    chunk_id: str
    pieces: tuple[str, ...] = ()

    @property
    def verbatim_pieces(self) -> tuple[str, ...]:
        return self.pieces or (self.span,)

    def verbatim_in(self, text: str) -> bool:
        """Whether every piece of the quote is a substring of `text` (the stored document) and the span shows
        exactly those pieces, in order, with nothing between them but …… (and nothing after them but ……)."""
        rest = self.span
        for n, piece in enumerate(self.verbatim_pieces):
            if not piece or piece not in text:
                return False
            if n:
                rest = rest.removeprefix(ELLIPSIS)
            if not rest.startswith(piece):
                return False
            rest = rest[len(piece) :]
        return rest in ("", ELLIPSIS)

    def render(self) -> str:
        """The bullet as the answer's text shows it: the quote a line per paragraph it shows (`lines`: a table's rows
        run together read 5米35—110千伏), its marker, the page of a PDF or scan (（第N页）), ⚠ for a doubtful OCR
        page."""
        flag = "⚠" if self.citation.low_confidence else ""
        body = "\n   ".join(self.lines())
        return f" • {body}{self.citation.marker}{self.citation.page_label}{flag}"

    def lines(self) -> tuple[str, ...]:
        """The quote as its source lays it out: a line for each paragraph it shows (a 款, a lead-in, an item, a row
        of a table), where `span` runs them together (第八条第一款 and 第二款 read as one paragraph, 5米 and 35—110千伏
        as 5米35). Two pieces with nothing left out between them stood on two lines of the source (quote.py makes
        one piece of what shares a line); a piece followed by …… goes on with the next unless it ends a sentence or
        a clause (。；：): the article's label before text left out, a clause cut short. Joined, the lines are the
        span."""
        lines: list[str] = []
        line, rest = "", self.span
        for piece in self.verbatim_pieces:
            if not rest.startswith(piece):  # not the span's own pieces (cannot happen for a checked bullet)
                return (self.span,)
            line, rest = line + piece, rest[len(piece) :]
            if rest.startswith(ELLIPSIS):
                line, rest = line + ELLIPSIS, rest[len(ELLIPSIS) :]
                if not piece.endswith(PARAGRAPH_ENDS):
                    continue
            lines.append(line)
            line = ""
        return tuple([*lines, line + rest] if line or rest else lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "span": self.span,
            "pieces": list(self.verbatim_pieces),
            "lines": list(self.lines()),
            "chunk_id": self.chunk_id,
            "text": self.render(),
            "citation": self.citation.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Bullet:
        pieces = tuple(str(p) for p in data.get("pieces") or ())
        return cls(str(data["span"]), Citation.from_dict(data["citation"]), str(data["chunk_id"]), pieces)


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
    # the line a reader must see before the quotes when the confidence is low (they may not answer the question);
    # None otherwise. In answer_zh it follows the heading; the page shows it above the quotes.
    caution: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer_zh": self.answer_zh,
            "title": self.title,
            "bullets": [b.to_dict() for b in self.bullets],
            "citations": [c.to_dict() for c in self.citations],
            "notes": list(self.notes),
            "caution": self.caution,
            "abstained": self.abstained,
            "dropped_spans": self.dropped_spans,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], chinese_ratio: float = 0.0) -> Answer:
        """The answer from its API form; KeyError / TypeError / ValueError when it is not one."""
        return cls(
            answer_zh=str(data["answer_zh"]),
            title=str(data["title"]),
            bullets=tuple(Bullet.from_dict(b) for b in data["bullets"]),
            citations=tuple(Citation.from_dict(c) for c in data["citations"]),
            abstained=bool(data["abstained"]),
            dropped_spans=int(data.get("dropped_spans", 0)),
            chinese_ratio=chinese_ratio,
            notes=tuple(str(n) for n in data.get("notes", ())),
            caution=None if data.get("caution") is None else str(data["caution"]),
        )
