"""The embedded index: documents, chunks, FTS5 BM25 and sqlite-vec KNN in one SQLite file.

Filters run inside both searches: vec0 metadata columns restrict the KNN scan itself (k matching rows come
back, not k rows filtered afterwards), and the FTS5 query joins the chunk table in the same statement.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from regrag.adapters.local.sqlite_db import ConnectionPool
from regrag.domain.errors import InvalidInput
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
CREATE TABLE IF NOT EXISTS chunk(
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, doc_id TEXT NOT NULL, generation INTEGER NOT NULL,
  ordinal INTEGER NOT NULL, part INTEGER NOT NULL, data_json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunk_doc ON chunk(doc_id, ordinal, part);
CREATE TABLE IF NOT EXISTS lex(
  rowid INTEGER PRIMARY KEY, corpus TEXT, province TEXT, asset TEXT, doc_class TEXT, level TEXT,
  doc_id TEXT, eff INTEGER, eff_to INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS lex_fts USING fts5(body, title, tokenize='unicode61 remove_diacritics 0');
"""

_FILTER_COLUMNS = {
    "province": "province",
    "asset": "asset",
    "doc_class": "doc_class",
    "regulation_level": "level",
    "corpus": "corpus",
    "doc_id": "doc_id",
}


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


def filter_sql(filters: Filters, alias: str = "") -> tuple[str, list[Any]]:
    """SQL conditions (ANDed, leading ' AND ') and parameters for `filters` on the restrict columns."""
    prefix = f"{alias}." if alias else ""
    sql: list[str] = []
    params: list[Any] = []
    for field_name, column in _FILTER_COLUMNS.items():
        values = getattr(filters, field_name)
        if values:
            sql.append(f"{prefix}{column} IN ({','.join('?' * len(values))})")
            params.extend(values)
    if filters.date_from:
        sql.append(f"{prefix}eff >= ?")
        params.append(date_int(filters.date_from))
    if filters.date_to:
        sql.append(f"{prefix}eff <= ?")
        params.append(date_int(filters.date_to))
    if filters.as_of and not filters.include_superseded:
        day = date_int(filters.as_of)
        sql.append(f"{prefix}eff <= ? AND {prefix}eff_to > ?")
        params.extend([day, day])
    return "".join(f" AND {s}" for s in sql), params


class SqliteIndex:
    """The ChunkStore, plus the storage behind SqliteVectorIndex and SqliteLexicalIndex, in one SQLite file."""

    def __init__(self, path: Path | str, dimension: int | None = None, model_id: str | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pool = ConnectionPool(self.path)
        self._dimension = dimension
        self._model_id = model_id
        with self._pool.write_lock:
            con = self._pool.get()
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
        if self._dimension is not None:
            con.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS vec USING vec0(emb float[{int(self._dimension)}] "
                "distance_metric=cosine, corpus text, province text, asset text, doc_class text, level text, "
                "doc_id text, eff integer, eff_to integer)"
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
        with self._pool.write_lock:
            con = self._con()
            con.execute("BEGIN IMMEDIATE")
            try:
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
                _bump_version(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        return PutResult(meta, relinked)

    def _link_versions(self, con: Any, meta: DocumentMeta) -> tuple[DocumentMeta, tuple[str, ...]]:
        """Keep supersedes/superseded_by and effective_to consistent whichever version arrives first."""
        relinked: list[str] = []
        successor = con.execute(
            "SELECT meta_json FROM document WHERE json_extract(meta_json, '$.supersedes') = ? AND doc_id != ?",
            (meta.doc_id, meta.doc_id),
        ).fetchone()
        if successor is not None:
            newer = DocumentMeta.from_dict(json.loads(successor[0]))
            meta = meta.with_changes(
                superseded_by=newer.doc_id, effective_to=_earliest(meta.effective_to, newer.effective_date)
            )
        if meta.supersedes:
            row = con.execute("SELECT meta_json FROM document WHERE doc_id=?", (meta.supersedes,)).fetchone()
            if row is not None:
                older = DocumentMeta.from_dict(json.loads(row[0]))
                linked = older.with_changes(
                    superseded_by=meta.doc_id, effective_to=_earliest(older.effective_to, meta.effective_date)
                )
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
        with self._pool.write_lock:
            con = self._con()
            con.execute("BEGIN IMMEDIATE")
            try:
                con.executemany("DELETE FROM chunk WHERE id=?", [(c,) for c in chunk_ids])
                _bump_version(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def delete_document(self, doc_id: str) -> list[str]:
        with self._pool.write_lock:
            con = self._con()
            ids = [r[0] for r in con.execute("SELECT id FROM chunk WHERE doc_id=?", (doc_id,))]
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("DELETE FROM chunk WHERE doc_id=?", (doc_id,))
                con.execute("DELETE FROM doc_part WHERE doc_id=?", (doc_id,))
                con.execute("DELETE FROM document WHERE doc_id=?", (doc_id,))
                _bump_version(con)
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
                            json.dumps(
                                old.with_changes(superseded_by=None, effective_to=None).to_dict(), ensure_ascii=False
                            ),
                            pred,
                        ),
                    )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
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
        by_id = {
            r[0]: Chunk.from_dict({**json.loads(r[2]), "meta": metas[r[1]].to_dict()}) for r in rows if r[1] in metas
        }
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

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        con = self._con()
        metas = self._meta(con, {doc_id})
        if doc_id not in metas:
            return []
        rows = con.execute("SELECT data_json FROM chunk WHERE doc_id=? ORDER BY ordinal, part", (doc_id,)).fetchall()
        meta = metas[doc_id].to_dict()
        return [Chunk.from_dict({**json.loads(r[0]), "meta": meta}) for r in rows]

    # --- VectorIndex --------------------------------------------------------------------------------------

    def _require_vectors(self, dimension: int | None = None) -> None:
        if self._dimension is None:
            raise InvalidInput(f"the index at {self.path} was opened without an embedding dimension")
        if dimension is not None and dimension != self._dimension:
            raise InvalidInput(f"vector has {dimension} dimensions; the index holds {self._dimension}")

    def upsert_vectors(self, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None:
        """One vector per chunk, replacing any vector with the same id."""
        if len(chunks) != len(vectors):
            raise InvalidInput(f"{len(chunks)} chunks but {len(vectors)} vectors")
        self._require_vectors()
        rows = []
        for c, v in zip(chunks, vectors, strict=True):
            arr = np.asarray(v, dtype=np.float32)
            self._require_vectors(arr.shape[-1])
            if not np.all(np.isfinite(arr)):
                raise InvalidInput(f"vector of chunk {c.id} has non-finite values")
            rows.append((c, arr))
        with self._pool.write_lock:
            con = self._con()
            con.execute("BEGIN IMMEDIATE")
            try:
                rowids = self._rowids(con, [c.id for c, _ in rows], create=True)
                for c, arr in rows:
                    r = restricts(c.meta)
                    con.execute("DELETE FROM vec WHERE rowid=?", (rowids[c.id],))
                    con.execute(
                        "INSERT INTO vec(rowid, emb, corpus, province, asset, doc_class, level, doc_id, eff, eff_to) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (
                            rowids[c.id],
                            arr.tobytes(),
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
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def delete_vectors(self, chunk_ids: Sequence[str]) -> None:
        self._delete_rows(chunk_ids, ("vec",) if self._dimension is not None else ())

    def _delete_rows(self, chunk_ids: Sequence[str], tables: tuple[str, ...]) -> None:
        if not chunk_ids or not tables:
            return
        with self._pool.write_lock:
            con = self._con()
            rowids = list(self._rowids(con, chunk_ids, create=False).values())
            con.execute("BEGIN IMMEDIATE")
            try:
                for rid in rowids:
                    for table in tables:
                        con.execute(f"DELETE FROM {table} WHERE rowid=?", (rid,))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def search_vectors(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        """Cosine KNN over the chunks that pass `filters` (score = cosine similarity)."""
        arr = np.asarray(vector, dtype=np.float32)
        self._require_vectors(arr.shape[-1])
        where, params = filter_sql(filters)
        con = self._con()
        rows = con.execute(
            f"SELECT v.rowid, v.distance, k.id FROM vec v JOIN chunk_key k ON k.rowid = v.rowid "
            f"WHERE v.emb MATCH ? AND v.k = ?{where.replace(' AND ', ' AND v.')} ORDER BY v.distance",
            (arr.tobytes(), int(k), *params),
        ).fetchall()
        return [Hit(cid, 1.0 - float(dist), rank) for rank, (_, dist, cid) in enumerate(rows, 1)]

    def refresh_metadata(self, chunks: Sequence[Chunk], tables: tuple[str, ...]) -> None:
        """Rewrite the filter columns of existing chunks in `tables` (validity dates changed)."""
        tables = tuple(t for t in tables if t != "vec" or self._dimension is not None)
        with self._pool.write_lock:
            con = self._con()
            rowids = self._rowids(con, [c.id for c in chunks], create=False)
            con.execute("BEGIN IMMEDIATE")
            try:
                for c in chunks:
                    if c.id not in rowids:
                        continue
                    r = restricts(c.meta)
                    sets = ", ".join(f"{k}=?" for k in r)
                    for table in tables:
                        con.execute(f"UPDATE {table} SET {sets} WHERE rowid=?", (*r.values(), rowids[c.id]))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    # --- LexicalIndex -------------------------------------------------------------------------------------

    def upsert_lexical(
        self, chunks: Sequence[Chunk], body_tokens: Sequence[Sequence[str]], title_tokens: Sequence[Sequence[str]]
    ) -> None:
        """Index segmented tokens of each chunk's text and of its title/heading breadcrumb."""
        with self._pool.write_lock:
            con = self._con()
            con.execute("BEGIN IMMEDIATE")
            try:
                rowids = self._rowids(con, [c.id for c in chunks], create=True)
                for c, body, title in zip(chunks, body_tokens, title_tokens, strict=True):
                    rid = rowids[c.id]
                    r = restricts(c.meta)
                    con.execute("DELETE FROM lex_fts WHERE rowid=?", (rid,))
                    con.execute(
                        "INSERT INTO lex_fts(rowid, body, title) VALUES (?,?,?)", (rid, " ".join(body), " ".join(title))
                    )
                    con.execute(
                        "INSERT OR REPLACE INTO lex(rowid, corpus, province, asset, doc_class, level, doc_id, eff, "
                        "eff_to) "
                        "VALUES (?,?,?,?,?,?,?,?,?)",
                        (
                            rid,
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
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def delete_lexical(self, chunk_ids: Sequence[str]) -> None:
        self._delete_rows(chunk_ids, ("lex_fts", "lex"))

    def search_lexical(
        self, tokens: Sequence[str], filters: Filters, k: int, weights: tuple[float, float] = (1.0, 0.5)
    ) -> list[Hit]:
        """BM25 (FTS5) over OR-ed tokens, body and title columns weighted, filters in the same statement."""
        terms = list(dict.fromkeys(t for t in tokens if t.strip()))
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        where, params = filter_sql(filters, "l")
        rows = (
            self._con()
            .execute(
                f"SELECT k.id, bm25(lex_fts, ?, ?) AS s FROM lex_fts f JOIN lex l ON l.rowid = f.rowid "
                f"JOIN chunk_key k ON k.rowid = f.rowid WHERE lex_fts MATCH ?{where} ORDER BY s LIMIT ?",
                (weights[0], weights[1], match, *params, int(k)),
            )
            .fetchall()
        )
        # FTS5's bm25() is negative (lower is better); report the usual positive BM25 score.
        return [Hit(cid, -float(score), rank) for rank, (cid, score) in enumerate(rows, 1)]


def _bump_version(con: Any) -> None:
    con.execute(
        "INSERT INTO meta(key, value) VALUES ('index_version', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


def _earliest(a: str | None, b: str | None) -> str | None:
    dates = [d for d in (a, b) if d]
    return min(dates) if dates else None


class SqliteVectorIndex:
    """VectorIndex view of a SqliteIndex (sqlite-vec)."""

    def __init__(self, db: SqliteIndex) -> None:
        self.db = db

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None:
        self.db.upsert_vectors(chunks, vectors)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.db.delete_vectors(chunk_ids)

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        return self.db.search_vectors(vector, filters, k)

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        self.db.refresh_metadata(chunks, ("vec",))


class SqliteLexicalIndex:
    """LexicalIndex view of a SqliteIndex (FTS5 BM25 on segmented tokens)."""

    def __init__(self, db: SqliteIndex, weights: tuple[float, float] = (1.0, 0.5)) -> None:
        self.db = db
        self.weights = weights

    def upsert(
        self, chunks: Sequence[Chunk], body_tokens: Sequence[Sequence[str]], title_tokens: Sequence[Sequence[str]]
    ) -> None:
        self.db.upsert_lexical(chunks, body_tokens, title_tokens)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.db.delete_lexical(chunk_ids)

    def search(self, tokens: Sequence[str], filters: Filters, k: int) -> list[Hit]:
        return self.db.search_lexical(tokens, filters, k, self.weights)

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        self.db.refresh_metadata(chunks, ("lex",))
