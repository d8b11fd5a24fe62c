"""The index's SQLite file: its schema, which embedding model its vectors come from, the version counter every
write bumps, write transactions, and the checksums of its rows. SqliteSearchStore (the search legs' tables) and
SqliteIndex (the ChunkStore) build on it.

Rows carry a CRC-32 (`sum`) of what they hold: documents (metadata and text), chunks, vectors, term counts
(checksums.py says why SQLite's own check is not enough). A document's `complete` is the generation that was
written whole: chunks, vectors, terms, version links and obsolete chunks in one transaction (`atomically`);
`regrag ingest` redoes a document that is not complete instead of calling it unchanged."""

from __future__ import annotations

import contextlib
import json
import logging
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from regrag import logs
from regrag.adapters.local import checksums
from regrag.adapters.local.sqlite_db import ConnectionPool
from regrag.domain.errors import InvalidInput

log = logs.get("index")
# what a damaged index file's error tells the operator to do
INDEX_REPAIR = "run `regrag repair` (it sets the damaged index aside and rebuilds it from the bucket)"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- complete: the generation written whole (NULL: never); sum: CRC-32 of meta_json and text (checksums.py)
CREATE TABLE IF NOT EXISTS document(
  doc_id TEXT PRIMARY KEY, corpus TEXT NOT NULL, generation INTEGER NOT NULL,
  meta_json TEXT NOT NULL, text TEXT NOT NULL, updated_at TEXT NOT NULL, complete INTEGER, sum INTEGER);
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
  ordinal INTEGER NOT NULL, part INTEGER NOT NULL, data_json TEXT NOT NULL, sum INTEGER);
CREATE INDEX IF NOT EXISTS chunk_doc ON chunk(doc_id, ordinal, part);
-- the filterable columns of every chunk that has a vector or terms (shared by both search legs)
CREATE TABLE IF NOT EXISTS restrict(
  rowid INTEGER PRIMARY KEY, corpus TEXT, province TEXT, asset TEXT, doc_class TEXT, level TEXT,
  doc_id TEXT, eff INTEGER, eff_to INTEGER);
-- (corpus, rowid) is the search snapshot's row order: the build reads the term counts in it (snapshot_build.py)
CREATE INDEX IF NOT EXISTS restrict_corpus ON restrict(corpus);
CREATE TABLE IF NOT EXISTS vec_store(rowid INTEGER PRIMARY KEY, emb BLOB NOT NULL, sum INTEGER);
CREATE TABLE IF NOT EXISTS lex_vocab(id INTEGER PRIMARY KEY, term TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS lex(rowid INTEGER PRIMARY KEY, length REAL NOT NULL, term_ids BLOB NOT NULL,
  counts BLOB NOT NULL, sum INTEGER);  -- counts: float32 (title tokens count title_weight each)
-- the questions-answered index: generated questions' vectors, filtered through their chunk's restrict row;
-- generation: the document generation they were generated from (a redelivered older message cannot win)
CREATE TABLE IF NOT EXISTS question_vec(chunk_rowid INTEGER NOT NULL, n INTEGER NOT NULL,
  generation INTEGER NOT NULL, emb BLOB NOT NULL, PRIMARY KEY(chunk_rowid, n));
-- the parts of a document that arrived in several messages, kept until the last one arrives: the document is
-- then written whole, in one transaction (ingest/upsert.py)
CREATE TABLE IF NOT EXISTS staged_part(doc_id TEXT NOT NULL, generation INTEGER NOT NULL, part INTEGER NOT NULL,
  parts INTEGER NOT NULL, message TEXT NOT NULL, sum INTEGER NOT NULL, PRIMARY KEY(doc_id, generation, part, parts));
"""
# columns added since the first release of the layout: an older file gets them, and its rows their checksums
_ADDED_COLUMNS = {
    "document": ("complete INTEGER", "sum INTEGER"),
    "chunk": ("sum INTEGER",),
    "vec_store": ("sum INTEGER",),
    "lex": ("sum INTEGER",),
}


def document_sum(meta_json: str, text: str) -> int:
    return checksums.of(meta_json, "\x1f", text)


def chunk_sum(chunk_id: str, doc_id: str, generation: int, data_json: str) -> int:
    return checksums.of(chunk_id, "\x1f", doc_id, "\x1f", str(int(generation)), "\x1f", data_json)


# the two below run once per row of a snapshot build: zlib directly, the same values as checksums.of
def vector_sum(emb: bytes) -> int:
    return zlib.crc32(emb)


def terms_sum(length: float, term_ids: bytes, counts: bytes) -> int:
    return zlib.crc32(counts, zlib.crc32(term_ids, zlib.crc32(repr(float(length)).encode("ascii"))))


class SqliteFile:
    """One index file: the schema created on open, and the embedding model its vectors belong to checked."""

    def __init__(self, path: Path | str, dimension: int | None = None, model_id: str | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(self.path, INDEX_REPAIR)
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
            self._add_columns(con)
            self._init_vectors(con)

    def _add_columns(self, con: Any) -> None:
        """Give a file of an older layout the columns added since, then seal what it holds: every row gets its
        checksum, and every document whose chunks all have their vector and terms (and whose parts all arrived)
        counts as complete. A document an interrupted ingest left half-written is not: the next ingest redoes it."""
        added = []
        for table, columns in _ADDED_COLUMNS.items():
            have = {row[1] for row in con.execute(f"PRAGMA table_info({table})")}
            for column in columns:
                if column.split()[0] not in have:
                    added.append((table, column))
        if not added:
            return
        with self._pool.transaction():
            for table, column in added:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
            self._seal(con)
        logs.event(log, logging.WARNING, "index upgraded: checksums and completion recorded", path=str(self.path))

    def _seal(self, con: Any) -> None:
        rows = con.execute("SELECT doc_id, meta_json, text FROM document WHERE sum IS NULL").fetchall()
        con.executemany("UPDATE document SET sum=? WHERE doc_id=?", [(document_sum(m, t), d) for d, m, t in rows])
        rows = con.execute("SELECT rowid, id, doc_id, generation, data_json FROM chunk WHERE sum IS NULL").fetchall()
        con.executemany("UPDATE chunk SET sum=? WHERE rowid=?", [(chunk_sum(i, d, g, j), r) for r, i, d, g, j in rows])
        for rowid, emb in con.execute("SELECT rowid, emb FROM vec_store WHERE sum IS NULL").fetchall():
            con.execute("UPDATE vec_store SET sum=? WHERE rowid=?", (vector_sum(emb), rowid))
        for rowid, length, ids, counts in con.execute(
            "SELECT rowid, length, term_ids, counts FROM lex WHERE sum IS NULL"
        ).fetchall():
            con.execute("UPDATE lex SET sum=? WHERE rowid=?", (terms_sum(length, ids, counts), rowid))
        con.execute(
            f"UPDATE document SET complete = generation WHERE complete IS NULL AND doc_id NOT IN ({UNWRITTEN_SQL})"
        )

    def _init_vectors(self, con: Any) -> None:
        row = con.execute("SELECT value FROM meta WHERE key='embedding'").fetchone()
        if row is None and self._dimension is not None:
            # a fresh file: another process opening it at the same moment may record its model first, and then
            # that record is the one checked below
            con.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('embedding', ?)",
                (json.dumps({"dimension": self._dimension, "model": self._model_id}),),
            )
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
        """One write transaction that also bumps the index version, so every reader's snapshot rebuilds. Inside
        another block of this thread (`atomically`), it joins that block's transaction."""
        outermost = self._pool.depth() == 0
        with self._pool.transaction() as con:
            yield con
            if outermost:
                _bump_version(con)

    @contextlib.contextmanager
    def atomically(self) -> Iterator[None]:
        """Every write on this thread inside the block (through this store and the search views over it) is one
        transaction: readers in this process and in others see all of it or none of it, and a process killed
        inside the block leaves nothing behind."""
        with self._writing():
            yield


# Documents not written whole: a chunk without its vector or its terms, a chunk of an older generation left
# behind (a document in parts is kept until it is whole, ingest/upsert.py, so a stored one has all its parts).
# Used by the upgrade above and by SqliteIndex's integrity checks (one definition of "unwritten").
UNWRITTEN_SQL = """
SELECT c.doc_id FROM chunk c JOIN document d ON d.doc_id = c.doc_id AND c.generation = d.generation
WHERE NOT EXISTS (SELECT 1 FROM vec_store v WHERE v.rowid = c.rowid)
   OR NOT EXISTS (SELECT 1 FROM lex l WHERE l.rowid = c.rowid)
UNION
SELECT d.doc_id FROM document d WHERE NOT EXISTS (SELECT 1 FROM chunk c WHERE c.doc_id = d.doc_id)
UNION
SELECT c.doc_id FROM chunk c JOIN document d ON d.doc_id = c.doc_id AND c.generation < d.generation
"""


def _bump_version(con: Any) -> None:
    con.execute(
        "INSERT INTO meta(key, value) VALUES ('index_version', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
