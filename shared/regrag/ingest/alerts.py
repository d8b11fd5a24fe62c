"""alerts: after upsert stored a document, tell the watches it concerns what changed.

The upsert stage calls `record_changes` once a document's chunks, version links and predecessor are stored.
Watches of the documents it touched (the document, the versions it relinked, the one it supersedes) compare
what they last saw with the store now; saved questions that could quote the document are asked again. Each
difference is recorded as one alert, published on the alerts topic when one is wired, and then becomes the
watch's new baseline.

Idempotent under redelivery: an alert's id is a hash of the watch and of both sides of the change, and it is
recorded once (WatchStore.add_alert); once the baseline has moved, the same event finds no change. A crash
between recording and moving the baseline publishes the same alert (same id) again on redelivery, which a
consumer drops by `alert_id`, as it must for Pub/Sub's at-least-once delivery anyway.

Cost: the lookup of document and article watches is by document id; saved questions are first checked on their
words and filters against the document (`could_change`), and only those that pass are asked again
(bench/watches.py measures the ingest with 10,000 watches).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from regrag import logs
from regrag.domain.models import Chunk, DocumentMeta
from regrag.domain.watches import (
    ARTICLE,
    ARTICLE_CHANGED,
    ARTICLE_REMOVED,
    NEW_VERSION,
    QUESTION,
    QUESTION_CHANGED,
    REPEALED,
    Alert,
    Baseline,
    Cited,
    SavedQuestion,
    Watch,
    alert_id_for,
    could_cite,
    filters_from_dict,
    now_utc,
    text_hash,
    version_dates,
)
from regrag.ports import ChunkStore, Publisher, WatchStore
from regrag.text.chunking import split_structure
from regrag.text.normalize import normalize
from regrag.views.version_diff import MIN_SIMILARITY, Article, Change, articles_of, diff_articles, summarize

log = logs.get("alerts")

Reask = Callable[[Watch], tuple[Cited, ...]]
# Measured on the dev and lay-dev questions over the whole corpus (bench/README.md "Watches"): the documents the
# answers cite hold at least 30 % of their question's words in 99.6 % of cases (25 % at the lowest).
DEFAULT_MIN_SHARE = 0.3
DEFAULT_MAX_REASKS = 20
CITES_CHANGED = 2.0  # a saved question citing a version that changed comes before any share of words


class QuestionBacklog:
    """Saved questions to ask again once a batch of writes is done, instead of after each document.

    Locally every search after a write rebuilds the in-memory search snapshot (0.7 s at 26,000 chunks), so asking
    saved questions after each document of `regrag ingest FOLDER` would rebuild it once per document; inside
    `batch()` the upsert stage only notes which saved questions to ask, and the batch asks each once at its end
    (ops.watches.ask_backlog). Document and article watches are compared at once either way. Event-driven
    deployments (the functions, a test raising events one by one) open no batch: questions are asked at once."""

    def __init__(self) -> None:
        self._depth = 0
        self._due: dict[str, tuple[float, str]] = {}  # watch id → (how likely it changed, the document)
        self._documents: set[str] = set()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        with self._lock:
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1

    @property
    def active(self) -> bool:
        return self._depth > 0

    def add(self, ranked: Sequence[tuple[str, float]], doc_id: str) -> None:
        """Note the saved questions a stored document could change, each with how likely (CITES_CHANGED for one
        citing a version it changed, else the share of its words the document holds)."""
        with self._lock:
            self._documents.add(doc_id)
            for watch_id, score in ranked:
                if watch_id not in self._due or score > self._due[watch_id][0]:
                    self._due[watch_id] = (score, doc_id)

    def take(self) -> tuple[list[tuple[str, str]], int]:
        """The questions noted so far as (watch id, document), most likely first, and how many documents the batch
        stored; forgotten here."""
        with self._lock:
            due, documents = self._due, len(self._documents)
            self._due, self._documents = {}, set()
        ranked = sorted(due.items(), key=lambda item: (-item[1][0], item[0]))
        return [(watch_id, doc_id) for watch_id, (_, doc_id) in ranked], documents


@dataclass(frozen=True)
class Watching:
    """What the upsert stage needs to tell watchers (built by ops.watches.watching from the services).

    Attributes:
        watches: where watches and alerts live.
        reask: asks a saved question again and returns the articles the answer cites (None: saved questions are
            left to the scheduled check).
        publisher, topic: where each alert is published (None: recorded only).
        min_share: the share of a saved question's words a document must contain to be worth asking it again.
        max_reasks: saved questions asked again per document at most; the others that could change wait for the
            scheduled check (ops.watches.check_all), which asks every saved question again.
        max_chars: the ingest's chunk size, to tell whether every part of a split document is stored.
        today: the day questions are asked and versions judged in force.
        backlog: where the saved questions to ask go while a batch is open (QuestionBacklog), else None.
    """

    watches: WatchStore
    reask: Reask | None = None
    publisher: Publisher | None = None
    topic: str | None = None
    min_share: float = DEFAULT_MIN_SHARE
    max_reasks: int = DEFAULT_MAX_REASKS
    max_chars: int = 800
    today: Callable[[], dt.date] = field(default=dt.date.today)
    backlog: QuestionBacklog | None = None


@dataclass(frozen=True)
class Draft:
    """A change one watch saw, before it is an alert: its kind, what it concerns and the watch's new baseline."""

    kind: str
    doc_id: str | None
    before: object
    after: object
    dates: dict[str, Any]
    diff: dict[str, Any]
    message: str
    successor_id: str | None = None
    article: str | None = None


def record_changes(
    watching: Watching,
    store: ChunkStore,
    meta: DocumentMeta,
    text: str,
    relinked: Sequence[str],
    *,
    parts: int = 1,
) -> list[Alert]:
    """Record what the document just stored (`meta`, as linked; `text` its stored text) changed for the watches.

    `relinked`: the other versions whose links the store changed; `parts`: how many messages carry the
    document's chunks (with more than one, nothing is compared until every part is stored)."""
    if parts > 1 and not _complete(store, meta, text, watching.max_chars):
        logs.event(log, logging.INFO, "alerts wait for the document's other parts", doc_id=meta.doc_id, parts=parts)
        return []
    touched = list(dict.fromkeys([meta.doc_id, *relinked, *([meta.supersedes] if meta.supersedes else [])]))
    citing: list[Watch] = []
    alerts: list[Alert] = []
    texts = VersionTexts(store)
    for watch in watching.watches.watches_following(touched):
        if watch.kind == QUESTION:
            citing.append(watch)  # it cites a version that just changed
        else:
            alerts += settle(watching, watch, *compare_version(watch, store, texts))
    if watching.reask is not None:
        alerts += _reask_some(watching, meta, text, citing)
    return alerts


def _reask_some(watching: Watching, meta: DocumentMeta, text: str, citing: list[Watch]) -> list[Alert]:
    """Ask again the saved questions the document could change, those citing a version it changed first, then
    by the share of their words it holds, up to `max_reasks`; the rest wait for the scheduled check."""
    assert watching.reask is not None
    today = watching.today()
    chosen = {w.watch_id: w for w in citing}
    candidates = could_change(watching.watches.saved_questions(), meta, text, today, watching.min_share)
    ranked = {w: CITES_CHANGED for w in chosen}
    for question, share in candidates:
        ranked.setdefault(question.watch_id, share)
    if watching.backlog is not None and watching.backlog.active:
        watching.backlog.add(list(ranked.items()), meta.doc_id)  # asked once each when the batch ends
        return []
    wanted = list(ranked)
    asked, deferred = wanted[: watching.max_reasks], wanted[watching.max_reasks :]
    alerts: list[Alert] = []
    for watch_id in asked:
        watch = chosen.get(watch_id) or watching.watches.get_watch(watch_id)
        if watch is not None:
            alerts += settle(watching, watch, *compare_answer(watch, watching.reask, meta, today))
    if deferred:
        logs.event(
            log,
            logging.INFO,
            "saved questions left to the scheduled check",
            doc_id=meta.doc_id,
            asked=len(asked),
            deferred=len(deferred),
        )
    return alerts


def check_watch(watching: Watching, store: ChunkStore, watch: Watch, texts: VersionTexts | None = None) -> list[Alert]:
    """Compare one watch with the store now, whatever was ingested (the scheduled check: a successor entering
    into force changes what a question cites without any ingest). `texts`: shared by the watches of one check."""
    if watch.kind == QUESTION:
        if watching.reask is None:
            return []
        return settle(watching, watch, *compare_answer(watch, watching.reask, None, watching.today()))
    return settle(watching, watch, *compare_version(watch, store, texts))


# --- which saved questions a document could change --------------------------------------------------------


def could_change(
    saved: Sequence[SavedQuestion], meta: DocumentMeta, text: str, today: dt.date, min_share: float
) -> list[tuple[SavedQuestion, float]]:
    """The saved questions worth asking again after `meta` was stored, most likely first, with the share of their
    words it holds: those whose filters let them quote it and at least `min_share` of whose words its title and
    text contain. Each distinct word is looked up in the text once, however many questions share it."""
    haystack = f"{meta.title}\n{text}"
    present: dict[str, bool] = {}
    admitted: dict[str, bool] = {}
    scored: list[tuple[float, str, SavedQuestion]] = []
    for question in saved:
        key = repr(sorted(question.filters.items()))
        if key not in admitted:
            admitted[key] = could_cite(filters_from_dict(question.filters), meta, today)
        if not admitted[key]:
            continue
        found = 0
        for term in question.terms:
            if term not in present:
                present[term] = term in haystack
            found += present[term]
        share = found / len(question.terms) if question.terms else 1.0  # nothing to judge by: ask it again
        if share >= min_share:
            scored.append((share, question.watch_id, question))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [(q, share) for share, _, q in scored]


# --- document and article watches ----------------------------------------------------------------------------


class VersionTexts:
    """The stored articles of versions, the diffs between them and where a split article went, each computed once
    per run: many watches follow the same document (10,000 watches over 444 documents is about 20 a document),
    and comparing two 100-article versions is the costly part of telling them."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self._articles: dict[str, list[Article]] = {}
        self._diffs: dict[tuple[str, str], list[Change]] = {}
        self._went: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def articles(self, doc_id: str) -> list[Article]:
        if doc_id not in self._articles:
            self._articles[doc_id] = articles_of(self.store.document_chunks(doc_id))
        return self._articles[doc_id]

    def diff(self, old_id: str, new_id: str) -> list[Change]:
        if (old_id, new_id) not in self._diffs:
            self._diffs[(old_id, new_id)] = diff_articles(self.articles(old_id), self.articles(new_id))
        return self._diffs[(old_id, new_id)]

    def went(self, old_text: str, new_id: str) -> list[dict[str, Any]]:
        key = (text_hash(old_text), new_id)
        if key not in self._went:
            self._went[key] = where_it_went(old_text, self.articles(new_id))
        return self._went[key]


def compare_version(
    watch: Watch, store: ChunkStore, texts: VersionTexts | None = None
) -> tuple[Draft | None, Baseline | None]:
    """What happened to the version a document or article watch follows: a successor (new version, or a text of
    another title that repeals it), an end without successor, or, for an article watch, the article's words
    replaced in place. (None, None) when nothing changed or the document is gone."""
    texts = texts or VersionTexts(store)
    base = watch.baseline
    found = store.get_document(base.doc_id) if base.doc_id else None
    if found is None:
        return None, None
    meta = found[0]
    if meta.superseded_by and meta.superseded_by != base.superseded_by:
        successor = store.get_document(meta.superseded_by)
        if successor is not None:
            return _successor(watch, meta, successor[0], texts)
    if watch.kind == ARTICLE and base.article and meta.content_hash != base.content_hash:
        return _in_place(watch, meta, texts)
    if meta.effective_to and meta.effective_to != base.effective_to and not meta.superseded_by:
        return _ended(watch, meta), replace(base, effective_to=meta.effective_to, checked=now_utc())
    if (meta.content_hash, meta.effective_to, meta.superseded_by) != (
        base.content_hash,
        base.effective_to,
        base.superseded_by,
    ):
        # a re-ingest that changed nothing watched, or a withdrawn link: the baseline follows, silently
        moved = replace(
            base,
            content_hash=meta.content_hash,
            effective_to=meta.effective_to,
            superseded_by=meta.superseded_by,
            checked=now_utc(),
        )
        return None, moved
    return None, None


def _successor(
    watch: Watch, old: DocumentMeta, new: DocumentMeta, texts: VersionTexts
) -> tuple[Draft | None, Baseline | None]:
    base = watch.baseline
    same_text = bool(old.title_key and old.title_key == new.title_key) or old.title == new.title
    version_kind = NEW_VERSION if same_text else REPEALED
    changes = texts.diff(old.doc_id, new.doc_id)
    dates = _dates(old, new, new.effective_date)
    before = (old.doc_id, base.content_hash, text_hash(base.article_text))
    after = (new.doc_id, new.content_hash)
    if watch.kind == ARTICLE and base.article:
        change = next((c for c in changes if c.old is not None and c.old.label == base.article), None)
        old_text = base.article_text or (change.old.text if change and change.old else "")
        diff = _article_diff(base.article, change, old_text, old.doc_id, new.doc_id)
        diff["summary"] = summarize(changes)
        related: list[dict[str, Any]] = []
        if change is None or change.new is None:
            related = texts.went(old_text, new.doc_id)
            diff["related"] = related
        kind = version_kind
        following = change.new if change is not None else None
        if following is None and related:
            # split or merged by the revision: changed, and followed where its first lines went
            kind = ARTICLE_CHANGED
            following = next(a for a in texts.articles(new.doc_id) if a.label == related[0]["article"])
        elif following is None:
            kind = ARTICLE_REMOVED
        elif change is not None and change.kind in ("changed", "renumbered"):
            kind = ARTICLE_CHANGED
        draft = Draft(
            kind,
            old.doc_id,
            before,
            after,
            dates,
            diff,
            _successor_message(old, new, version_kind, base.article, change, related),
            successor_id=new.doc_id,
            article=base.article,
        )
        moved = Baseline.of_version(new, following.label if following else None, following.text if following else None)
        return draft, moved
    diff = {
        "from": old.doc_id,
        "to": new.doc_id,
        "summary": summarize(changes),
        "articles": [c.to_dict() for c in changes if c.kind != "unchanged"],
    }
    message = _successor_message(old, new, version_kind, None, None)
    draft = Draft(version_kind, old.doc_id, before, after, dates, diff, message, successor_id=new.doc_id)
    return draft, Baseline.of_version(new)


def _in_place(watch: Watch, meta: DocumentMeta, texts: VersionTexts) -> tuple[Draft | None, Baseline | None]:
    """The version watched was ingested again with other words: compare the watched article with what it was."""
    base = watch.baseline
    assert base.article is not None
    now = next((a for a in texts.articles(meta.doc_id) if a.label == base.article), None)
    moved = Baseline.of_version(meta, base.article if now else None, now.text if now else None)
    if now is not None and text_hash(now.text) == text_hash(base.article_text):
        return None, moved  # another article changed, not this one
    kind = ARTICLE_CHANGED if now is not None else ARTICLE_REMOVED
    diff = {
        "article": base.article,
        "change": "changed" if now is not None else "removed",
        "old": {"article": base.article, "text": base.article_text or ""},
        "new": {"article": now.label, "text": now.text} if now is not None else None,
        "from": meta.doc_id,
        "to": meta.doc_id,
    }
    what = "的文字已更改" if now is not None else "已从文本中删除"
    message = f"《{meta.title}》{base.article}{what}（同一版本的文本已重新导入）。"
    before = (meta.doc_id, base.content_hash, text_hash(base.article_text))
    after = (meta.doc_id, meta.content_hash, text_hash(now.text if now else None))
    dates = _dates(meta, meta, meta.effective_for(base.article))
    return Draft(kind, meta.doc_id, before, after, dates, diff, message, article=base.article), moved


def _ended(watch: Watch, meta: DocumentMeta) -> Draft:
    """The version watched stops being in force with no successor stored (its own metadata ends it)."""
    message = f"《{meta.title}》自{meta.effective_to}起失效。"
    return Draft(
        REPEALED,
        meta.doc_id,
        (meta.doc_id, watch.baseline.effective_to),
        (meta.doc_id, meta.effective_to),
        _dates(meta, None, meta.effective_to),
        {"effective_to": meta.effective_to},
        message,
        article=watch.baseline.article,
    )


def _article_diff(label: str, change: Change | None, old_text: str, old_id: str, new_id: str) -> dict[str, Any]:
    new = change.new if change is not None else None
    return {
        "article": label,
        "change": change.kind if change is not None else "removed",
        "old": {"article": label, "text": old_text},
        "new": new.to_dict() if new is not None else None,
        "similarity": round(change.similarity, 3) if change is not None else 0.0,
        "from": old_id,
        "to": new_id,
    }


def where_it_went(old_text: str, new_articles: Sequence[Article]) -> list[dict[str, Any]]:
    """For an article no whole article of the new version corresponds to (a revision split or merged it): the
    new articles holding a span close to one of its lines (款), by the citation check's rule (closest_span,
    similarity at least the version diff's floor), in the new version's order."""
    from regrag.check.provisions import Provision, closest_span

    lines = [line.strip() for line in old_text.split("\n") if len(line.strip()) >= 8]
    if lines:
        lines[0] = lines[0].split(maxsplit=1)[-1]  # the label is not content
    provisions = [Provision(a.label, a.text) for a in new_articles]
    found: dict[str, dict[str, Any]] = {}
    for line in lines:
        best = max(((closest_span(line, p), p) for p in provisions), key=lambda x: x[0].similarity, default=None)
        if best is None or best[0].similarity < MIN_SIMILARITY:
            continue
        near, provision = best
        entry = found.setdefault(
            provision.label, {"article": provision.label, "text": provision.text, "similarity": 0.0, "matched": []}
        )
        entry["similarity"] = max(float(entry["similarity"]), round(near.similarity, 3))
        entry["matched"].append(line)
    order = {a.label: i for i, a in enumerate(new_articles)}
    return sorted(found.values(), key=lambda e: order[str(e["article"])])


def _dates(old: DocumentMeta, new: DocumentMeta | None, takes_effect: str | None) -> dict[str, Any]:
    """Both versions' dates (公布, 施行, end), the day the change takes effect, and whether it has."""
    today = dt.date.today().isoformat()
    return {
        "watched": version_dates(old),
        "current": version_dates(new),
        "entry_into_force": takes_effect,
        "in_force": bool(takes_effect and takes_effect <= today),
    }


def _when(meta: DocumentMeta) -> str:
    eff = meta.effective_date or "日期不详"
    if meta.promulgated and meta.promulgated != meta.effective_date:
        return f"（公布：{meta.promulgated}，施行：{eff}）"
    return f"（施行：{eff}）"


def _successor_message(
    old: DocumentMeta,
    new: DocumentMeta,
    kind: str,
    article: str | None,
    change: Change | None,
    related: Sequence[dict[str, Any]] = (),
) -> str:
    if kind == REPEALED:
        head = f"《{old.title}》已被《{new.title}》{_when(new)}取代。"
    else:
        head = f"《{old.title}》有新版本{_when(new)}。"
    if article is None:
        return head
    if change is None or change.kind == "removed" or change.new is None:
        if related:
            where = "、".join(str(r["article"]) for r in related)
            return f"{head}{article}在新版本中没有整条对应的条文，其内容见于新版本{where}。"
        return f"{head}{article}在新版本中没有对应条文。"
    if change.kind == "unchanged":
        return f"{head}{article}内容未变（新版本{change.new.label}）。"
    if change.kind == "renumbered" and change.new.label != article and _same_words(change):
        return f"{head}{article}在新版本中为{change.new.label}，文字未变。"
    return f"{head}{article}在新版本中有修改（现为{change.new.label}）。"


def _same_words(change: Change) -> bool:
    return (
        change.old is not None and change.new is not None and text_hash(change.old.body) == text_hash(change.new.body)
    )


# --- saved questions --------------------------------------------------------------------------------------------


def compare_answer(
    watch: Watch, reask: Reask, trigger: DocumentMeta | None, today: dt.date
) -> tuple[Draft | None, Baseline | None]:
    """Ask a saved question again: a draft when the set of (document, article) its answer cites changed."""
    assert watch.question is not None
    cited = reask(watch)
    before = {c.key: c for c in watch.baseline.cited}
    after = {c.key: c for c in cited}
    moved = replace(watch.baseline, cited=tuple(cited), checked=now_utc())
    if set(before) == set(after):
        return None, (moved if tuple(cited) != watch.baseline.cited else None)
    added = [after[k] for k in after if k not in before]
    removed = [before[k] for k in before if k not in after]
    as_dicts = lambda cs: [{"doc_id": c.doc_id, "article": c.article, "title": c.title, "marker": c.marker} for c in cs]  # noqa: E731
    diff: dict[str, Any] = {
        "question": watch.question,
        "filters": watch.filters,
        "added": as_dicts(added),
        "removed": as_dicts(removed),
        "before": as_dicts(before.values()),
        "after": as_dicts(after.values()),
    }
    parts = []
    if added:
        parts.append("新增引用 " + "、".join(c.marker or f"《{c.title}》{c.article}" for c in added))
    if removed:
        parts.append("不再引用 " + "、".join(c.marker or f"《{c.title}》{c.article}" for c in removed))
    message = f"已保存的问题“{_short(watch.question)}”的答案引用的条文有变化：{'；'.join(parts)}。"
    dates = {
        "asked_on": today.isoformat(),
        "trigger": version_dates(trigger),
    }
    draft = Draft(
        QUESTION_CHANGED,
        trigger.doc_id if trigger else None,
        sorted(before),
        sorted(after),
        dates,
        diff,
        message,
    )
    return draft, moved


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- recording -------------------------------------------------------------------------------------------------


def settle(watching: Watching, watch: Watch, draft: Draft | None, baseline: Baseline | None) -> list[Alert]:
    """Record the draft as an alert (once), publish it, then move the watch's baseline; in that order, so that a
    failure anywhere leaves the change to be seen again on redelivery."""
    alerts = []
    if draft is not None:
        alert = Alert(
            alert_id=alert_id_for(watch.watch_id, draft.kind, draft.before, draft.after),
            watch_id=watch.watch_id,
            kind=draft.kind,
            doc_id=draft.doc_id,
            created=now_utc(),
            successor_id=draft.successor_id,
            dates=draft.dates,
            diff=draft.diff,
            title=watch.title,
            article=draft.article or watch.article,
            question=watch.question,
            owner=watch.owner,
            message=draft.message,
        )
        added = watching.watches.add_alert(alert)
        if watching.publisher is not None and watching.topic:
            watching.publisher.publish(watching.topic, alert.to_message(), alert.attributes())
        logs.event(
            log,
            logging.INFO,
            "alert recorded" if added else "alert already recorded",
            alert_id=alert.alert_id,
            watch_id=watch.watch_id,
            kind=alert.kind,
            doc_id=alert.doc_id,
        )
        alerts.append(alert)
    if baseline is not None:
        watching.watches.update_baseline(watch.watch_id, baseline)
    return alerts


def _complete(store: ChunkStore, meta: DocumentMeta, text: str, max_chars: int) -> bool:
    """Whether every chunk of the stored text is stored, and only those: a document split over several messages
    is compared once its last part is in, whichever arrives last."""
    structure = split_structure(normalize(text), max_chars=max_chars, markdown=meta.format == "md")
    expected = {(s.kind, s.label, s.part, s.start, s.end) for s in structure.segments}
    stored: list[Chunk] = store.document_chunks(meta.doc_id)
    if any(text[c.start : c.end] != c.text for c in stored):
        return False  # chunks of the previous generation are still there
    return {(c.kind, c.article, c.part, c.start, c.end) for c in stored} == expected
