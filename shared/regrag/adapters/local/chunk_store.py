"""The embedded index: documents, chunks, vectors, term counts and restricts in one SQLite file.

SQLite is the durable store; searches run on an in-memory `SearchSnapshot` (see snapshot.py) rebuilt when the
index version changes, with every filter applied before top-k. Writers bump the version inside their
transaction, so any process that reads the index sees a consistent snapshot after the next search.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from regrag.adapters.local.snapshot import SearchSnapshot, build_snapshot
from regrag.adapters.local.sqlite_db import ConnectionPool
from regrag.domain import versions
from regrag.domain.errors import InvalidInput, NotFound
from regrag.domain.lexical import Bm25Params
from regrag.domain.models import Chunk, DocumentMeta, Filters, Hit, date_int
from regrag.ports import PutResult

OPEN_END = 99991231  # effective_to of a version still in force

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS document(
  doc_id TEXT PRIMARY KEY, corpus TEXT NOT NULL, generation INTEGER NOT NULL,
  meta_json TEXT NOT NULL, text TEXT NOT NULL, updated_at TEXT NOT NULL);
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
CREATE TABLE IF NOT EXISTS vec_store(rowid INTEGER PRIMARY KEY, emb BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS lex_vocab(id INTEGER PRIMARY KEY, term TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS lex(rowid INTEGER PRIMARY KEY, length REAL NOT NULL, term_ids BLOB NOT NULL,
  counts BLOB NOT NULL);  -- counts: float32 (title tokens count title_weight each)
-- the questions-answered index: generated questions' vectors, filtered through their chunk's restrict row;
-- generation: the document generation they were generated from (a redelivered older message cannot win)
CREATE TABLE IF NOT EXISTS question_vec(chunk_rowid INTEGER NOT NULL, n INTEGER NOT NULL,
  generation INTEGER NOT NULL, emb BLOB NOT NULL, PRIMARY KEY(chunk_rowid, n));
"""


def restricts(meta: DocumentMeta) -> dict[str, Any]:
    """The filterable columns of a chunk, from its document's metadata."""
    return {
        "corpus": meta.corpus,
        "province": meta.province,
        "asset": meta.asset,
        "doc_class": meta.doc_class,
        "level": meta.regulation_level,
        "doc_id": meta.doc_id,
        "eff": date_int(meta.effective_date) or 0,
        "eff_to": date_int(meta.effective_to) or OPEN_END,
    }


class SqliteIndex:
    """The ChunkStore, plus the storage behind SqliteVectorIndex and SqliteLexicalIndex, in one SQLite file."""

    def __init__(
        self,
        path: Path | str,
        dimension: int | None = None,
        model_id: str | None = None,
        bm25: Bm25Params | None = None,
        *,
        search_questions: bool = True,
    ) -> None:
        """`search_questions`: load the questions-answered index into the search snapshot. Off, its vectors
        are still written and deleted but never read, so an index that holds them costs no memory or load time
        while the aid is switched off."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(self.path)
        self._dimension = dimension
        self._model_id = model_id
        self.bm25 = bm25 or Bm25Params()
        self.search_questions_enabled = search_questions
        self._snapshot: SearchSnapshot | None = None
        self._snapshot_lock = threading.Lock()
        self._vocab: dict[str, int] = {}  # term ids never change once assigned, so a process may cache them
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

    # --- housekeeping -------------------------------------------------------------------------------------

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

    def stats(self) -> dict[str, Any]:
        con = self._con()
        docs = con.execute("SELECT count(*) FROM document").fetchone()[0]
        chunks = con.execute("SELECT count(*) FROM chunk").fetchone()[0]
        by_corpus = con.execute(
            "SELECT d.corpus, count(DISTINCT d.doc_id), count(c.rowid) FROM document d "
            "LEFT JOIN chunk c ON c.doc_id = d.doc_id GROUP BY d.corpus ORDER BY d.corpus"
        ).fetchall()
        last = con.execute("SELECT max(updated_at) FROM document").fetchone()[0]
        return {
            "documents": docs,
            "chunks": chunks,
            "corpora": [{"corpus": c, "documents": d, "chunks": n} for c, d, n in by_corpus],
            "embedding_model": self._model_id,
            "dimension": self._dimension,
            "last_ingest": last,
            "index_version": self.index_version(),
        }

    # --- ChunkStore ---------------------------------------------------------------------------------------

    def document_generation(self, doc_id: str) -> int | None:
        row = self._con().execute("SELECT generation FROM document WHERE doc_id=?", (doc_id,)).fetchone()
        return None if row is None else int(row[0])

    def put_part(self, meta: DocumentMeta, text: str, chunks: Sequence[Chunk], part: int, parts: int) -> PutResult:
        with self._writing() as con:
            meta, relinked = self._link_versions(con, meta)
            now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            con.execute(
                "INSERT INTO document(doc_id, corpus, generation, meta_json, text, updated_at) "
                "VALUES (?,?,?,?,?,?) "
                "ON CONFLICT(doc_id) DO UPDATE SET corpus=excluded.corpus, generation=excluded.generation, "
                "meta_json=excluded.meta_json, text=excluded.text, updated_at=excluded.updated_at",
                (
                    meta.doc_id,
                    meta.corpus,
                    meta.generation,
                    json.dumps(meta.to_dict(), ensure_ascii=False),
                    text,
                    now,
                ),
            )
            con.execute("DELETE FROM doc_key WHERE doc_id=?", (meta.doc_id,))
            con.executemany(
                "INSERT OR IGNORE INTO doc_key(doc_id, corpus, kind, key) VALUES (?,?,?,?)",
                [(meta.doc_id, scope, kind, key) for scope, kind, key in meta.index_keys()],
            )
            rowids = self._rowids(con, [c.id for c in chunks], create=True)
            for c in chunks:
                data = c.to_dict()
                del data["meta"]
                con.execute(
                    "INSERT INTO chunk(rowid, id, doc_id, generation, ordinal, part, data_json) "
                    "VALUES (?,?,?,?,?,?,?) "
                    "ON CONFLICT(id) DO UPDATE SET doc_id=excluded.doc_id, generation=excluded.generation, "
                    "ordinal=excluded.ordinal, part=excluded.part, data_json=excluded.data_json",
                    (
                        rowids[c.id],
                        c.id,
                        c.doc_id,
                        meta.generation,
                        c.ordinal,
                        c.part,
                        json.dumps(data, ensure_ascii=False),
                    ),
                )
            con.execute(
                "INSERT OR REPLACE INTO doc_part(doc_id, generation, part, parts, chunk_ids) VALUES (?,?,?,?,?)",
                (meta.doc_id, meta.generation, part, parts, json.dumps([c.id for c in chunks])),
            )
        return PutResult(meta, relinked)

    def set_supersedes(self, doc_id: str, older_id: str | None) -> PutResult:
        with self._writing() as con:
            row = con.execute("SELECT meta_json FROM document WHERE doc_id=?", (doc_id,)).fetchone()
            if row is None:
                raise NotFound(f"no document {doc_id!r}")
            meta = DocumentMeta.from_dict(json.loads(row[0]))
            relinked: tuple[str, ...] = ()
            if older_id is None and meta.supersedes:
                relinked = self._unlink_older(con, meta.supersedes, doc_id)
            meta = meta.with_changes(supersedes=older_id)
            if older_id is not None:
                meta, relinked = self._link_versions(con, meta)
            con.execute(
                "UPDATE document SET meta_json=? WHERE doc_id=?",
                (json.dumps(meta.to_dict(), ensure_ascii=False), doc_id),
            )
        return PutResult(meta, relinked)

    def _unlink_older(self, con: Any, older_id: str, newer_id: str) -> tuple[str, ...]:
        """The version a withdrawn successor superseded is in force again."""
        row = con.execute("SELECT meta_json FROM document WHERE doc_id=?", (older_id,)).fetchone()
        if row is None:
            return ()
        older = DocumentMeta.from_dict(json.loads(row[0]))
        if older.superseded_by != newer_id:
            return ()
        freed = versions.freed(older)
        con.execute(
            "UPDATE document SET meta_json=? WHERE doc_id=?",
            (json.dumps(freed.to_dict(), ensure_ascii=False), older_id),
        )
        return (older_id,)

    def _link_versions(self, con: Any, meta: DocumentMeta) -> tuple[DocumentMeta, tuple[str, ...]]:
        """Keep supersedes/superseded_by and effective_to consistent whichever version arrives first."""
        relinked: list[str] = []
        successor = con.execute(
            "SELECT meta_json FROM document WHERE json_extract(meta_json, '$.supersedes') = ? AND doc_id != ?",
            (meta.doc_id, meta.doc_id),
        ).fetchone()
        if successor is not None:
            newer = DocumentMeta.from_dict(json.loads(successor[0]))
            meta = versions.superseded(meta, newer)
        if meta.supersedes:
            row = con.execute("SELECT meta_json FROM document WHERE doc_id=?", (meta.supersedes,)).fetchone()
            if row is not None:
                older = DocumentMeta.from_dict(json.loads(row[0]))
                linked = versions.superseded(older, meta)
                if linked != older:
                    con.execute(
                        "UPDATE document SET meta_json=? WHERE doc_id=?",
                        (json.dumps(linked.to_dict(), ensure_ascii=False), older.doc_id),
                    )
                    relinked.append(older.doc_id)
        return meta, tuple(relinked)

    def obsolete_chunk_ids(self, doc_id: str) -> list[str]:
        con = self._con()
        row = con.execute("SELECT generation FROM document WHERE doc_id=?", (doc_id,)).fetchone()
        if row is None:
            return []
        generation = row[0]
        stale = [
            r[0] for r in con.execute("SELECT id FROM chunk WHERE doc_id=? AND generation<?", (doc_id, generation))
        ]
        parts = con.execute(
            "SELECT part, parts, chunk_ids FROM doc_part WHERE doc_id=? AND generation=?", (doc_id, generation)
        ).fetchall()
        if parts and len({p for p, _, _ in parts}) == parts[0][1]:
            keep = {cid for _, _, ids in parts for cid in json.loads(ids)}
            current = [
                r[0] for r in con.execute("SELECT id FROM chunk WHERE doc_id=? AND generation=?", (doc_id, generation))
            ]
            stale.extend(cid for cid in current if cid not in keep)
        return stale

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        if not chunk_ids:
            return
        with self._writing() as con:
            con.executemany("DELETE FROM chunk WHERE id=?", [(c,) for c in chunk_ids])

    def delete_document(self, doc_id: str) -> list[str]:
        with self._writing() as con:
            ids = [r[0] for r in con.execute("SELECT id FROM chunk WHERE doc_id=?", (doc_id,))]
            con.execute("DELETE FROM chunk WHERE doc_id=?", (doc_id,))
            con.execute("DELETE FROM doc_part WHERE doc_id=?", (doc_id,))
            con.execute("DELETE FROM document WHERE doc_id=?", (doc_id,))
            con.execute("DELETE FROM doc_key WHERE doc_id=?", (doc_id,))
            # A successor whose predecessor is gone keeps its own metadata; a predecessor of a deleted
            # successor is in force again.
            for (pred,) in con.execute(
                "SELECT doc_id FROM document WHERE json_extract(meta_json, '$.superseded_by') = ?", (doc_id,)
            ).fetchall():
                row = con.execute("SELECT meta_json FROM document WHERE doc_id=?", (pred,)).fetchone()
                old = DocumentMeta.from_dict(json.loads(row[0]))
                con.execute(
                    "UPDATE document SET meta_json=? WHERE doc_id=?",
                    (
                        json.dumps(versions.freed(old).to_dict(), ensure_ascii=False),
                        pred,
                    ),
                )
        return ids

    def _meta(self, con: Any, doc_ids: set[str]) -> dict[str, DocumentMeta]:
        if not doc_ids:
            return {}
        rows = con.execute(
            f"SELECT doc_id, meta_json FROM document WHERE doc_id IN ({','.join('?' * len(doc_ids))})", tuple(doc_ids)
        ).fetchall()
        return {d: DocumentMeta.from_dict(json.loads(m)) for d, m in rows}

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        if not chunk_ids:
            return []
        con = self._con()
        rows = con.execute(
            f"SELECT id, doc_id, data_json FROM chunk WHERE id IN ({','.join('?' * len(chunk_ids))})", tuple(chunk_ids)
        ).fetchall()
        metas = self._meta(con, {r[1] for r in rows})
        by_id = {r[0]: Chunk.from_dict({**json.loads(r[2]), "meta": metas[r[1]]}) for r in rows if r[1] in metas}
        return [by_id[c] for c in chunk_ids if c in by_id]

    def get_document(self, doc_id: str) -> tuple[DocumentMeta, str] | None:
        row = self._con().execute("SELECT meta_json, text FROM document WHERE doc_id=?", (doc_id,)).fetchone()
        if row is None:
            return None
        return DocumentMeta.from_dict(json.loads(row[0])), row[1]

    def list_documents(self, corpus: str | None = None) -> list[DocumentMeta]:
        con = self._con()
        if corpus is None:
            rows = con.execute("SELECT meta_json FROM document ORDER BY doc_id").fetchall()
        else:
            rows = con.execute("SELECT meta_json FROM document WHERE corpus=? ORDER BY doc_id", (corpus,)).fetchall()
        return [DocumentMeta.from_dict(json.loads(r[0])) for r in rows]

    def corpus_names(self) -> list[str]:
        return [r[0] for r in self._con().execute("SELECT DISTINCT corpus FROM document ORDER BY corpus")]

    def find_documents(self, corpus: str, kind: str, key: str) -> list[DocumentMeta]:
        rows = (
            self._con()
            .execute(
                "SELECT d.meta_json FROM doc_key k JOIN document d ON d.doc_id = k.doc_id "
                "WHERE k.corpus=? AND k.kind=? AND k.key=? ORDER BY d.doc_id",
                (corpus, kind, key),
            )
            .fetchall()
        )
        return [DocumentMeta.from_dict(json.loads(r[0])) for r in rows]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        con = self._con()
        metas = self._meta(con, {doc_id})
        if doc_id not in metas:
            return []
        rows = con.execute("SELECT data_json FROM chunk WHERE doc_id=? ORDER BY ordinal, part", (doc_id,)).fetchall()
        meta = metas[doc_id]
        return [Chunk.from_dict({**json.loads(r[0]), "meta": meta}) for r in rows]

    # --- VectorIndex --------------------------------------------------------------------------------------

    def _require_vectors(self, dimension: int | None = None) -> None:
        if self._dimension is None:
            raise InvalidInput(f"the index at {self.path} was opened without an embedding dimension")
        if dimension is not None and dimension != self._dimension:
            raise InvalidInput(f"vector has {dimension} dimensions; the index holds {self._dimension}")

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Any]:
        """One write transaction that also bumps the index version, so every reader's snapshot rebuilds."""
        with self._pool.transaction() as con:
            yield con
            _bump_version(con)

    @staticmethod
    def _put_restricts(con: Any, rowid: int, meta: DocumentMeta) -> None:
        r = restricts(meta)
        con.execute(
            "INSERT OR REPLACE INTO restrict(rowid, corpus, province, asset, doc_class, level, doc_id, eff, eff_to) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (
                rowid,
                r["corpus"],
                r["province"],
                r["asset"],
                r["doc_class"],
                r["level"],
                r["doc_id"],
                r["eff"],
                r["eff_to"],
            ),
        )

    def upsert_vectors(self, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None:
        """One vector per chunk, replacing any vector with the same id."""
        if len(chunks) != len(vectors):
            raise InvalidInput(f"{len(chunks)} chunks but {len(vectors)} vectors")
        self._require_vectors()
        rows = []
        for c, v in zip(chunks, vectors, strict=True):
            arr = np.asarray(v, dtype=np.float32).reshape(-1)
            self._require_vectors(arr.shape[-1])
            if not np.all(np.isfinite(arr)):
                raise InvalidInput(f"vector of chunk {c.id} has non-finite values")
            rows.append((c, arr.astype("<f4").tobytes()))

        with self._writing() as con:
            rowids = self._rowids(con, [c.id for c, _ in rows], create=True)
            for c, blob in rows:
                self._put_restricts(con, rowids[c.id], c.meta)
                con.execute("INSERT OR REPLACE INTO vec_store(rowid, emb) VALUES (?,?)", (rowids[c.id], blob))

    def delete_vectors(self, chunk_ids: Sequence[str]) -> None:
        self._delete_rows(chunk_ids, "vec_store")

    def _delete_rows(self, chunk_ids: Sequence[str], table: str, column: str = "rowid") -> None:
        if not chunk_ids:
            return

        with self._writing() as con:
            for rid in self._rowids(con, chunk_ids, create=False).values():
                con.execute(f"DELETE FROM {table} WHERE {column}=?", (rid,))
                # the restricts go when no leg knows the chunk any more
                con.execute(
                    "DELETE FROM restrict WHERE rowid=? AND NOT EXISTS (SELECT 1 FROM vec_store WHERE rowid=?) "
                    "AND NOT EXISTS (SELECT 1 FROM lex WHERE rowid=?) "
                    "AND NOT EXISTS (SELECT 1 FROM question_vec WHERE chunk_rowid=?)",
                    (rid, rid, rid, rid),
                )

    def upsert_questions(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[np.ndarray]]) -> None:
        """Replace each chunk's question vectors, unless the stored ones come from a newer generation.

        The chunk's restrict row is created when missing but never overwritten here: the chunk's own upsert
        (which runs after the embed stage) and refresh_metadata own it, with the version links the questions'
        message may not know yet.
        """
        if len(chunks) != len(vectors):
            raise InvalidInput(f"{len(chunks)} chunks but {len(vectors)} question vector lists")
        self._require_vectors()
        rows = []
        for c, vecs in zip(chunks, vectors, strict=True):
            blobs = []
            for v in vecs:
                arr = np.asarray(v, dtype=np.float32).reshape(-1)
                self._require_vectors(arr.shape[-1])
                if not np.all(np.isfinite(arr)):
                    raise InvalidInput(f"a question vector of chunk {c.id} has non-finite values")
                blobs.append(arr.astype("<f4").tobytes())
            rows.append((c, blobs))

        with self._writing() as con:
            rowids = self._rowids(con, [c.id for c, _ in rows], create=True)
            for c, blobs in rows:
                rid = rowids[c.id]
                stored = con.execute("SELECT max(generation) FROM question_vec WHERE chunk_rowid=?", (rid,)).fetchone()
                if stored[0] is not None and stored[0] > c.meta.generation:
                    continue
                con.execute("DELETE FROM question_vec WHERE chunk_rowid=?", (rid,))
                con.executemany(
                    "INSERT INTO question_vec(chunk_rowid, n, generation, emb) VALUES (?,?,?,?)",
                    [(rid, n, c.meta.generation, blob) for n, blob in enumerate(blobs)],
                )
                if blobs and con.execute("SELECT 1 FROM restrict WHERE rowid=?", (rid,)).fetchone() is None:
                    self._put_restricts(con, rid, c.meta)

    def delete_questions(self, chunk_ids: Sequence[str]) -> None:
        self._delete_rows(chunk_ids, "question_vec", "chunk_rowid")

    def search_questions(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        """Chunks that pass `filters`, ranked by their best question's cosine similarity to `vector`."""
        if not self.search_questions_enabled:
            raise InvalidInput(f"the index at {self.path} was opened without its question vectors")
        arr = np.asarray(vector, dtype=np.float32).reshape(-1)
        self._require_vectors(arr.shape[-1])
        return self.snapshot().questions(arr, filters, int(k))

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        """Rewrite the filter columns of existing chunks (their validity dates changed)."""

        with self._writing() as con:
            rowids = self._rowids(con, [c.id for c in chunks], create=False)
            for c in chunks:
                if c.id in rowids and con.execute("SELECT 1 FROM restrict WHERE rowid=?", (rowids[c.id],)).fetchone():
                    self._put_restricts(con, rowids[c.id], c.meta)

    def _term_ids(self, con: Any, terms: set[str]) -> dict[str, int]:
        missing = [t for t in terms if t not in self._vocab]
        for term in missing:
            con.execute("INSERT OR IGNORE INTO lex_vocab(term) VALUES (?)", (term,))
            self._vocab[term] = con.execute("SELECT id FROM lex_vocab WHERE term=?", (term,)).fetchone()[0]
        return {t: self._vocab[t] for t in terms}

    def upsert_lexical(
        self,
        chunks: Sequence[Chunk],
        body_tokens: Sequence[Sequence[str]],
        title_tokens: Sequence[Sequence[str]],
        title_weight: float = 0.5,
    ) -> None:
        """Store each chunk's term counts: its text's tokens, plus its title/heading tokens counted
        `title_weight` each (one bag, the same weighting as the Vertex sparse vectors)."""

        try:
            with self._writing() as con:
                rowids = self._rowids(con, [c.id for c in chunks], create=True)
                for c, body, title in zip(chunks, body_tokens, title_tokens, strict=True):
                    counts: dict[str, float] = dict(Counter(body))
                    for token in title:
                        counts[token] = counts.get(token, 0.0) + title_weight
                    ids = self._term_ids(con, set(counts))
                    terms = sorted(counts)
                    con.execute(
                        "INSERT OR REPLACE INTO lex(rowid, length, term_ids, counts) VALUES (?,?,?,?)",
                        (
                            rowids[c.id],
                            len(body) + title_weight * len(title),
                            np.asarray([ids[t] for t in terms], dtype="<i4").tobytes(),
                            np.asarray([counts[t] for t in terms], dtype="<f4").tobytes(),
                        ),
                    )
                    self._put_restricts(con, rowids[c.id], c.meta)
        except BaseException:
            self._vocab.clear()  # ids assigned inside a rolled-back transaction do not exist
            raise

    def delete_lexical(self, chunk_ids: Sequence[str]) -> None:
        self._delete_rows(chunk_ids, "lex")

    def snapshot(self) -> SearchSnapshot:
        """The in-memory search arrays for the current index version (rebuilt after any write)."""
        version = self.index_version()
        current = self._snapshot
        if current is not None and current.version == version:
            return current
        with self._snapshot_lock:
            if self._snapshot is not None and self._snapshot.version == version:
                return self._snapshot
            con = self._con()
            con.execute("BEGIN")  # one read transaction: every table at the same version
            try:
                version = self.index_version()
                rows = con.execute(
                    "SELECT r.rowid, k.id, r.corpus, r.province, r.asset, r.doc_class, r.level, r.doc_id, r.eff, "
                    "r.eff_to FROM restrict r JOIN chunk_key k ON k.rowid = r.rowid ORDER BY r.rowid"
                ).fetchall()
                vectors = dict(con.execute("SELECT rowid, emb FROM vec_store").fetchall())
                terms = {
                    r[0]: (r[1], r[2], r[3]) for r in con.execute("SELECT rowid, length, term_ids, counts FROM lex")
                }
                vocab = dict(con.execute("SELECT term, id FROM lex_vocab").fetchall())
                questions = (
                    con.execute("SELECT chunk_rowid, emb FROM question_vec ORDER BY chunk_rowid, n").fetchall()
                    if self.search_questions_enabled
                    else []
                )
            finally:
                con.execute("COMMIT")
            self._snapshot = build_snapshot(version, rows, vectors, self._dimension, terms, vocab, self.bm25, questions)
            return self._snapshot

    def search_vectors(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        """Exact cosine KNN over the chunks that pass `filters` (score = cosine similarity)."""
        arr = np.asarray(vector, dtype=np.float32).reshape(-1)
        self._require_vectors(arr.shape[-1])
        return self.snapshot().dense(arr, filters, int(k))

    def search_lexical(self, tokens: Sequence[str], filters: Filters, k: int) -> list[Hit]:
        """BM25 over the chunks that pass `filters` and share at least one token with the query."""
        if not tokens:
            return []
        return self.snapshot().lexical(tokens, filters, int(k))


def _bump_version(con: Any) -> None:
    con.execute(
        "INSERT INTO meta(key, value) VALUES ('index_version', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
