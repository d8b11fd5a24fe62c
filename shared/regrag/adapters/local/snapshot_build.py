"""Building a SearchSnapshot (snapshot.py) from the index's tables, read one row at a time: the filter columns
in snapshot order (grouped by corpus), the dense matrix, the BM25 postings as CSR with their saturated weights
(the formula is in snapshot.py's docstring), and the questions-answered vectors grouped by chunk."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regrag.adapters.local import coarse
from regrag.adapters.local.snapshot import SearchSnapshot
from regrag.domain.bm25 import Bm25Params


def build_snapshot(
    version: int,
    rows: Iterable[tuple[Any, ...]],
    vectors: Iterable[tuple[int, bytes]],
    dimension: int | None,
    terms: Iterable[tuple[int, float, bytes, bytes]],
    vocab: dict[str, int],
    params: Bm25Params,
    questions: Sequence[tuple[int, bytes]] = (),
    coarse_min_rows: int = coarse.MIN_ROWS,
) -> SearchSnapshot:
    """Arrays from table rows, read one row at a time (database cursors): no table is ever held as Python
    objects, which at a million chunks took gigabytes that the allocator then kept.

    Args:
        rows: (rowid, chunk id, corpus, province, asset, doc_class, level, doc_id, eff, eff_to) per chunk.
        vectors: (rowid, float32 bytes). terms: (rowid, length, int32 term ids bytes, float32 counts bytes).
        questions: (chunk rowid, float32 bytes) per generated question; several per chunk.
        coarse_min_rows: corpus runs of at least this many rows get an 8-bit shortlist index (coarse.py).
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
        coarse={
            (start, stop): coarse.build(matrix[start:stop])
            for start, stop in table.corpus_runs.values()
            if stop - start >= coarse_min_rows
        },
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


_BATCH = 4096  # table rows per fetch: Python touches batches, numpy the rows


def _batches(rows: Iterable[tuple[Any, ...]]) -> Iterator[list[tuple[Any, ...]]]:
    """Rows in lists of _BATCH (a cursor's fetchmany, or slices of any other iterable)."""
    fetch = getattr(rows, "fetchmany", None)
    if fetch is not None:
        yield from iter(lambda: fetch(_BATCH), [])
        return
    iterator = iter(rows)
    while batch := list(itertools.islice(iterator, _BATCH)):
        yield batch


def _rows_of(position: np.ndarray, rowids: Sequence[int]) -> np.ndarray:
    """Snapshot rows of `rowids` (-1 for a rowid without one: written after the restrict rows were read)."""
    ids = np.asarray(rowids, dtype=np.int64)
    inside = (ids >= 0) & (ids < position.size)
    return np.where(inside, position[np.where(inside, ids, 0)], -1)


def _dense_arrays(
    vectors: Iterable[tuple[int, bytes]], position: np.ndarray, n: int, dim: int
) -> tuple[np.ndarray, np.ndarray]:
    """(n, dim) float32 vectors in row order, zero rows where a chunk has none; and which rows have one."""
    matrix = np.zeros((n, dim), dtype=np.float32)
    has_vector = np.zeros(n, dtype=bool)
    for batch in _batches(vectors):
        rowids, blobs = zip(*batch, strict=True)
        rows = _rows_of(position, rowids)
        keep = rows >= 0
        block = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)
        matrix[rows[keep]] = block[keep]
        has_vector[rows[keep]] = True
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
    segment_rows, sizes = [], []
    for batch in _batches(terms):
        rowids, batch_lengths, ids_blobs, counts_blobs = zip(*batch, strict=True)
        rows = _rows_of(position, rowids)
        keep = rows >= 0
        ids_blobs = tuple(b for b, k in zip(ids_blobs, keep.tolist(), strict=True) if k)
        term_bytes += b"".join(ids_blobs)
        count_bytes += b"".join(b for b, k in zip(counts_blobs, keep.tolist(), strict=True) if k)
        segment_rows.append(rows[keep])
        sizes.append(np.fromiter((len(b) // 4 for b in ids_blobs), dtype=np.int64, count=len(ids_blobs)))
        lengths[rows[keep]] = np.asarray(batch_lengths, dtype=np.float32)[keep]
        has_terms[rows[keep]] = True
    vocab_size = max(vocab.values(), default=-1) + 1
    if not term_bytes:
        return (
            has_terms,
            np.zeros(vocab_size + 1, dtype=np.int64),
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.float32),
            np.zeros(vocab_size),
        )
    term_ids, tfs, posting_rows = _by_term_then_row(
        np.frombuffer(term_bytes, dtype="<i4"),
        np.frombuffer(count_bytes, dtype="<f4"),
        np.concatenate(segment_rows),
        np.concatenate(sizes),
    )
    del term_bytes, count_bytes
    df = np.bincount(term_ids, minlength=vocab_size).astype(np.float64)
    del term_ids
    indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
    docs = float(has_terms.sum())
    avgdl = float(lengths[has_terms].mean()) or 1.0
    k1, b = params.k1, params.b
    weights = tfs * (k1 + 1) / (tfs + k1 * (1 - b + b * lengths[posting_rows] / avgdl))
    idf = np.log(1.0 + (docs - df + 0.5) / (df + 0.5))
    return has_terms, indptr, posting_rows, weights.astype(np.float32), idf


def _by_term_then_row(
    term_ids: np.ndarray, tfs: np.ndarray, segment_rows: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Postings read row by row (segment i: `sizes[i]` postings of row `segment_rows[i]`, rows in any order)
    reordered by term, then row: (term ids, counts, rows), each term's rows ascending.

    Segments in row order (as the index reads them) are used as they are; others are first put in row order
    (copying ranges). Then a stable sort by term alone leaves every term's rows ascending; that sort is a plain
    sort of (term << 32 | position) keys, several times faster than an argsort of (term, row) pairs (20 s of
    the 60 s build at a million chunks)."""
    if np.all(segment_rows[1:] > segment_rows[:-1]):  # read in row order already (the index reads them so)
        source: np.ndarray | slice = slice(None)
        rows = np.repeat(segment_rows.astype(np.int32), sizes)
    else:
        order = np.argsort(segment_rows, kind="stable")
        sizes_sorted = sizes[order]
        source_starts = np.cumsum(sizes) - sizes
        target_starts = np.cumsum(sizes_sorted) - sizes_sorted
        # position of each posting in the row-ordered layout → its position in the input
        source = np.arange(int(sizes.sum()), dtype=np.int64)
        source += np.repeat(source_starts[order] - target_starts, sizes_sorted)
        rows = np.repeat(segment_rows[order].astype(np.int32), sizes_sorted)
    tfs = tfs[source]
    keys = term_ids[source].astype(np.int64)
    if keys.size >= 1 << 32:  # positions no longer fit beside the term: the slow stable argsort
        by_term = np.argsort(keys, kind="stable")
        return keys[by_term].astype(np.int32), tfs[by_term].astype(np.float32), rows[by_term]
    keys <<= 32
    keys |= np.arange(keys.size, dtype=np.int64)
    keys.sort()
    term_sorted = (keys >> 32).astype(np.int32)
    keys &= 0xFFFFFFFF
    return term_sorted, tfs[keys].astype(np.float32), rows[keys]


def _question_arrays(
    questions: Sequence[tuple[int, bytes]], position: np.ndarray, dim: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Question vectors grouped by chunk row: (vectors, chunk row of each group, first index of each group).

    A question whose chunk has no restrict row (deleted meanwhile) is left out: it could never pass a filter.
    """
    rows = _rows_of(position, [rowid for rowid, _ in questions]).tolist()
    found = zip(rows, (blob for _, blob in questions), strict=True)
    kept = sorted(((row, blob) for row, blob in found if row >= 0), key=lambda p: p[0])
    if not kept:
        return np.zeros((0, dim), dtype=np.float32), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    matrix = np.vstack([np.frombuffer(blob, dtype="<f4") for _, blob in kept]).astype(np.float32)
    rows = np.asarray([row for row, _ in kept], dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
    return matrix, rows[starts], starts
