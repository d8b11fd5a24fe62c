"""A shortlist for the dense search of large corpus runs, re-scored exactly.

At a million chunks the dense leg of a fan-out reads 1.6 GB of float32 vectors per question, and two threads
scanning at once share one memory bus: 74 ms of the fan-out's wall time (bench/README, "From 27 thousand to a
million chunks"). Each corpus run of at least MIN_ROWS rows therefore also keeps its vectors quantised to 8 bits
per dimension (faiss IndexScalarQuantizer QT_8bit, per-dimension ranges trained on the run, inner product): a
quarter of the bytes, scanned by faiss's SIMD code without the GIL, with the filter mask as a bitmap, so the
shortlist holds only rows that pass the filters. The shortlist (`size(k)` rows) is then scored exactly from the
float32 vectors, so the scores returned are the exact cosine similarities; the quantisation can only matter
if a row of the true top k ranks below the shortlist's end under 8-bit scores, which never happened on the real
vectors measured (tests/unit/test_coarse.py checks the order on a synthetic run; bench/scale.py at 40×).

Runs under MIN_ROWS are scanned exactly: there the float32 product takes a few milliseconds.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import numpy as np

MIN_ROWS = 50_000
TRAIN_ROWS = 20_000  # per-dimension ranges from a sample of the run: training on all rows changed nothing


def size(k: int) -> int:
    """How many rows the shortlist of a top-k search holds."""
    return max(4 * k, k + 200)


def _faiss() -> Any:
    import faiss

    faiss.omp_set_num_threads(1)  # the fan-out searches corpora on its own threads; OpenMP would oversubscribe
    return faiss


def build(vectors: np.ndarray) -> Any:
    """The 8-bit index of one run's (n, dim) float32 vectors (rows without a vector are zero rows)."""
    faiss = _faiss()
    index = faiss.IndexScalarQuantizer(vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    step = max(1, vectors.shape[0] // TRAIN_ROWS)
    index.train(np.ascontiguousarray(vectors[::step], dtype=np.float32))
    for start in range(0, vectors.shape[0], 65_536):  # in slices: no second copy of a mapped matrix at once
        index.add(np.ascontiguousarray(vectors[start : start + 65_536], dtype=np.float32))
    return index


def to_bytes(index: Any) -> np.ndarray:
    return np.asarray(_faiss().serialize_index(index), dtype=np.uint8)


def from_bytes(data: np.ndarray) -> Any:
    return _faiss().deserialize_index(np.ascontiguousarray(data, dtype=np.uint8))


def shortlist(index: Any, query: np.ndarray, eligible: np.ndarray, n: int) -> np.ndarray:
    """Offsets (within the run) of the n eligible rows with the best 8-bit scores (fewer if fewer are eligible)."""
    faiss = _faiss()
    bits = np.packbits(eligible, bitorder="little")
    selector = faiss.IDSelectorBitmap(eligible.size, faiss.swig_ptr(bits))
    params = faiss.SearchParameters(sel=selector)
    _, ids = index.search(np.asarray(query, dtype=np.float32).reshape(1, -1), n, params=params)
    found = ids[0]
    return found[found >= 0]


class RowReader:
    """Rows of a saved (n, dim) float32 matrix, read with pread rather than through the mapping: re-scoring
    touches a few hundred scattered rows per search, and through the mapping every row it ever touched (and,
    by the kernel's fault-around, the 15 pages beside it) stays mapped in the process, until at a million chunks
    the whole 1.6 GB matrix counts in its memory. Read with pread, the rows come from the page cache (kept as
    memory allows, shared with other processes) and the process holds only the 8-bit copies."""

    def __init__(self, path: str, offset: int, dim: int) -> None:
        self._fd = os.open(path, os.O_RDONLY)
        self._finalizer = weakref.finalize(self, os.close, self._fd)
        self._offset, self._row_bytes = offset, dim * 4
        self._dim = dim

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """The float32 rows `rows` (ascending), as an (len(rows), dim) array; consecutive rows in one read."""
        if rows.size == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        breaks = np.flatnonzero(np.diff(rows) != 1) + 1
        parts = []
        for run in np.split(rows, breaks):
            first, count = int(run[0]), int(run.size)
            want = count * self._row_bytes
            data = os.pread(self._fd, want, self._offset + first * self._row_bytes)
            if len(data) != want:
                raise OSError(f"short read of the saved vectors: {len(data)} of {want} bytes")
            parts.append(data)
        return np.frombuffer(b"".join(parts), dtype="<f4").reshape(rows.size, self._dim)
