"""The search legs' tables in the index file: dense vectors, generated questions' vectors, BM25 term counts, and
the filter columns they share; searches run on an in-memory `SearchSnapshot` (snapshot.py) rebuilt when the
index version changes, with every filter applied before top-k."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from regrag import logs
from regrag.adapters.local import coarse, snapshot_files
from regrag.adapters.local.index_file import SqliteFile, terms_sum, vector_sum
from regrag.adapters.local.snapshot import SearchSnapshot
from regrag.adapters.local.snapshot_build import build_snapshot
from regrag.domain.bm25 import Bm25Params
from regrag.domain.errors import InvalidInput
from regrag.domain.models import OPEN_END, Chunk, DocumentMeta, Filters, Hit, date_int

log = logs.get("index")


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


class SqliteSearchStore(SqliteFile):
    """The storage behind SqliteVectorIndex, SqliteQuestionIndex and SqliteLexicalIndex."""

    def __init__(
        self,
        path: Path | str,
        dimension: int | None = None,
        model_id: str | None = None,
        bm25: Bm25Params | None = None,
        *,
        search_questions: bool = True,
        snapshot_files_min_chunks: int | None = None,
        coarse_min_rows: int = coarse.MIN_ROWS,
    ) -> None:
        """`search_questions`: load the questions-answered index into the search snapshot. Off, its vectors
        are still written and deleted but never read, so an index that holds them costs no memory or load time
        while the aid is switched off. `snapshot_files_min_chunks`: keep a snapshot of at least this many chunks
        on disk (snapshot_files.py); None: never. `coarse_min_rows`: corpus runs of at least this many chunks
        are searched through an 8-bit shortlist re-scored exactly (coarse.py)."""
        super().__init__(path, dimension, model_id)
        self.bm25 = bm25 or Bm25Params()
        self.search_questions_enabled = search_questions
        self._snapshot: SearchSnapshot | None = None
        self._snapshot_lock = threading.Lock()
        self._vocab: dict[str, int] = {}  # term ids never change once assigned, so a process may cache them
        self._files_min = snapshot_files_min_chunks
        self._files = snapshot_files.folder_for(self.path)
        self._coarse_min_rows = coarse_min_rows
        # rows that failed their checksum when read, as (kind, key): never used, reported by GET /healthz
        self.damage_seen: set[tuple[str, str]] = set()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Any]:
        try:
            with super()._writing() as con:
                yield con
        except BaseException:
            self._vocab.clear()  # ids assigned inside a rolled-back transaction do not exist
            raise

    def _require_vectors(self, dimension: int | None = None) -> None:
        if self._dimension is None:
            raise InvalidInput(f"the index at {self.path} was opened without an embedding dimension")
        if dimension is not None and dimension != self._dimension:
            raise InvalidInput(f"vector has {dimension} dimensions; the index holds {self._dimension}")

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
                con.execute(
                    "INSERT OR REPLACE INTO vec_store(rowid, emb, sum) VALUES (?,?,?)",
                    (rowids[c.id], blob, vector_sum(blob)),
                )

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

        with self._writing() as con:
            rowids = self._rowids(con, [c.id for c in chunks], create=True)
            for c, body, title in zip(chunks, body_tokens, title_tokens, strict=True):
                counts: dict[str, float] = dict(Counter(body))
                for token in title:
                    counts[token] = counts.get(token, 0.0) + title_weight
                ids = self._term_ids(con, set(counts))
                terms = sorted(counts)
                length = float(len(body) + title_weight * len(title))
                term_ids = np.asarray([ids[t] for t in terms], dtype="<i4").tobytes()
                values = np.asarray([counts[t] for t in terms], dtype="<f4").tobytes()
                con.execute(
                    "INSERT OR REPLACE INTO lex(rowid, length, term_ids, counts, sum) VALUES (?,?,?,?,?)",
                    (rowids[c.id], length, term_ids, values, terms_sum(length, term_ids, values)),
                )
                self._put_restricts(con, rowids[c.id], c.meta)

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
            if self._files_min is not None:
                loaded = snapshot_files.load(self._files, version, self._snapshot_settings())
                if loaded is not None:
                    self._snapshot = loaded
                    return loaded
            built = self._snapshot = self._build_snapshot()
        # saved outside the lock: other searches use the new snapshot while its files are written (2.5 GB at a
        # million chunks); only the search that built it waits for the save
        large = self._files_min is not None and len(built.chunk_ids) >= self._files_min
        if large and snapshot_files.save(built, self._files, self._snapshot_settings()):
            self._use_saved(built)
        return built

    def _use_saved(self, built: SearchSnapshot) -> None:
        """Search the saved files instead of the arrays just built (same version, same values): their pages
        live in the page cache, which the kernel can evict and other processes serving this index share,
        while the built arrays were this process's own memory (2.8 GB at a million chunks), freed once the
        searches holding them end."""
        loaded = snapshot_files.load(self._files, built.version, self._snapshot_settings())
        if loaded is None:
            return
        with self._snapshot_lock:
            if self._snapshot is built:
                self._snapshot = loaded

    def prepare_search(self) -> None:
        """Build the search snapshot of the current version and save it, when the index is large enough to
        keep it on disk: a server started next maps it instead of building it (about a minute at a million
        chunks). Cheap when the saved snapshot of this version exists already; nothing below the threshold,
        where a build is fast and the process preparing would throw it away."""
        settings = self._snapshot_settings()
        if self._files_min is None or snapshot_files.saved(self._files, self.index_version(), settings):
            return
        (chunks,) = self._con().execute("SELECT count(*) FROM restrict").fetchone()
        if chunks >= self._files_min:
            self.snapshot()

    def _snapshot_settings(self) -> dict[str, Any]:
        """What the snapshot's arrays depend on besides the index's tables."""
        return {
            "dimension": self._dimension,
            "bm25": asdict(self.bm25),
            "questions": self.search_questions_enabled,
            "coarse_min_rows": self._coarse_min_rows,
        }

    def _build_snapshot(self) -> SearchSnapshot:
        con = self._con()
        con.execute("BEGIN")  # one read transaction: every table at the same version
        try:
            version = self.index_version()
            vocab = dict(con.execute("SELECT term, id FROM lex_vocab").fetchall())
            questions = (
                con.execute("SELECT chunk_rowid, emb FROM question_vec ORDER BY chunk_rowid, n").fetchall()
                if self.search_questions_enabled
                else []
            )
            # cursors: build_snapshot reads each table one row at a time
            return build_snapshot(
                version,
                con.execute(
                    "SELECT r.rowid, k.id, r.corpus, r.province, r.asset, r.doc_class, r.level, r.doc_id, "
                    "r.eff, r.eff_to FROM restrict r JOIN chunk_key k ON k.rowid = r.rowid ORDER BY r.rowid"
                ),
                _Verified(con.execute("SELECT rowid, emb, sum FROM vec_store"), _vector_intact, self._damaged_row),
                self._dimension,
                # in the snapshot's row order (the restrict_corpus index), which spares the build a reordering
                # of every posting (10 s at a million chunks)
                _Verified(
                    con.execute(
                        "SELECT l.rowid, l.length, l.term_ids, l.counts, l.sum FROM restrict r "
                        "JOIN lex l ON l.rowid = r.rowid ORDER BY r.corpus, r.rowid"
                    ),
                    _terms_intact,
                    self._damaged_row,
                ),
                vocab,
                self.bm25,
                questions,
                self._coarse_min_rows,
            )
        finally:
            con.execute("COMMIT")

    def _damaged_row(self, row: tuple[Any, ...]) -> None:
        self._damaged("vector" if len(row) == 3 else "terms", str(row[0]), "")

    def _damaged(self, kind: str, key: str, doc_id: str) -> None:
        """A row that failed its checksum: skipped, logged once, kept for GET /healthz."""
        if (kind, key) not in self.damage_seen:
            self.damage_seen.add((kind, key))
            logs.event(
                log, logging.ERROR, "damaged row skipped", kind=kind, key=key, doc_id=doc_id, index=str(self.path)
            )

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


def _vector_intact(row: tuple[Any, ...]) -> bool:
    """(rowid, emb, sum): the vector matches its checksum (None: a row from before checksums, sealed on upgrade)."""
    return row[2] is None or vector_sum(row[1]) == row[2]


def _terms_intact(row: tuple[Any, ...]) -> bool:
    """(rowid, length, term ids, counts, sum)."""
    return row[4] is None or terms_sum(row[1], row[2], row[3]) == row[4]


class _Verified:
    """A cursor whose rows pass `intact` (their checksum), without the checksum column: what the snapshot build
    reads, so that a damaged vector or term row is left out of the search (its chunk is unsearchable, the
    doctor names it) instead of changing answers. Fetched in batches like the cursor it wraps; `damaged` is
    told of each row left out."""

    def __init__(self, cursor: Any, intact: Callable[[tuple[Any, ...]], bool], damaged: Any) -> None:
        self._cursor = cursor
        self._intact = intact
        self._damaged = damaged

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        intact = self._intact
        while batch := self._cursor.fetchmany(size):
            kept = [row[:-1] for row in batch if intact(row)]
            if len(kept) < len(batch):
                for row in batch:
                    if not intact(row):
                        self._damaged(row)
            if kept:
                return kept
        return []

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while batch := self.fetchmany(4096):
            yield from batch
