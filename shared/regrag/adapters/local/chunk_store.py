"""The embedded index: documents, chunks, vectors, term counts and restricts in one SQLite file.

SQLite is the durable store; searches run on an in-memory snapshot (search_store.py, snapshot.py) rebuilt when
the index version changes. Writers bump the version inside their transaction, so any process that reads the
index sees a consistent snapshot after the next search. The file itself (schema, embedding check, version,
transactions) is index_file.py.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from regrag.adapters.local.search_store import SqliteSearchStore
from regrag.domain import supersession as versions
from regrag.domain.errors import NotFound
from regrag.domain.models import Chunk, DocumentMeta
from regrag.ports import PutResult


class SqliteIndex(SqliteSearchStore):
    """The ChunkStore, plus the storage behind SqliteVectorIndex and SqliteLexicalIndex, in one SQLite file."""

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
                data = c.to_dict(with_meta=False)
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
