"""Feedback and the query log in SQLite: concurrent writers serialise on SQLite's lock, so none is lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from regrag.adapters.local import storage
from regrag.adapters.local.sqlite_db import ConnectionPool

_SCHEMA = """
CREATE TABLE IF NOT EXISTS query_log(query_id TEXT PRIMARY KEY, time TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS feedback(id INTEGER PRIMARY KEY AUTOINCREMENT, query_id TEXT NOT NULL, time TEXT NOT NULL,
  record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS feedback_query ON feedback(query_id);
"""


class SqliteFeedbackStore:
    def __init__(self, path: Path | str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(path, storage.START_EMPTY)
        self._pool.get().executescript(_SCHEMA)

    def log_query(self, query_id: str, record: dict[str, Any]) -> None:
        self._pool.get().execute(
            "INSERT OR REPLACE INTO query_log(query_id, time, record) VALUES (?,?,?)",
            (query_id, record.get("time", ""), json.dumps(record, ensure_ascii=False)),
        )

    def get_query(self, query_id: str) -> dict[str, Any] | None:
        row = self._pool.get().execute("SELECT record FROM query_log WHERE query_id=?", (query_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def add_feedback(self, record: dict[str, Any]) -> None:
        # One INSERT per request in autocommit mode: SQLite serialises writers (busy timeout 30 s), so two
        # requests at once both land.
        self._pool.get().execute(
            "INSERT INTO feedback(query_id, time, record) VALUES (?,?,?)",
            (record["query_id"], record["time"], json.dumps(record, ensure_ascii=False)),
        )

    def list_feedback(self) -> list[dict[str, Any]]:
        rows = (
            self._pool.get()
            .execute(
                "SELECT f.record, q.record FROM feedback f LEFT JOIN query_log q ON q.query_id = f.query_id "
                "ORDER BY f.id"
            )
            .fetchall()
        )
        return [{**json.loads(f), "query": json.loads(q) if q else None} for f, q in rows]

    def close(self) -> None:
        self._pool.close()
