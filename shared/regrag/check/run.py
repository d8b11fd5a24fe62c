"""Check a document's citations: references → titles → versions and texts → one status each (regrag.check.verify,
regrag.check.unresolved).

The day citations are checked as of is `as_of` when given, else the document's own date (日期：… at its top or
bottom), else today; the answer says which. Every text the answer shows is the corpus's own (article texts,
closest spans, diffs' law side) or the document's own (the reference, its quotations).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from regrag.check.catalogue import load_catalogue
from regrag.check.document_date import document_date
from regrag.check.findings import OK, STATUSES, UNKNOWN_LAW, Finding
from regrag.check.references import Reference, find_references
from regrag.check.titles import FOUND, Resolution, TitleIndex
from regrag.check.unresolved import unresolved
from regrag.check.verify import QuoteSearch, Verifier
from regrag.domain.errors import InvalidInput
from regrag.domain.models import DocumentMeta, Filters
from regrag.ports import ChunkStore, LexicalIndex
from regrag.text.chunking import KIND_ARTICLE
from regrag.text.legal import article_label
from regrag.text.parse import detect_format, parse_document
from regrag.text.parsed import UnreadableDocument
from regrag.text.terms import query_tokens
from regrag.views.version_diff import articles_of

SOURCE_REQUEST = "request"
SOURCE_DOCUMENT = "document"
SOURCE_TODAY = "today"
CHECK_FORMATS = ("md", "txt", "html", "docx", "pdf")  # what a memo comes as; scans are not read here


@dataclass(frozen=True)
class CheckLimits:
    """How much one check may ask for (REGRAG_CHECK_MAX_CHARS, REGRAG_CHECK_MAX_CITATIONS)."""

    max_chars: int = 2_000_000
    max_citations: int = 20_000


def read_document(name: str, data: bytes) -> tuple[str, str]:
    """The text of an uploaded document and its format; InvalidInput (400) naming what is wrong with it: an
    unsupported type, binary content, a PDF without a text layer, no text at all."""
    try:
        fmt = detect_format(name, data) if data else "txt"
        if fmt not in CHECK_FORMATS:
            raise InvalidInput(f"{name}: a {fmt.upper()} file; send the document as .docx, .pdf, .md or .txt")
        parsed = parse_document(name, data)
    except UnreadableDocument as exc:
        raise InvalidInput(str(exc), code="unreadable_document") from exc
    return parsed.text, parsed.format


def quote_search(lexical: LexicalIndex, store: ChunkStore, k: int = 8) -> QuoteSearch:
    """The articles of any version, in any corpus, whose words best match a quotation (the lexical index, the
    query path's own tokens): the candidates the verifier then checks verbatim."""

    def search(quote: str) -> list[tuple[DocumentMeta, str]]:
        tokens = query_tokens(quote)
        hits = lexical.search(tokens, Filters(include_superseded=True), k) if tokens else []
        chunks = store.get_chunks([h.chunk_id for h in hits])
        return list(dict.fromkeys((c.meta, c.article) for c in chunks if c.kind == KIND_ARTICLE))

    return search


def check_text(
    text: str,
    store: ChunkStore,
    *,
    lexical: LexicalIndex | None = None,
    as_of: str | None = None,
    today: dt.date | None = None,
    limits: CheckLimits | None = None,
) -> dict[str, Any]:
    """The citations of `text` checked against the stored law: {as_of, as_of_source, document_date, summary,
    citations: [{text, start, end, doc_id, title, article, paragraph, item, status, caution, message, evidence,
    quotes, also, written, form, antecedent}], catalogue}."""
    limits = limits or CheckLimits()
    if len(text) > limits.max_chars:
        raise InvalidInput(
            f"the document has {len(text):,} characters; at most {limits.max_chars:,} are checked at once "
            "(REGRAG_CHECK_MAX_CHARS): split it"
        )
    references = find_references(text)
    provisions = sum(len(r.articles) for r in references)
    if provisions > limits.max_citations:
        raise InvalidInput(
            f"the document cites {provisions:,} provisions; at most {limits.max_citations:,} are checked at once "
            "(REGRAG_CHECK_MAX_CITATIONS): split it"
        )
    dated = document_date(text)
    if as_of:
        day, source = as_of, SOURCE_REQUEST
    elif dated:
        day, source = dated.date, SOURCE_DOCUMENT
    else:
        day, source = (today or dt.date.today()).isoformat(), SOURCE_TODAY
    catalogue = load_catalogue()
    titles = TitleIndex(store.list_documents(), catalogue) if references else None
    corpus_titles = titles.titles() if titles else ()
    verifier = Verifier(
        lambda doc_id: articles_of(store.document_chunks(doc_id)),
        quote_search(lexical, store) if lexical is not None else None,
    )
    resolved: dict[str, Resolution] = {}
    citations = []
    for ref in references:
        resolution = None
        if ref.title is not None and titles is not None:
            if ref.title not in resolved:
                resolved[ref.title] = titles.resolve(ref.title)
            resolution = resolved[ref.title]
        labels = [article_label(a.main, a.sub) for a in ref.articles]
        for index, target in enumerate(ref.articles):
            siblings = tuple(label for label in labels if label != labels[index])
            if resolution is not None and resolution.kind == FOUND and resolution.parts:
                finding = verifier.check_parts(ref, target, resolution.laws, day, siblings)
            elif resolution is not None and resolution.kind == FOUND:
                finding = verifier.check(ref, target, resolution.laws[0], resolution.pinned, day, siblings)
            else:
                finding = unresolved(ref, resolution, day, catalogue, corpus_titles)
            if resolution is not None and resolution.short and finding.title:
                # say how a short title was read, so a wrong reading is seen
                finding = replace(
                    finding,
                    message=f"（《{ref.title}》按简称理解为《{finding.title}》）{finding.message}",
                    evidence={**finding.evidence, "read_as": finding.title},
                )
            citations.append(_citation(ref, index, finding))
    counts = Counter(c["status"] for c in citations)
    return {
        "as_of": day,
        "as_of_source": source,
        "document_date": (
            {"date": dated.date, "text": dated.text, "start": dated.start, "end": dated.end} if dated else None
        ),
        "summary": {
            "references": len(references),
            "citations": len(citations),
            "ok": counts.get(OK, 0),
            "cautions": sum(1 for c in citations if c["caution"]),
            "problems": sum(n for s, n in counts.items() if s not in (OK, UNKNOWN_LAW)),
            "unverifiable": counts.get(UNKNOWN_LAW, 0),
            "by_status": {s: counts[s] for s in STATUSES if counts.get(s)},
        },
        "citations": citations,
        "catalogue": {"source": catalogue.source, "as_of": catalogue.as_of, "titles": len(catalogue.titles)},
    }


def _citation(ref: Reference, index: int, finding: Finding) -> dict[str, Any]:
    target = ref.articles[index]
    start, end = ref.parts[index] if ref.parts else (ref.start, ref.end)
    return {
        "text": ref.text[start - ref.start : end - ref.start],
        "start": start,
        "end": end,
        "doc_id": finding.doc_id,
        "title": finding.title,
        "article": finding.article or article_label(target.main, target.sub),
        "paragraph": target.paragraph,
        "item": target.item,
        "status": finding.status,
        "caution": finding.caution,
        "message": finding.message,
        "evidence": finding.evidence,
        # quotations of a law that could not be resolved were not compared with anything: say so
        "quotes": list(finding.quotes)
        if finding.doc_id is not None
        else [{"text": q.text, "start": q.start, "end": q.end, "match": "unchecked"} for q in ref.quotes],
        "also": list(finding.also),
        "written": ref.written,
        "form": ref.form,
        "cited_title": ref.title,
        "antecedent": list(ref.antecedent) if ref.antecedent else None,
        "version_named": ref.version,
    }
