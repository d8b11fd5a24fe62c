"""Watches: make, list and remove them, read their alerts, and check every watch on a schedule.

A watch is checked against what it last saw (its baseline) whenever the upsert stage stores a document it
concerns (ingest/alerts.py); `check_all` checks every watch whatever was ingested, which catches what only time
changes (a successor entering into force changes what a question cites) and the saved questions the upsert
stage left for later (REGRAG_WATCH_MAX_REASKS).

A saved question is asked again through the read path (query.answer.answer), never through the HTTP API, so it
is not logged as a user's question; with the retrieval order instead of the Gemini rerank and without the
generated aids, so that a changed answer means the corpus changed, not a model's sampling.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

import numpy as np

from regrag import logs
from regrag.domain.errors import NotFound
from regrag.domain.messages import decode_vector, encode_vector
from regrag.domain.models import DocumentMeta
from regrag.domain.requests import QueryRequest
from regrag.domain.watches import (
    ARTICLE,
    DOCUMENT,
    QUESTION,
    QUESTION_CHANGED,
    Alert,
    Baseline,
    Cited,
    Watch,
    filters_from_dict,
    now_utc,
    watch_id_for,
)
from regrag.ingest import alerts as alerts_stage
from regrag.inputs.parse import AlertsQuery, WatchRequest
from regrag.ports import Embedder, WatchStore
from regrag.query.answer import ReadPath, answer
from regrag.query.citations import version_status
from regrag.query.rerank import RetrievalOrderReranker
from regrag.services import Services
from regrag.text.legal import canonical_article_label
from regrag.text.terms import question_words
from regrag.views.version_diff import Article, articles_of

log = logs.get("watches")

MAX_TERMS = 64  # words of a saved question kept for the pre-check (questions of up to 2,000 characters)


def _store(services: Services) -> WatchStore:
    if services.watches is None:
        raise NotFound("watches are not configured on this deployment")
    return services.watches


# --- asking a saved question again -------------------------------------------------------------------------


class _KnownQuestion:
    """An embedder that answers one question with the vector kept in its watch, and passes the rest on."""

    def __init__(self, inner: Embedder, text: str, vector: np.ndarray) -> None:
        self.inner, self.text, self.vector = inner, text, vector

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_documents(self, texts: Any) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.vector if text.strip() == self.text else self.inner.embed_query(text)


def steady_path(path: ReadPath) -> ReadPath:
    """The read path for saved questions: retrieval order, no generated aids, composed in process."""
    return replace(path, reranker=RetrievalOrderReranker(), composer=None, retriever=replace(path.retriever, hyde=None))


def ask_again(services: Services) -> alerts_stage.Reask:
    """Reask for the upsert stage and the scheduled check: the cited articles of a saved question's answer now."""
    path = steady_path(services.read_path)
    embedder = path.retriever.embedder

    def reask(watch: Watch) -> tuple[Cited, ...]:
        assert watch.question is not None
        retriever = path.retriever
        if watch.vector and watch.model == embedder.model_id:
            known = _KnownQuestion(embedder, watch.question, decode_vector(watch.vector))
            retriever = replace(retriever, embedder=known)
        done = answer(
            QueryRequest(watch.question, filters_from_dict(watch.filters)), replace(path, retriever=retriever)
        )
        return cited_of(done.answer.bullets) if not done.answer.abstained else ()

    return reask


def cited_of(bullets: Any) -> tuple[Cited, ...]:
    """The (document, article) pairs an answer's bullets cite, once each, in the answer's order."""
    seen: dict[tuple[str, str], Cited] = {}
    for b in bullets:
        c = b.citation
        seen.setdefault((c.doc_id, c.article), Cited(c.doc_id, c.article, c.title, c.marker))
    return tuple(seen.values())


def watching(services: Services) -> alerts_stage.Watching | None:
    """What the upsert stage tells watchers with (None when no watch store is wired)."""
    if services.watches is None:
        return None
    s = services.settings
    return alerts_stage.Watching(
        watches=services.watches,
        reask=ask_again(services),
        publisher=services.publisher if s.topic_alerts else None,
        topic=s.topic_alerts or None,
        min_share=s.watch_min_share,
        max_reasks=s.watch_max_reasks,
        max_chars=s.chunk_max_chars,
        backlog=services.question_backlog,
    )


def ask_backlog(services: Services) -> list[Alert]:
    """The saved questions a batch of writes noted (QuestionBacklog), each asked once now, after `regrag ingest`
    has stored its documents and prepared the index for search: the most likely first, at most
    REGRAG_WATCH_MAX_REASKS per document the batch stored; the rest wait for the scheduled check."""
    if services.question_backlog is None:
        return []
    due, documents = services.question_backlog.take()
    bundle = watching(services)
    if not due or bundle is None or bundle.reask is None:
        return []
    today = bundle.today()
    budget = bundle.max_reasks * documents  # the same bound as asking after each document
    recorded: list[Alert] = []
    for watch_id, doc_id in due[:budget]:
        watch = bundle.watches.get_watch(watch_id)
        found = services.store.get_document(doc_id)
        if watch is not None:
            draft, baseline = alerts_stage.compare_answer(watch, bundle.reask, found[0] if found else None, today)
            recorded += alerts_stage.settle(bundle, watch, draft, baseline)
    logs.event(
        log,
        logging.INFO,
        "saved questions asked after the batch",
        asked=min(len(due), budget),
        left_to_the_scheduled_check=max(0, len(due) - budget),
        alerts=len(recorded),
    )
    return recorded


# --- making watches ----------------------------------------------------------------------------------------------


def add_watch(services: Services, request: WatchRequest) -> dict[str, Any]:
    """A new watch (or the same one again: watches are identified by what they follow and for whom), with what it
    sees now as its baseline: {watch_id, created, watch, version?}."""
    watches = _store(services)
    if request.doc_id is not None:
        watch = _document_watch(services, request)
    else:
        watch = _question_watch(services, request)
    created = watches.put_watch(watch)
    stored = watches.get_watch(watch.watch_id) or watch
    logs.event(
        log, logging.INFO, "watch added" if created else "watch exists", watch_id=watch.watch_id, kind=watch.kind
    )
    alerts = _already_changed(services, stored)
    if alerts:  # an alert moves the watch on to the version in force
        stored = watches.get_watch(watch.watch_id) or stored
    body: dict[str, Any] = {
        "watch_id": stored.watch_id,
        "created": created,
        "watch": stored.public(),
        "alerts": [a.to_dict() for a in alerts],
    }
    if stored.kind != QUESTION and stored.baseline.doc_id:
        found = services.store.get_document(stored.baseline.doc_id)
        if found is not None:
            body["version"] = _version(services, found[0])
    return body


def _already_changed(services: Services, watch: Watch) -> list[Alert]:
    """A version or article watched that is already replaced (an article quoted from an answer as of 2016, of a
    law superseded since) is told at once, as the ingest of its successor would have told it, and the watch follows
    the version in force: waiting for the next ingest would say nothing about a change already made."""
    bundle = watching(services)
    if watch.kind == QUESTION or bundle is None:
        return []
    return alerts_stage.check_watch(bundle, services.store, watch)


def _document_watch(services: Services, request: WatchRequest) -> Watch:
    assert request.doc_id is not None
    found = services.store.get_document(request.doc_id)
    if found is None:
        raise NotFound(f"no document {request.doc_id!r}: watch a document the index holds", code="unknown_document")
    meta = found[0]
    kind, label, text = DOCUMENT, None, None
    if request.article is not None:
        kind = ARTICLE
        article = find_article(articles_of(services.store.document_chunks(meta.doc_id)), request.article, meta)
        label, text = article.label, article.text
    return Watch(
        watch_id=watch_id_for(kind, meta.doc_id, label, None, {}, request.owner),
        kind=kind,
        created=now_utc(),
        doc_id=meta.doc_id,
        article=label,
        owner=request.owner,
        title=meta.title,
        # told nothing yet: a successor or an end the store already records is a change to tell (_already_changed)
        baseline=replace(Baseline.of_version(meta, label, text), superseded_by=None, effective_to=None),
    )


def find_article(articles: list[Article], raw: str, meta: DocumentMeta) -> Article:
    """The article a user names (第3条, 3, 第三条, 第十条之一, or a label as the document writes it)."""
    wanted = raw.strip()
    label = canonical_article_label(wanted) or wanted
    for article in articles:
        if article.label in (wanted, label):
            return article
    span = f"{articles[0].label}至{articles[-1].label}" if articles else "无条文"
    raise NotFound(
        f"《{meta.title}》({meta.doc_id}) has no article {raw!r} ({len(articles)} articles: {span})",
        code="unknown_article",
        details={
            "doc_id": meta.doc_id,
            "articles": len(articles),
            "first": articles[0].label if articles else None,
            "last": articles[-1].label if articles else None,
        },
    )


def _question_watch(services: Services, request: WatchRequest) -> Watch:
    assert request.question is not None
    question = request.question
    filters = request.filters.to_dict()
    embedder = services.read_path.retriever.embedder
    vector = embedder.embed_query(question)
    watch = Watch(
        watch_id=watch_id_for(QUESTION, None, None, question, filters, request.owner),
        kind=QUESTION,
        created=now_utc(),
        question=question,
        filters=filters,
        owner=request.owner,
        terms=tuple(question_words(question)[:MAX_TERMS]),
        vector=encode_vector(vector),
        model=embedder.model_id,
    )
    cited = ask_again(services)(watch)  # raises InvalidInput when the index holds nothing to ask
    return watch.with_baseline(Baseline(cited=cited, checked=now_utc()))


def _version(services: Services, meta: DocumentMeta) -> dict[str, Any]:
    """The followed version's status today, so the user knows at once whether it is still the law in force."""
    today = dt.date.today().isoformat()
    found = services.store.get_document(meta.superseded_by) if meta.superseded_by else None
    status = version_status(meta, found[0] if found else None, today, today)
    return {"doc_id": meta.doc_id, "status": status.status, "successor": status.successor, "note": status.note}


# --- listing, removing, alerts, the scheduled check --------------------------------------------------------------


def list_watches(services: Services) -> dict[str, Any]:
    return {"watches": [w.public() for w in _store(services).list_watches()]}


def remove_watch(services: Services, watch_id: str) -> dict[str, Any]:
    if not _store(services).remove_watch(watch_id):
        raise NotFound(f"no watch {watch_id!r}", code="unknown_watch")
    logs.event(log, logging.INFO, "watch removed", watch_id=watch_id)
    return {"watch_id": watch_id, "removed": True}


def list_alerts(services: Services, query: AlertsQuery, page_url: str = "/") -> list[dict[str, Any]]:
    """Alerts newest first, each with a link to the page's view of the version (and article) it is about now."""
    found = _store(services).list_alerts(since=query.since, watch_id=query.watch_id, limit=query.limit)
    return [{**a.to_dict(), "link": alert_link(a, page_url)} for a in found]


def alert_link(alert: Alert, page_url: str) -> str | None:
    """The page's view of the document an alert is about: the successor when there is one, at the article."""
    if alert.kind == QUESTION_CHANGED and alert.question:
        return question_link(page_url, alert.question, alert.diff.get("filters") or {})
    doc_id = alert.successor_id or alert.doc_id
    if not doc_id:
        return None
    new, related = alert.diff.get("new"), alert.diff.get("related")
    if isinstance(new, dict):
        article = new.get("article")
    elif related:
        article = related[0].get("article")
    else:
        article = alert.article if doc_id == alert.doc_id else None  # the article is not in the successor
    return document_link(page_url, doc_id, article)


def question_link(page_url: str, question: str, filters: dict[str, Any]) -> str:
    """The page asking a question with its filters (?q=…&province=…: the page's own shareable address)."""
    params = [("q", question)]
    for key in ("province", "asset", "doc_class", "regulation_level"):
        if filters.get(key):
            params.append((key, ",".join(filters[key])))
    if filters.get("as_of"):
        params.append(("as_of", filters["as_of"]))
    if filters.get("include_superseded"):
        params.append(("include_superseded", "1"))
    if filters.get("corpus"):
        params.append(("corpora", ",".join(filters["corpus"])))
    base = page_url if page_url.endswith("/") else page_url + "/"
    return base + "?" + "&".join(f"{k}={quote(v, safe=',')}" for k, v in params)


def document_link(page_url: str, doc_id: str, article: str | None = None) -> str:
    """The page opening a document (at an article): <page>?doc=<doc_id>&article=<label> (web/watch.js honours it)."""
    base = page_url if page_url.endswith("/") else page_url + "/"
    link = f"{base}?doc={quote(doc_id, safe='')}"
    return link + (f"&article={quote(article, safe='')}" if article else "")


@dataclass(frozen=True)
class CheckSummary:
    watches: int
    alerts: int
    by_kind: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"watches": self.watches, "alerts": self.alerts, "by_kind": self.by_kind}


def check_all(services: Services) -> CheckSummary:
    """Compare every watch with the store now and ask every saved question again (the scheduled check)."""
    bundle = watching(services)
    if bundle is None:
        raise NotFound("watches are not configured on this deployment")
    recorded: list[Alert] = []
    watches = bundle.watches.list_watches()
    texts = alerts_stage.VersionTexts(services.store)
    for watch in watches:
        recorded += alerts_stage.check_watch(bundle, services.store, watch, texts)
    by_kind: dict[str, int] = {}
    for a in recorded:
        by_kind[a.kind] = by_kind.get(a.kind, 0) + 1
    logs.event(log, logging.INFO, "watches checked", watches=len(watches), alerts=len(recorded))
    return CheckSummary(len(watches), len(recorded), by_kind)
