"""Watches and alerts as values: what a user watches, what the watch last saw, and what changed since.

A watch follows a document, one article of it, or a saved question with its filters. Its `baseline` is what
it saw last (the version it follows, the article's text, the articles the question cited); an alert is a
difference from the baseline, recorded once: its id is a hash of the watch and of both sides of the change, so
a redelivered event that finds the same change finds the alert already there, and one that finds the baseline
already moved on finds no change at all.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from regrag.domain.models import LIST_FILTERS, DocumentMeta, Filters

# what a watch follows
DOCUMENT = "document"
ARTICLE = "article"
QUESTION = "question"
WATCH_KINDS = (DOCUMENT, ARTICLE, QUESTION)

# what an alert says happened
NEW_VERSION = "new_version"  # a newer version of the same text (same title) supersedes the one watched
REPEALED = "repealed"  # the text watched stopped being in force: replaced by a text of another title, or ended
ARTICLE_CHANGED = "article_changed"  # the watched article's words changed (in a new version, or in place)
ARTICLE_REMOVED = "article_removed"  # the watched article is gone (no counterpart in the new version)
QUESTION_CHANGED = "question_changed"  # the articles a saved question cites changed
ALERT_KINDS = (NEW_VERSION, REPEALED, ARTICLE_CHANGED, ARTICLE_REMOVED, QUESTION_CHANGED)

MESSAGE_KIND = "AlertRecorded"  # the Pub/Sub message each recorded alert is published as
SCHEMA_VERSION = 1


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _digest(*parts: Any) -> str:
    data = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(data.encode("utf-8")).hexdigest()


def watch_id_for(
    kind: str,
    doc_id: str | None,
    article: str | None,
    question: str | None,
    filters: dict[str, Any],
    owner: str | None,
) -> str:
    """The same watch asked for twice is one watch: its id is a hash of what it follows and for whom."""
    return "w" + _digest(kind, doc_id, article, question, filters, owner)[:23]


def text_hash(text: str | None) -> str:
    """A short hash of a text with whitespace removed (a re-flowed article is the same article)."""
    return hashlib.sha1("".join((text or "").split()).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Cited:
    """One article an answer cites: the pair that identifies it, and what a reader recognises it by."""

    doc_id: str
    article: str
    title: str = ""
    marker: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.doc_id, self.article)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cited:
        return cls(str(data["doc_id"]), str(data["article"]), str(data.get("title", "")), str(data.get("marker", "")))


@dataclass(frozen=True)
class Baseline:
    """What a watch last saw. Document and article watches follow one version (`doc_id`) and move to its
    successor when they report it; an article watch keeps the article's text, the old side of a later diff."""

    doc_id: str | None = None
    article: str | None = None
    article_text: str | None = None
    superseded_by: str | None = None
    effective_to: str | None = None
    content_hash: str = ""
    cited: tuple[Cited, ...] = ()
    checked: str = ""  # when the watch last compared (UTC), with or without a change

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cited"] = [asdict(c) for c in self.cited]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Baseline:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["cited"] = tuple(Cited.from_dict(c) for c in values.get("cited") or ())
        return cls(**values)

    @classmethod
    def of_version(cls, meta: DocumentMeta, article: str | None = None, article_text: str | None = None) -> Baseline:
        return cls(
            doc_id=meta.doc_id,
            article=article,
            article_text=article_text,
            superseded_by=meta.superseded_by,
            effective_to=meta.effective_to,
            content_hash=meta.content_hash,
            checked=now_utc(),
        )


@dataclass(frozen=True)
class Watch:
    """A document (`doc_id`), an article of it (`doc_id` + `article`) or a saved question (`question` +
    `filters`, the filters' canonical form: Filters.to_dict()), watched for `owner` (free text, e.g. an email:
    the alerts' Pub/Sub messages carry it as an attribute a subscription can filter on).

    `terms`: the question's words, which decide cheaply whether a newly ingested document could change its
    answer (ingest/alerts.py); `vector` and `model`: the question's embedding, kept so that asking it again costs
    a search, not a model call; `title`: the document's title when the watch was made."""

    watch_id: str
    kind: str
    created: str
    doc_id: str | None = None
    article: str | None = None
    question: str | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None
    title: str = ""
    terms: tuple[str, ...] = ()
    vector: str | None = None  # the question's embedding (float32, base64) and the model that made it
    model: str | None = None
    baseline: Baseline = field(default_factory=Baseline)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["terms"] = list(self.terms)
        data["baseline"] = self.baseline.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Watch:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["terms"] = tuple(values.get("terms") or ())
        values["filters"] = dict(values.get("filters") or {})
        values["baseline"] = Baseline.from_dict(values.get("baseline") or {})
        return cls(**values)

    def with_baseline(self, baseline: Baseline) -> Watch:
        return replace(self, baseline=baseline)

    @property
    def followed(self) -> tuple[str, ...]:
        """The documents whose change concerns this watch: the version it follows, or those its question cites."""
        if self.kind == QUESTION:
            return tuple(dict.fromkeys(c.doc_id for c in self.baseline.cited))
        return (self.baseline.doc_id,) if self.baseline.doc_id else ()

    def public(self) -> dict[str, Any]:
        """The API's view: what is watched and what it was last seen as (not the article text kept for diffs)."""
        base = self.baseline
        return {
            "watch_id": self.watch_id,
            "kind": self.kind,
            "doc_id": self.doc_id,
            "article": self.article,
            "question": self.question,
            "filters": self.filters,
            "owner": self.owner,
            "title": self.title,
            "created": self.created,
            "following": {"doc_id": base.doc_id, "article": base.article} if self.kind != QUESTION else None,
            "cited": [asdict(c) for c in base.cited] if self.kind == QUESTION else None,
            "checked": base.checked,
        }


@dataclass(frozen=True)
class Alert:
    """What changed for one watch: `doc_id` the version the watch was on (for a question, the document whose
    ingest changed the answer), `successor_id` the newer version when there is one, `dates` both versions'
    dates and when the change takes effect, `diff` the change itself (the article diff, the versions' 修订对照,
    or the citations added and removed), `message` one sentence in Chinese for mail or chat."""

    alert_id: str
    watch_id: str
    kind: str
    doc_id: str | None
    created: str
    successor_id: str | None = None
    dates: dict[str, Any] = field(default_factory=dict)
    diff: dict[str, Any] = field(default_factory=dict)
    title: str = ""
    article: str | None = None
    question: str | None = None
    owner: str | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Alert:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_message(self) -> dict[str, Any]:
        """The Pub/Sub message body (AlertRecorded)."""
        return {"schema_version": SCHEMA_VERSION, "kind": MESSAGE_KIND, "alert": self.to_dict()}

    def attributes(self) -> dict[str, str]:
        """Pub/Sub attributes a subscription can filter on (attributes.kind = "article_changed",
        attributes.owner = "lawyer@example.com"); alert_id lets a consumer drop a redelivered message."""
        attrs = {"kind": self.kind, "alert_id": self.alert_id, "watch_id": self.watch_id}
        if self.doc_id:
            attrs["doc_id"] = self.doc_id
        if self.owner:
            attrs["owner"] = self.owner[:1000]
        return attrs


@dataclass(frozen=True)
class SavedQuestion:
    """What decides cheaply whether a document could change a saved question's answer: its words and filters
    (WatchStore.saved_questions lists them without reading every watch)."""

    watch_id: str
    terms: tuple[str, ...]
    filters: dict[str, Any]


def alert_id_for(watch_id: str, kind: str, before: Any, after: Any) -> str:
    """Deterministic: the same change seen again (a redelivered event, a repeated sweep) has the same id."""
    return "a" + _digest(watch_id, kind, before, after)[:23]


def filters_from_dict(data: dict[str, Any]) -> Filters:
    """Filters from their canonical dict form (Filters.to_dict(), as watches keep them)."""
    known = {f.name: f for f in fields(Filters)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            continue
        values[key] = tuple(value) if isinstance(value, list | tuple) else value
    return Filters(**values)


def version_dates(meta: DocumentMeta | None) -> dict[str, Any] | None:
    """A version's dates as alerts report them: 公布, 施行 and when it stopped being in force."""
    if meta is None:
        return None
    return {
        "doc_id": meta.doc_id,
        "title": meta.title,
        "promulgated": meta.promulgated,
        "effective_from": meta.effective_date,
        "effective_to": meta.effective_to,
    }


def could_cite(filters: Filters, meta: DocumentMeta, today: dt.date) -> bool:
    """Whether a question asked with `filters` could quote `meta`: its metadata passes every list filter and
    the date bounds, and it is in force on the day asked (today unless `as_of`) or superseded versions are
    included. The same rule as the indexes' restricts, read on one document's metadata, as a cheap pre-check."""
    for name in LIST_FILTERS:
        allowed = getattr(filters, name)
        if allowed and getattr(meta, name) not in allowed:
            return False
    effective = meta.effective_date or ""
    if filters.date_from and effective and effective < filters.date_from:
        return False
    if filters.date_to and effective and effective > filters.date_to:
        return False
    if filters.include_superseded:
        return True
    day = dt.date.fromisoformat(filters.as_of) if filters.as_of else today
    return meta.in_force_on(day)
