"""In-memory search over the SQLite index: exact dense KNN and BM25, both filtered before top-k.

SQLite keeps the truth (vectors, term counts, restricts); a `SearchSnapshot` is an immutable set of numpy
arrays built from it at one index version, so each query is a few vectorised operations:

- rows are grouped by corpus, each corpus one contiguous run, and a search with a corpus filter (every
  search of the retriever's fan-out has one) works on its corpora's runs only: its cost grows with the corpora
  it searches, not with the whole index (a fan-out over every corpus costs about one unfiltered search);
- filters become one boolean mask over those rows (allow-lists per field, effective-date range, in force on
  `as_of`), applied before taking the top k, so k matching chunks come back, never k chunks filtered afterwards;
- dense: cosine similarity is a matrix-vector product of L2-normalised vectors (26.5 k × 384 in ~2 ms); a corpus
  run of coarse.MIN_ROWS rows or more is shortlisted through its 8-bit copy and the shortlist re-scored exactly
  (coarse.py): at a million chunks the float32 scan of a fan-out is bound by memory bandwidth;
- questions (the optional questions-answered index): the same product over the question vectors, reduced to
  each chunk's best question; a question has no restricts of its own, it is filtered through its chunk's row;
- lexical: Okapi BM25 with the saturated term weight precomputed per posting,
  w(t, d) = tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)), idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5))
  (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond", with Lucene's
  non-negative idf). Defaults k1 = 0.9, b = 0.4 are Anserini's; FTS5's bm25() has k1/b fixed at 1.2/0.75 and
  scored this corpus lower, and it took 130 ms per query once single characters were indexed.

snapshot_build.py builds it from the index's tables; snapshot_files.py keeps it on disk for large indexes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from regrag.adapters.local import coarse
from regrag.domain.models import Filters, Hit, date_int
from regrag.lru import LruCache

# score vectors kept, one per (leg, corpus run, query): a question over 8 corpora fills 16 (dense and lexical), so
# the last few questions are served from here when asked again (not measured)
SCORES_CACHED = 64
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
    # 8-bit copies of the vectors of the large corpus runs, (start, stop) → faiss index (coarse.py)
    coarse: dict[tuple[int, int], Any] = field(default_factory=dict, repr=False, compare=False)
    # the saved vectors read by row for re-scoring (coarse.RowReader), when the snapshot was loaded from files
    row_reader: Any = field(default=None, repr=False, compare=False)
    # scores of one query on one run of rows (a repeated search of the same query is served from here)
    _scores: LruCache[Any] = field(default_factory=lambda: LruCache(SCORES_CACHED), repr=False, compare=False)

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
        return self._best(rows + offset, scores[rows], k)

    def _best(self, rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[float, str, int]]:
        """The best k of `rows` (snapshot rows, `scores` beside them) as (score, chunk id, row). Every row tied
        with the k-th best stays in, so that the tie-break by chunk id (in _hits) decides, not the order
        argpartition happens to leave the ties in."""
        if rows.size == 0 or k <= 0:
            return []
        if rows.size > k:
            keep = scores >= scores[np.argpartition(-scores, k - 1)[k - 1]]
            rows, scores = rows[keep], scores[keep]
        return [(float(s), self.chunk_ids[r], r) for s, r in zip(scores.tolist(), rows.tolist(), strict=True)]

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
        runs = self._runs(filters)
        if self.coarse and runs == [(0, len(self.chunk_ids))]:  # every corpus: run by run, each with its index
            runs = sorted(self.corpus_runs.values())
        for start, stop in runs:
            eligible = self._mask_in(filters, start, stop) & self.has_vector[start:stop]
            index = self.coarse.get((start, stop))
            if index is not None and int(eligible.sum()) > coarse.size(k):
                found.extend(self._shortlisted(index, q, eligible, k, start))
                continue
            scores = self._scores.get_or_compute(
                ("dense", start, stop, q.tobytes()), partial(np.matmul, self.vectors[start:stop], q)
            )
            found.extend(self._top(scores, eligible, k, start))
        return self._hits(found, k)

    def _shortlisted(
        self, index: Any, query: np.ndarray, eligible: np.ndarray, k: int, start: int
    ) -> list[tuple[float, str, int]]:
        """The best k eligible rows of a large run: an 8-bit shortlist, re-scored exactly (coarse.py)."""
        rows = np.sort(coarse.shortlist(index, query, eligible, coarse.size(k))) + start
        exact = (self.row_reader.rows(rows) if self.row_reader is not None else self.vectors[rows]) @ query
        return self._best(rows, exact, k)

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
            # np.add.at: one pass over the postings (`scores[rows] += w` gathers, adds and scatters, each pass
            # converting the int32 rows to intp again); a term's rows are distinct, so the sums are identical
            np.add.at(
                scores,
                self.posting_rows[lo:hi] - start,
                np.float32(count * self.idf[term]) * self.posting_weights[lo:hi],
            )
        # a posting adds a positive amount (idf > 0 by its formula) unless its count is zero (a title-only term
        # with REGRAG_TITLE_WEIGHT=0, which is configured not to match), so a row scored above zero is a row that
        # shares a counted term with the query: no second scatter to mark them
        return scores, scores > 0
