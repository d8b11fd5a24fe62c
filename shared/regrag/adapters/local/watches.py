"""Watches and alerts in SQLite (the `WatchStore` port; GcsWatchStore on GCP).

Each watch is one row (its JSON), with the documents it follows in `watch_follow` (indexed by doc id: the upsert
stage's lookup per document) and, for question watches, its words and filters in `watch_question`. An alert is
inserted once by its id (INSERT OR IGNORE): a redelivered event that records the same alert changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from regrag.adapters.local import storage
from regrag.adapters.local.sqlite_db import ConnectionPool
from regrag.domain.watches import QUESTION, Alert, Baseline, SavedQuestion, Watch

_SCHEMA = """
CREATE TABLE IF NOT EXISTS watch(watch_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, created TEXT NOT NULL,
  data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS watch_follow(doc_id TEXT NOT NULL, watch_id TEXT NOT NULL,
  PRIMARY KEY(doc_id, watch_id));
CREATE INDEX IF NOT EXISTS watch_follow_watch ON watch_follow(watch_id);
CREATE TABLE IF NOT EXISTS watch_question(watch_id TEXT PRIMARY KEY, terms TEXT NOT NULL, filters TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS alert(alert_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, watch_id TEXT NOT NULL,
  created TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS alert_created ON alert(created, seq);
CREATE INDEX IF NOT EXISTS alert_watch ON alert(watch_id, created);
"""


class SqliteWatchStore:
    def __init__(self, path: Path | str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(path, storage.START_EMPTY)
        self._pool.get().executescript(_SCHEMA)

    def put_watch(self, watch: Watch) -> bool:
        with self._pool.transaction() as con:
            if con.execute("SELECT 1 FROM watch WHERE watch_id=?", (watch.watch_id,)).fetchone():
                return False
            seq = con.execute("SELECT coalesce(max(seq), 0) + 1 FROM watch").fetchone()[0]
            con.execute(
                "INSERT INTO watch(watch_id, seq, created, data) VALUES (?,?,?,?)",
                (watch.watch_id, seq, watch.created, json.dumps(watch.to_dict(), ensure_ascii=False)),
            )
            if watch.kind == QUESTION:
                con.execute(
                    "INSERT INTO watch_question(watch_id, terms, filters) VALUES (?,?,?)",
                    (watch.watch_id, json.dumps(list(watch.terms), ensure_ascii=False), json.dumps(watch.filters)),
                )
            self._follow(con, watch.watch_id, watch.followed)
        return True

    @staticmethod
    def _follow(con: Any, watch_id: str, doc_ids: Sequence[str]) -> None:
        con.execute("DELETE FROM watch_follow WHERE watch_id=?", (watch_id,))
        con.executemany(
            "INSERT OR IGNORE INTO watch_follow(doc_id, watch_id) VALUES (?,?)", [(d, watch_id) for d in doc_ids]
        )

    def get_watch(self, watch_id: str) -> Watch | None:
        row = self._pool.get().execute("SELECT data FROM watch WHERE watch_id=?", (watch_id,)).fetchone()
        return Watch.from_dict(json.loads(row[0])) if row else None

    def list_watches(self) -> list[Watch]:
        rows = self._pool.get().execute("SELECT data FROM watch ORDER BY created, seq").fetchall()
        return [Watch.from_dict(json.loads(r[0])) for r in rows]

    def remove_watch(self, watch_id: str) -> bool:
        with self._pool.transaction() as con:
            gone = con.execute("DELETE FROM watch WHERE watch_id=?", (watch_id,)).rowcount
            con.execute("DELETE FROM watch_follow WHERE watch_id=?", (watch_id,))
            con.execute("DELETE FROM watch_question WHERE watch_id=?", (watch_id,))
        return bool(gone)

    def watches_following(self, doc_ids: Sequence[str]) -> list[Watch]:
        if not doc_ids:
            return []
        marks = ",".join("?" * len(doc_ids))
        rows = (
            self._pool.get()
            .execute(
                f"SELECT w.data FROM watch w WHERE w.watch_id IN "
                f"(SELECT watch_id FROM watch_follow WHERE doc_id IN ({marks})) ORDER BY w.watch_id",
                tuple(doc_ids),
            )
            .fetchall()
        )
        return [Watch.from_dict(json.loads(r[0])) for r in rows]

    def saved_questions(self) -> list[SavedQuestion]:
        rows = self._pool.get().execute("SELECT watch_id, terms, filters FROM watch_question ORDER BY watch_id")
        return [SavedQuestion(w, tuple(json.loads(t)), json.loads(f)) for w, t, f in rows.fetchall()]

    def update_baseline(self, watch_id: str, baseline: Baseline) -> None:
        with self._pool.transaction() as con:
            row = con.execute("SELECT data FROM watch WHERE watch_id=?", (watch_id,)).fetchone()
            if row is None:
                return  # removed while its change was being recorded
            watch = Watch.from_dict(json.loads(row[0])).with_baseline(baseline)
            con.execute(
                "UPDATE watch SET data=? WHERE watch_id=?",
                (json.dumps(watch.to_dict(), ensure_ascii=False), watch_id),
            )
            self._follow(con, watch_id, watch.followed)

    def add_alert(self, alert: Alert) -> bool:
        with self._pool.transaction() as con:
            seq = con.execute("SELECT coalesce(max(seq), 0) + 1 FROM alert").fetchone()[0]
            added = con.execute(
                "INSERT OR IGNORE INTO alert(alert_id, seq, watch_id, created, data) VALUES (?,?,?,?,?)",
                (alert.alert_id, seq, alert.watch_id, alert.created, json.dumps(alert.to_dict(), ensure_ascii=False)),
            ).rowcount
        return bool(added)

    def list_alerts(self, *, since: str | None = None, watch_id: str | None = None, limit: int = 100) -> list[Alert]:
        where, args = [], []
        if since:
            where.append("created >= ?")
            args.append(since)
        if watch_id:
            where.append("watch_id = ?")
            args.append(watch_id)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = (
            self._pool.get()
            .execute(f"SELECT data FROM alert {clause} ORDER BY created DESC, seq DESC LIMIT ?", (*args, limit))
            .fetchall()
        )
        return [Alert.from_dict(json.loads(r[0])) for r in rows]

    def close(self) -> None:
        self._pool.close()
