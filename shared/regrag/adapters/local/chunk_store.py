"""The embedded index: documents, chunks, vectors, term counts and restricts in one SQLite file.

SQLite is the durable store; searches run on an in-memory snapshot (search_store.py, snapshot.py) rebuilt when
the index version changes. Writers bump the version inside their transaction, so any process that reads the
index sees a consistent snapshot after the next search. The file itself (schema, embedding check, version,
transactions, row checksums) is index_file.py; what the integrity check looks at is index_integrity.py.

A row whose checksum does not match is never used: reads skip it (and say so in the log and in `damage_seen`,
which GET /healthz reports), `regrag doctor` names its document, `regrag repair` writes it again.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from regrag.adapters.local import checksums, index_integrity
from regrag.adapters.local.index_file import UNWRITTEN_SQL, chunk_sum, document_sum
from regrag.adapters.local.search_store import SqliteSearchStore
from regrag.domain import supersession as versions
from regrag.domain.errors import NotFound
from regrag.domain.integrity import Finding
from regrag.domain.messages import ChunksEmbedded, covers_whole
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
            meta_json = json.dumps(meta.to_dict(), ensure_ascii=False)
            # `complete` stays until mark_complete: the same generation written again is still whole meanwhile
            # (its transaction is not visible before it commits), a new one is not
            con.execute(
                "INSERT INTO document(doc_id, corpus, generation, meta_json, text, updated_at, complete, sum) "
                "VALUES (?,?,?,?,?,?,NULL,?) "
                "ON CONFLICT(doc_id) DO UPDATE SET corpus=excluded.corpus, generation=excluded.generation, "
                "meta_json=excluded.meta_json, text=excluded.text, updated_at=excluded.updated_at, "
                "complete=CASE WHEN document.complete = excluded.generation THEN document.complete END, "
                "sum=excluded.sum",
                (meta.doc_id, meta.corpus, meta.generation, meta_json, text, now, document_sum(meta_json, text)),
            )
            con.execute("DELETE FROM doc_key WHERE doc_id=?", (meta.doc_id,))
            con.executemany(
                "INSERT OR IGNORE INTO doc_key(doc_id, corpus, kind, key) VALUES (?,?,?,?)",
                [(meta.doc_id, scope, kind, key) for scope, kind, key in meta.index_keys()],
            )
            rowids = self._rowids(con, [c.id for c in chunks], create=True)
            for c in chunks:
                data = json.dumps(c.to_dict(with_meta=False), ensure_ascii=False)
                con.execute(
                    "INSERT INTO chunk(rowid, id, doc_id, generation, ordinal, part, data_json, sum) "
                    "VALUES (?,?,?,?,?,?,?,?) "
                    "ON CONFLICT(id) DO UPDATE SET doc_id=excluded.doc_id, generation=excluded.generation, "
                    "ordinal=excluded.ordinal, part=excluded.part, data_json=excluded.data_json, sum=excluded.sum",
                    (
                        rowids[c.id],
                        c.id,
                        c.doc_id,
                        meta.generation,
                        c.ordinal,
                        c.part,
                        data,
                        chunk_sum(c.id, c.doc_id, meta.generation, data),
                    ),
                )
            con.execute(
                "INSERT OR REPLACE INTO doc_part(doc_id, generation, part, parts, chunk_ids) VALUES (?,?,?,?,?)",
                (meta.doc_id, meta.generation, part, parts, json.dumps([c.id for c in chunks])),
            )
        return PutResult(meta, relinked)

    def set_supersedes(self, doc_id: str, older_id: str | None) -> PutResult:
        with self._writing() as con:
            found = self._stored_meta(con, doc_id)
            if found is None:
                raise NotFound(f"no document {doc_id!r}")
            meta = found
            relinked: tuple[str, ...] = ()
            if older_id is None and meta.supersedes:
                relinked = self._unlink_older(con, meta.supersedes, doc_id)
            meta = meta.with_changes(supersedes=older_id)
            if older_id is not None:
                meta, relinked = self._link_versions(con, meta)
            self._update_meta(con, meta)
        return PutResult(meta, relinked)

    def _stored_meta(self, con: Any, doc_id: str) -> DocumentMeta | None:
        """A document's metadata as stored (None: not stored, or its row fails its checksum)."""
        return self._meta(con, {doc_id}).get(doc_id)

    @staticmethod
    def _update_meta(con: Any, meta: DocumentMeta) -> None:
        """Rewrite a stored document's metadata (its version links changed), with the row's new checksum."""
        row = con.execute("SELECT text FROM document WHERE doc_id=?", (meta.doc_id,)).fetchone()
        if row is None:
            return
        meta_json = json.dumps(meta.to_dict(), ensure_ascii=False)
        con.execute(
            "UPDATE document SET meta_json=?, sum=? WHERE doc_id=?",
            (meta_json, document_sum(meta_json, row[0]), meta.doc_id),
        )

    def _unlink_older(self, con: Any, older_id: str, newer_id: str) -> tuple[str, ...]:
        """The version a withdrawn successor superseded is in force again."""
        older = self._stored_meta(con, older_id)
        if older is None or older.superseded_by != newer_id:
            return ()
        self._update_meta(con, versions.freed(older))
        return (older_id,)

    def _link_versions(self, con: Any, meta: DocumentMeta) -> tuple[DocumentMeta, tuple[str, ...]]:
        """Keep supersedes/superseded_by and effective_to consistent whichever version arrives first."""
        relinked: list[str] = []
        successor = con.execute(
            "SELECT doc_id FROM document WHERE json_extract(meta_json, '$.supersedes') = ? AND doc_id != ?",
            (meta.doc_id, meta.doc_id),
        ).fetchone()
        newer = self._stored_meta(con, successor[0]) if successor is not None else None
        if newer is not None:
            meta = versions.superseded(meta, newer)
        if meta.supersedes:
            older = self._stored_meta(con, meta.supersedes)
            if older is not None:
                linked = versions.superseded(older, meta)
                if linked != older:
                    self._update_meta(con, linked)
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
        if parts and covers_whole((p, n) for p, n, _ in parts):
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
                old = self._stored_meta(con, pred)
                if old is not None:
                    self._update_meta(con, versions.freed(old))
            con.execute("DELETE FROM staged_part WHERE doc_id=?", (doc_id,))
        return ids

    def _document_row(self, doc_id: str, meta_json: str, text: str, sum_: int | None) -> DocumentMeta | None:
        if sum_ is not None and document_sum(meta_json, text) != sum_:
            self._damaged("document", doc_id, doc_id)
            return None
        return DocumentMeta.from_dict(json.loads(meta_json))

    def _chunk_row(self, chunk_id: str, doc_id: str, generation: int, data: str, sum_: int | None) -> Any:
        if sum_ is not None and chunk_sum(chunk_id, doc_id, generation, data) != sum_:
            self._damaged("chunk", chunk_id, doc_id)
            return None
        return json.loads(data)

    def _meta(self, con: Any, doc_ids: set[str]) -> dict[str, DocumentMeta]:
        if not doc_ids:
            return {}
        rows = con.execute(
            f"SELECT doc_id, meta_json, text, sum FROM document WHERE doc_id IN ({','.join('?' * len(doc_ids))})",
            tuple(doc_ids),
        ).fetchall()
        found = {d: self._document_row(d, m, t, s) for d, m, t, s in rows}
        return {d: m for d, m in found.items() if m is not None}

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        if not chunk_ids:
            return []
        con = self._con()
        rows = con.execute(
            f"SELECT id, doc_id, generation, data_json, sum FROM chunk WHERE id IN ({','.join('?' * len(chunk_ids))})",
            tuple(chunk_ids),
        ).fetchall()
        metas = self._meta(con, {r[1] for r in rows})
        by_id = {}
        for cid, doc_id, generation, data, sum_ in rows:
            fields = self._chunk_row(cid, doc_id, generation, data, sum_) if doc_id in metas else None
            if fields is not None:
                by_id[cid] = Chunk.from_dict({**fields, "meta": metas[doc_id]})
        return [by_id[c] for c in chunk_ids if c in by_id]

    def get_document(self, doc_id: str) -> tuple[DocumentMeta, str] | None:
        row = self._con().execute("SELECT meta_json, text, sum FROM document WHERE doc_id=?", (doc_id,)).fetchone()
        if row is None:
            return None
        meta = self._document_row(doc_id, *row)
        return None if meta is None else (meta, row[1])

    def list_documents(self, corpus: str | None = None) -> list[DocumentMeta]:
        con = self._con()
        if corpus is None:
            rows = con.execute("SELECT doc_id, meta_json, text, sum FROM document ORDER BY doc_id").fetchall()
        else:
            rows = con.execute(
                "SELECT doc_id, meta_json, text, sum FROM document WHERE corpus=? ORDER BY doc_id", (corpus,)
            ).fetchall()
        metas = [self._document_row(*r) for r in rows]
        return [m for m in metas if m is not None]

    def corpus_names(self) -> list[str]:
        return [r[0] for r in self._con().execute("SELECT DISTINCT corpus FROM document ORDER BY corpus")]

    def find_documents(self, corpus: str, kind: str, key: str) -> list[DocumentMeta]:
        rows = (
            self._con()
            .execute(
                "SELECT d.doc_id, d.meta_json, d.text, d.sum FROM doc_key k JOIN document d ON d.doc_id = k.doc_id "
                "WHERE k.corpus=? AND k.kind=? AND k.key=? ORDER BY d.doc_id",
                (corpus, kind, key),
            )
            .fetchall()
        )
        metas = [self._document_row(*r) for r in rows]
        return [m for m in metas if m is not None]

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        con = self._con()
        metas = self._meta(con, {doc_id})
        if doc_id not in metas:
            return []
        rows = con.execute(
            "SELECT id, generation, data_json, sum FROM chunk WHERE doc_id=? ORDER BY ordinal, part", (doc_id,)
        ).fetchall()
        meta = metas[doc_id]
        chunks = []
        for cid, generation, data, sum_ in rows:
            fields = self._chunk_row(cid, doc_id, generation, data, sum_)
            if fields is not None:
                chunks.append(Chunk.from_dict({**fields, "meta": meta}))
        return chunks

    # --- completeness, parts waiting for the rest of their document, integrity -------------------------------

    def mark_complete(self, doc_id: str, generation: int) -> None:
        with self._writing() as con:
            con.execute(
                "UPDATE document SET complete=? WHERE doc_id=? AND generation=?", (generation, doc_id, generation)
            )

    def incomplete_documents(self, doc_ids: Sequence[str] | None = None) -> list[str]:
        con = self._con()
        if doc_ids is None:
            found = {
                r[0]
                for r in con.execute(
                    f"SELECT doc_id FROM document WHERE complete IS NOT generation UNION {UNWRITTEN_SQL}"
                )
            }
            found |= {f.subject for f in index_integrity.damaged_rows(con)}
            return sorted(found)
        found = set()
        for doc_id in dict.fromkeys(doc_ids):
            row = con.execute("SELECT generation, complete FROM document WHERE doc_id=?", (doc_id,)).fetchone()
            if row is None:
                continue
            unwritten = row[1] != row[0] or index_integrity.document_unwritten(con, doc_id)
            if unwritten or index_integrity.damaged_rows(con, doc_id):
                found.add(doc_id)
        return sorted(found)

    def stage(self, message: ChunksEmbedded) -> list[ChunksEmbedded]:
        body = json.dumps(message.to_json(), ensure_ascii=False)
        with self._writing() as con:
            con.execute(
                "INSERT OR REPLACE INTO staged_part(doc_id, generation, part, parts, message, sum) "
                "VALUES (?,?,?,?,?,?)",
                (message.meta.doc_id, message.meta.generation, message.part, message.parts, body, checksums.of(body)),
            )
            rows = con.execute(
                "SELECT part, message, sum FROM staged_part WHERE doc_id=? AND generation=? ORDER BY part, parts",
                (message.meta.doc_id, message.meta.generation),
            ).fetchall()
        parts = []
        for part, text, sum_ in rows:
            if checksums.of(text) != sum_:
                self._damaged("staged_part", f"{message.meta.doc_id}#{part}", message.meta.doc_id)
                continue
            parts.append(ChunksEmbedded.from_json(json.loads(text)))
        return parts

    def clear(self, doc_id: str, generation: int) -> None:
        with self._writing() as con:
            con.execute("DELETE FROM staged_part WHERE doc_id=? AND generation<=?", (doc_id, generation))

    def check_integrity(self, deep: bool = True) -> list[Finding]:
        return index_integrity.check(self, deep)

    def fix(self, findings: Sequence[Finding]) -> list[Finding]:
        return index_integrity.fix(self, findings)
