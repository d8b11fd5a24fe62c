"""In-memory search over the SQLite index: exact dense KNN and BM25, both filtered before top-k.

SQLite keeps the truth (vectors, term counts, restricts); a `SearchSnapshot` is an immutable set of numpy
arrays built from it at one index version, so each query is a few vectorised operations:

- rows are grouped by corpus, each corpus one contiguous run, and a search with a corpus filter (every
  search of the retriever's fan-out has one) works on its corpora's runs only: its cost grows with the corpora
  it searches, not with the whole index (a fan-out over every corpus costs about one unfiltered search);
- filters become one boolean mask over those rows (allow-lists per field, effective-date range, in force on
  `as_of`), applied before taking the top k, so k matching chunks come back, never k chunks filtered afterwards;
- dense: cosine similarity is a matrix-vector product of L2-normalised vectors (26.5 k × 384 in ~2 ms);
- questions (the optional questions-answered index): the same product over the question vectors, reduced to
  each chunk's best question; a question has no restricts of its own, it is filtered through its chunk's row;
- lexical: Okapi BM25 with the saturated term weight precomputed per posting,
  w(t, d) = tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)), idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5))
  (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond", with Lucene's
  non-negative idf). Defaults k1 = 0.9, b = 0.4 are Anserini's; FTS5's bm25() has k1/b fixed at 1.2/0.75 and
  scored this corpus lower, and it took 130 ms per query once single characters were indexed.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from regrag.domain.lexical import Bm25Params
from regrag.domain.models import Filters, Hit, date_int
from regrag.lru import LruCache

FILTER_FIELDS = {
    "province": "province",
    "asset": "asset",
    "doc_class": "doc_class",
    "regulation_level": "level",
    "corpus": "corpus",
    "doc_id": "doc_id",
}


@dataclass(frozen=True)
class SearchSnapshot:
    version: int
    chunk_ids: tuple[str, ...]
    codes: dict[str, np.ndarray]  # column → int32 codes per row
    values: dict[str, dict[str, int]]  # column → value → code
    eff: np.ndarray
    eff_to: np.ndarray
    has_vector: np.ndarray
    vectors: np.ndarray  # (n, dim) float32, zero rows where has_vector is False
    has_terms: np.ndarray
    vocab: dict[str, int]
    indptr: np.ndarray  # CSR over term ids: postings of term t are indptr[t]:indptr[t+1]
    posting_rows: np.ndarray  # ascending within each term's postings
    posting_weights: np.ndarray  # saturated tf weight per posting
    idf: np.ndarray
    # questions-answered index: (m, dim) question vectors sorted by chunk row; the chunk row of each run of
    # questions and where the run starts (for np.maximum.reduceat)
    question_vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 1), dtype=np.float32))
    question_chunks: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    question_starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    corpus_runs: dict[str, tuple[int, int]] = field(default_factory=dict)  # corpus → its rows [start, stop)
    # scores of one query on one run of rows (a repeated search of the same query is served from here)
    _scores: LruCache[Any] = field(default_factory=lambda: LruCache(64), repr=False, compare=False)

    def mask(self, filters: Filters) -> np.ndarray:
        """Which of all rows pass `filters`."""
        return self._mask_in(filters, 0, len(self.chunk_ids), by_corpus=True)

    def _runs(self, filters: Filters) -> list[tuple[int, int]]:
        """The runs of rows a search with `filters` has to look at: its corpora's, or every row."""
        if not filters.corpus:
            return [(0, len(self.chunk_ids))]
        return sorted(self.corpus_runs[c] for c in set(filters.corpus) if c in self.corpus_runs)

    def _mask_in(self, filters: Filters, start: int, stop: int, *, by_corpus: bool = False) -> np.ndarray:
        """Which rows of [start, stop) pass `filters`; the corpus filter only when `by_corpus` (a run of one
        corpus has passed it already)."""
        keep = np.ones(stop - start, dtype=bool)
        for field_name, column in FILTER_FIELDS.items():
            allowed = getattr(filters, field_name)
            if allowed and (by_corpus or column != "corpus"):
                codes = [self.values[column][v] for v in allowed if v in self.values[column]]
                keep &= np.isin(self.codes[column][start:stop], np.asarray(codes, dtype=np.int32))
        eff = self.eff[start:stop]
        if filters.date_from:
            keep &= eff >= date_int(filters.date_from)
        if filters.date_to:
            keep &= eff <= date_int(filters.date_to)
        if filters.as_of and not filters.include_superseded:
            day = date_int(filters.as_of)
            keep &= (eff <= day) & (self.eff_to[start:stop] > day)
        return keep

    def _top(self, scores: np.ndarray, eligible: np.ndarray, k: int, offset: int = 0) -> list[tuple[float, str, int]]:
        """The best k eligible rows of one run as (score, chunk id, row); `scores` and `eligible` are the run's."""
        rows = np.flatnonzero(eligible)
        if rows.size == 0 or k <= 0:
            return []
        picked = rows
        if rows.size > k:
            # every row tied with the k-th best stays in, so that the tie-break by chunk id (in _hits) decides,
            # not the order argpartition happens to leave the ties in
            kth = scores[rows[np.argpartition(-scores[rows], k - 1)[k - 1]]]
            picked = rows[scores[rows] >= kth]
        return [(float(scores[r]), self.chunk_ids[offset + r], offset + r) for r in picked.tolist()]

    @staticmethod
    def _hits(found: list[tuple[float, str, int]], k: int) -> list[Hit]:
        # ties broken by chunk id so results do not depend on insertion order
        order = sorted(found, key=lambda f: (-f[0], f[1]))[:k]
        return [Hit(chunk_id, score, rank) for rank, (score, chunk_id, _) in enumerate(order, 1)]

    def dense(self, query: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        if not self.has_vector.any():
            return []
        q = np.asarray(query, dtype=np.float32)
        found = []
        for start, stop in self._runs(filters):
            scores = self._scores.get_or_compute(
                ("dense", start, stop, q.tobytes()), partial(np.matmul, self.vectors[start:stop], q)
            )
            eligible = self._mask_in(filters, start, stop) & self.has_vector[start:stop]
            found.extend(self._top(scores, eligible, k, start))
        return self._hits(found, k)

    def questions(self, query: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        """Chunks ranked by their best question's cosine similarity; the chunk's mask filters before top-k."""
        if not self.question_chunks.size:
            return []
        q = np.asarray(query, dtype=np.float32)
        best, has_questions = self._scores.get_or_compute(("questions", q.tobytes()), lambda: self._best_questions(q))
        return self._hits(self._top(best, self.mask(filters) & has_questions, k), k)

    def _best_questions(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        best = np.zeros(len(self.chunk_ids), dtype=np.float32)
        has_questions = np.zeros(len(self.chunk_ids), dtype=bool)
        best[self.question_chunks] = np.maximum.reduceat(self.question_vectors @ query, self.question_starts)
        has_questions[self.question_chunks] = True
        return best, has_questions

    def lexical(self, tokens: Sequence[str], filters: Filters, k: int) -> list[Hit]:
        found = []
        for start, stop in self._runs(filters):
            scores, touched = self._scores.get_or_compute(
                ("lexical", start, stop, tuple(tokens)), partial(self._bm25, tokens, start, stop)
            )
            eligible = self._mask_in(filters, start, stop) & self.has_terms[start:stop] & touched
            found.extend(self._top(scores, eligible, k, start))
        return self._hits(found, k)

    def _bm25(self, tokens: Sequence[str], start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """BM25 scores of the rows [start, stop) (and which of them share a token with the query)."""
        scores = np.zeros(stop - start, dtype=np.float32)
        touched = np.zeros(stop - start, dtype=bool)
        whole = start == 0 and stop == len(self.chunk_ids)
        counts: dict[int, int] = {}
        for token in tokens:
            term = self.vocab.get(token)
            if term is not None and term < len(self.idf):
                counts[term] = counts.get(term, 0) + 1
        for term, count in counts.items():
            lo, hi = int(self.indptr[term]), int(self.indptr[term + 1])
            if not whole:  # the term's postings in the run: rows ascend within a term
                first, last = np.searchsorted(self.posting_rows[lo:hi], [start, stop]).tolist()
                lo, hi = lo + first, lo + last
            if lo == hi:
                continue
            rows = self.posting_rows[lo:hi] - start
            scores[rows] += np.float32(count * self.idf[term]) * self.posting_weights[lo:hi]
            touched[rows] = True
        return scores, touched


def build_snapshot(
    version: int,
    rows: Iterable[tuple[Any, ...]],
    vectors: Iterable[tuple[int, bytes]],
    dimension: int | None,
    terms: Iterable[tuple[int, float, bytes, bytes]],
    vocab: dict[str, int],
    params: Bm25Params,
    questions: Sequence[tuple[int, bytes]] = (),
) -> SearchSnapshot:
    """Arrays from table rows, read one row at a time (database cursors): no table is ever held as Python
    objects, which at a million chunks took gigabytes that the allocator then kept.

    Args:
        rows: (rowid, chunk id, corpus, province, asset, doc_class, level, doc_id, eff, eff_to) per chunk.
        vectors: (rowid, float32 bytes). terms: (rowid, length, int32 term ids bytes, float32 counts bytes).
        questions: (chunk rowid, float32 bytes) per generated question; several per chunk.
    """
    table = _Table.read(rows)
    n = len(table.chunk_ids)
    dim = dimension or 1
    matrix, has_vector = _dense_arrays(vectors, table.position, n, dim)
    has_terms, indptr, posting_rows, weights, idf = _postings(terms, table.position, n, vocab, params)
    question_vectors, question_chunks, question_starts = _question_arrays(questions, table.position, dim)
    return SearchSnapshot(
        version=version,
        chunk_ids=table.chunk_ids,
        codes=table.codes,
        values=table.values,
        eff=table.eff,
        eff_to=table.eff_to,
        has_vector=has_vector,
        vectors=matrix,
        has_terms=has_terms,
        vocab=dict(vocab),
        indptr=indptr,
        posting_rows=posting_rows,
        posting_weights=weights,
        idf=idf,
        question_vectors=question_vectors,
        question_chunks=question_chunks,
        question_starts=question_starts,
        corpus_runs=table.corpus_runs,
    )


_COLUMNS = ("corpus", "province", "asset", "doc_class", "level", "doc_id")


@dataclass(frozen=True)
class _Table:
    """The chunks' filter columns, in snapshot order: grouped by corpus (names sorted), rowid order inside."""

    chunk_ids: tuple[str, ...]
    codes: dict[str, np.ndarray]
    values: dict[str, dict[str, int]]
    eff: np.ndarray
    eff_to: np.ndarray
    position: np.ndarray  # rowid → row in the snapshot, -1 for a rowid without one
    corpus_runs: dict[str, tuple[int, int]]

    @classmethod
    def read(cls, rows: Iterable[tuple[Any, ...]]) -> _Table:
        rowids, eff, eff_to = array("q"), array("q"), array("q")
        ids: list[str] = []
        values: dict[str, dict[str, int]] = {c: {} for c in _COLUMNS}
        codes = {c: array("i") for c in _COLUMNS}
        for row in rows:
            rowids.append(row[0])
            ids.append(str(row[1]))
            for j, column in enumerate(_COLUMNS):
                codes[column].append(values[column].setdefault(str(row[2 + j]), len(values[column])))
            eff.append(row[8])
            eff_to.append(row[9])
        rowid = np.frombuffer(rowids, dtype=np.int64) if rowids else np.zeros(0, dtype=np.int64)
        corpus_rank = np.zeros(len(values["corpus"]), dtype=np.int64)
        for rank, name in enumerate(sorted(values["corpus"])):
            corpus_rank[values["corpus"][name]] = rank
        corpus = np.asarray(codes["corpus"], dtype=np.int32)
        order = np.lexsort((rowid, corpus_rank[corpus])) if rowid.size else np.zeros(0, dtype=np.int64)
        position = np.full(int(rowid.max()) + 1 if rowid.size else 0, -1, dtype=np.int64)
        position[rowid[order]] = np.arange(order.size)
        sorted_corpus = corpus[order]
        changes = np.flatnonzero(sorted_corpus[1:] != sorted_corpus[:-1]) + 1
        bounds = [0, *changes.tolist(), order.size] if order.size else []
        names = {code: name for name, code in values["corpus"].items()}
        runs = {names[int(sorted_corpus[a])]: (a, b) for a, b in itertools.pairwise(bounds)}
        return cls(
            chunk_ids=tuple(ids[i] for i in order.tolist()),
            codes={c: np.asarray(codes[c], dtype=np.int32)[order] for c in _COLUMNS},
            values=values,
            eff=np.asarray(eff, dtype=np.int64)[order],
            eff_to=np.asarray(eff_to, dtype=np.int64)[order],
            position=position,
            corpus_runs=runs,
        )


def _row_of(position: np.ndarray, rowid: int) -> int:
    return int(position[rowid]) if 0 <= rowid < position.size else -1


def _dense_arrays(
    vectors: Iterable[tuple[int, bytes]], position: np.ndarray, n: int, dim: int
) -> tuple[np.ndarray, np.ndarray]:
    """(n, dim) float32 vectors in row order, zero rows where a chunk has none; and which rows have one."""
    matrix = np.zeros((n, dim), dtype=np.float32)
    has_vector = np.zeros(n, dtype=bool)
    for rowid, blob in vectors:
        i = _row_of(position, rowid)
        if i >= 0:
            matrix[i] = np.frombuffer(blob, dtype="<f4")
            has_vector[i] = True
    return matrix, has_vector


def _postings(
    terms: Iterable[tuple[int, float, bytes, bytes]],
    position: np.ndarray,
    n: int,
    vocab: dict[str, int],
    params: Bm25Params,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """BM25 postings as CSR over term ids: (has_terms, indptr, posting rows, saturated tf weights, idf).

    Each term's postings are in ascending rows (searches of one corpus run look theirs up by bisection)."""
    has_terms = np.zeros(n, dtype=bool)
    lengths = np.zeros(n, dtype=np.float32)
    term_bytes, count_bytes = bytearray(), bytearray()
    rows, sizes = array("q"), array("q")
    for rowid, length, ids_blob, counts_blob in terms:
        i = _row_of(position, rowid)
        if i < 0:
            continue
        term_bytes += ids_blob
        count_bytes += counts_blob
        rows.append(i)
        sizes.append(len(ids_blob) // 4)
        lengths[i] = length
        has_terms[i] = True
    vocab_size = max(vocab.values(), default=-1) + 1
    if not term_bytes:
        return (
            has_terms,
            np.zeros(vocab_size + 1, dtype=np.int64),
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.float32),
            np.zeros(vocab_size),
        )
    term_ids = np.frombuffer(term_bytes, dtype="<i4")
    posting_rows = np.repeat(np.frombuffer(rows, dtype=np.int64), np.frombuffer(sizes, dtype=np.int64))
    order = np.argsort(term_ids.astype(np.int64) * max(n, 1) + posting_rows)  # by term, then row
    del rows, sizes
    term_ids = term_ids[order]
    tfs = np.frombuffer(count_bytes, dtype="<f4")[order].astype(np.float32)
    posting_rows = posting_rows[order].astype(np.int32)
    del order, term_bytes, count_bytes
    df = np.bincount(term_ids, minlength=vocab_size).astype(np.float64)
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
    docs = float(has_terms.sum())
    avgdl = float(lengths[has_terms].mean()) or 1.0
    k1, b = params.k1, params.b
    weights = tfs * (k1 + 1) / (tfs + k1 * (1 - b + b * lengths[posting_rows] / avgdl))
    idf = np.log(1.0 + (docs - df + 0.5) / (df + 0.5))
    return has_terms, indptr, posting_rows, weights.astype(np.float32), idf


def _question_arrays(
    questions: Sequence[tuple[int, bytes]], position: np.ndarray, dim: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Question vectors grouped by chunk row: (vectors, chunk row of each group, first index of each group).

    A question whose chunk has no restrict row (deleted meanwhile) is left out: it could never pass a filter.
    """
    found = ((_row_of(position, rowid), blob) for rowid, blob in questions)
    kept = sorted(((row, blob) for row, blob in found if row >= 0), key=lambda p: p[0])
    if not kept:
        return np.zeros((0, dim), dtype=np.float32), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    matrix = np.vstack([np.frombuffer(blob, dtype="<f4") for _, blob in kept]).astype(np.float32)
    rows = np.asarray([row for row, _ in kept], dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    return matrix, rows[starts], starts
