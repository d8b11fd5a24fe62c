"""The index's SQLite file: its schema, which embedding model its vectors come from, the version counter every
write bumps, and write transactions. SqliteSearchStore (the search legs' tables) and SqliteIndex (the ChunkStore)
build on it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from regrag.adapters.local.sqlite_db import ConnectionPool
from regrag.domain.errors import InvalidInput

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS document(
  doc_id TEXT PRIMARY KEY, corpus TEXT NOT NULL, generation INTEGER NOT NULL,
  meta_json TEXT NOT NULL, text TEXT NOT NULL, updated_at TEXT NOT NULL);
-- version links are looked up on every put and delete: indexed, so that cost does not grow with the documents
CREATE INDEX IF NOT EXISTS document_supersedes ON document(json_extract(meta_json, '$.supersedes'));
CREATE INDEX IF NOT EXISTS document_superseded_by ON document(json_extract(meta_json, '$.superseded_by'));
CREATE TABLE IF NOT EXISTS doc_part(
  doc_id TEXT NOT NULL, generation INTEGER NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL,
  chunk_ids TEXT NOT NULL, PRIMARY KEY(doc_id, generation, part));
CREATE TABLE IF NOT EXISTS chunk_key(rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL);
-- what each document is found under (DocumentMeta.keys): its title key, the keys of the titles it repeals
CREATE TABLE IF NOT EXISTS doc_key(doc_id TEXT NOT NULL, corpus TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
  PRIMARY KEY(doc_id, kind, key));
CREATE INDEX IF NOT EXISTS doc_key_find ON doc_key(corpus, kind, key);
CREATE TABLE IF NOT EXISTS chunk(
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, doc_id TEXT NOT NULL, generation INTEGER NOT NULL,
  ordinal INTEGER NOT NULL, part INTEGER NOT NULL, data_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunk_doc ON chunk(doc_id, ordinal, part);
-- the filterable columns of every chunk that has a vector or terms (shared by both search legs)
CREATE TABLE IF NOT EXISTS restrict(
  rowid INTEGER PRIMARY KEY, corpus TEXT, province TEXT, asset TEXT, doc_class TEXT, level TEXT,
  doc_id TEXT, eff INTEGER, eff_to INTEGER);
-- (corpus, rowid) is the search snapshot's row order: the build reads the term counts in it (snapshot_build.py)
CREATE INDEX IF NOT EXISTS restrict_corpus ON restrict(corpus);
CREATE TABLE IF NOT EXISTS vec_store(rowid INTEGER PRIMARY KEY, emb BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS lex_vocab(id INTEGER PRIMARY KEY, term TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS lex(rowid INTEGER PRIMARY KEY, length REAL NOT NULL, term_ids BLOB NOT NULL,
  counts BLOB NOT NULL);  -- counts: float32 (title tokens count title_weight each)
-- the questions-answered index: generated questions' vectors, filtered through their chunk's restrict row;
-- generation: the document generation they were generated from (a redelivered older message cannot win)
CREATE TABLE IF NOT EXISTS question_vec(chunk_rowid INTEGER NOT NULL, n INTEGER NOT NULL,
  generation INTEGER NOT NULL, emb BLOB NOT NULL, PRIMARY KEY(chunk_rowid, n));
"""


class SqliteFile:
    """One index file: the schema created on open, and the embedding model its vectors belong to checked."""

    def __init__(self, path: Path | str, dimension: int | None = None, model_id: str | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(self.path)
        self._dimension = dimension
        self._model_id = model_id
        with self._pool.write_lock:
            con = self._pool.get()
            columns = {row[1] for row in con.execute("PRAGMA table_info(lex)")}
            if columns and "term_ids" not in columns:
                raise InvalidInput(
                    f"the index at {self.path} was built by an older version of regrag (FTS5/sqlite-vec layout); "
                    "delete it and ingest again (vectors come back from the vector cache)"
                )
            con.executescript(_SCHEMA)
            self._init_vectors(con)

    def _init_vectors(self, con: Any) -> None:
        row = con.execute("SELECT value FROM meta WHERE key='embedding'").fetchone()
        if row is not None:
            stored = json.loads(row[0])
            if self._dimension is not None and (stored["dimension"], stored["model"]) != (
                self._dimension,
                self._model_id,
            ):
                raise InvalidInput(
                    f"the index at {self.path} holds {stored['model']} vectors ({stored['dimension']} dims); "
                    f"this configuration embeds with {self._model_id} ({self._dimension} dims). "
                    "Vectors of different models must not mix: use another REGRAG_DATA_DIR or delete the index."
                )
            self._dimension, self._model_id = stored["dimension"], stored["model"]
        elif self._dimension is not None:
            con.execute(
                "INSERT INTO meta(key, value) VALUES ('embedding', ?)",
                (json.dumps({"dimension": self._dimension, "model": self._model_id}),),
            )

    @property
    def dimension(self) -> int | None:
        return self._dimension

    @property
    def model_id(self) -> str | None:
        return self._model_id

    def close(self) -> None:
        self._pool.close()

    def _con(self) -> Any:
        return self._pool.get()

    def _rowids(self, con: Any, ids: Sequence[str], create: bool) -> dict[str, int]:
        out: dict[str, int] = {}
        for cid in ids:
            row = con.execute("SELECT rowid FROM chunk_key WHERE id=?", (cid,)).fetchone()
            if row is None and create:
                row = (con.execute("INSERT INTO chunk_key(id) VALUES (?)", (cid,)).lastrowid,)
            if row is not None:
                out[cid] = row[0]
        return out

    def index_version(self) -> int:
        """A counter that every write to documents or chunks increments: part of cache keys."""
        row = self._con().execute("SELECT value FROM meta WHERE key='index_version'").fetchone()
        return int(row[0]) if row else 0

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Any]:
        """One write transaction that also bumps the index version, so every reader's snapshot rebuilds."""
        with self._pool.transaction() as con:
            yield con
            _bump_version(con)


def _bump_version(con: Any) -> None:
    con.execute(
        "INSERT INTO meta(key, value) VALUES ('index_version', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
