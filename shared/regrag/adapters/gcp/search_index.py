"""Vertex AI Vector Search (generated aiplatform_v1 clients): one index of datapoints, two views.

A datapoint per chunk: id = chunk id, the dense vector, a sparse BM25 vector (regrag.adapters.gcp.sparse),
and the restricts (regrag.adapters.gcp.restricts). The index holds ids, vectors and restricts only; texts
live in the chunk map on GCS.

`VertexVectorIndex.search` is a dense-only FindNeighbors, `VertexLexicalIndex.search` a sparse-only one; the
pipeline fuses them with RRF as it does locally. `VertexVectorIndex.search_hybrid` is the single-call
alternative (the service fuses with `rrf.alpha`).

Both views write the same datapoints, and an upsert replaces a whole datapoint, so each write is complete:
the vector view computes the sparse half itself with the pipeline's own tokenizer (`tokens_of`, injected),
and the lexical view fetches the dense half (ReadIndexDatapoints) when it has to write. To avoid writing a
datapoint twice, each instance remembers its own writes for `recent_s` seconds and skips a call that would
write exactly what it just wrote (the pipeline calls the two views back to back on the same chunks).

`refresh_metadata` re-upserts the restricts with update_mask `all_restricts`. The vector and sparse halves
are read back first and sent along unchanged, so the call is correct whether or not the service applies the
mask to the other fields.

Scores: dense hits carry the returned `distance` of a DOT_PRODUCT_DISTANCE index on unit vectors (the cosine
similarity, larger is closer, as public clients read it; the sign is to be confirmed on a real index),
lexical hits the returned `sparse_distance` (the BM25 sum). Only the order is relied upon.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from regrag import logs
from regrag.adapters.gcp.index_metadata import IndexMetadata
from regrag.adapters.gcp.lexicon import LexiconSource
from regrag.adapters.gcp.search_store import VertexIndex
from regrag.adapters.gcp.sparse import Lexicon, query_vector
from regrag.domain.models import Chunk, Filters, Hit

log = logs.get("vertex")
# reconcile warns when the corpus's average chunk length and the assumed REGRAG_BM25_AVGDL differ by more than this
# factor: there an average chunk's length normalisation (1 − b + b·|d|/avgdl, b = 0.4) is off by +40 % or −20 %
AVGDL_DRIFT = 2.0


class VertexVectorIndex:
    """VectorIndex view: dense vectors (and, on write, the sparse half computed with `tokens_of`).

    `metadata` (index_metadata.IndexMetadata) refuses to write or search with another embedding model than the
    one the index holds."""

    def __init__(self, index: VertexIndex, metadata: IndexMetadata | None = None) -> None:
        self.index = index
        self.metadata = metadata

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None:
        if self.metadata is not None and chunks:
            self.metadata.check(claim=True)
        self.index.write_dense(chunks, vectors)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.index.remove(chunk_ids)

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> list[Hit]:
        if self.metadata is not None:
            self.metadata.check(claim=False)
        neighbors = self.index.find(filters, k, dense=vector)
        return [Hit(n.datapoint.datapoint_id, float(n.distance), rank) for rank, n in enumerate(neighbors, 1)]

    def warm(self) -> None:
        if self.metadata is not None:
            self.metadata.check(claim=False)
        self.index.warm()

    def search_hybrid(
        self, vector: np.ndarray, tokens: Sequence[str], lexicon: Lexicon, filters: Filters, k: int, alpha: float
    ) -> list[Hit]:
        """One FindNeighbors with both halves; the service fuses them (rrf.alpha: 1 dense only, 0 sparse only).
        Scores are reciprocal ranks (the service returns no fused score)."""
        if self.metadata is not None:
            self.metadata.check(claim=False)
        sparse = query_vector(tokens, lexicon)
        neighbors = self.index.find(filters, k, dense=vector, sparse=sparse, alpha=alpha)
        return [Hit(n.datapoint.datapoint_id, 1.0 / rank, rank) for rank, n in enumerate(neighbors, 1)]

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        self.index.refresh_restricts(chunks)


class VertexLexicalIndex:
    """LexicalIndex view: BM25 through the datapoints' sparse embeddings, idf from a `LexiconSource`.

    `delete` removes whole datapoints (the two views share them); the pipeline always deletes from both.
    """

    def __init__(self, index: VertexIndex, lexicon: LexiconSource) -> None:
        self.index = index
        self.lexicon = lexicon

    def upsert(
        self, chunks: Sequence[Chunk], body_tokens: Sequence[Sequence[str]], title_tokens: Sequence[Sequence[str]]
    ) -> None:
        self.index.write_sparse(chunks, body_tokens, title_tokens)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        self.index.remove(chunk_ids)

    def search(self, tokens: Sequence[str], filters: Filters, k: int) -> list[Hit]:
        sparse = query_vector(tokens, self.lexicon.current())
        if not sparse:
            return []
        neighbors = self.index.find(filters, k, sparse=sparse)
        # A datapoint sharing no token scores 0; whether the service lists such datapoints is not documented,
        # and they are not lexical matches, so they are dropped here.
        hits = [n for n in neighbors if n.sparse_distance > 0]
        return [Hit(n.datapoint.datapoint_id, float(n.sparse_distance), rank) for rank, n in enumerate(hits, 1)]

    def warm(self) -> None:
        self.lexicon.current()
        self.index.warm()

    def refresh_metadata(self, chunks: Sequence[Chunk]) -> None:
        self.index.refresh_restricts(chunks)

    def update_statistics(
        self, chunks: int, document_frequency: dict[str, int], body_tokens: int, title_tokens: int
    ) -> None:
        """Publish the reconcile job's count for query-side idf (the `TermStatistics` port); warn when the
        measured average chunk length is far from the `avgdl` the document weights were written with."""
        bm25 = self.index.bm25
        avgdl = (body_tokens + bm25.title_weight * title_tokens) / chunks if chunks else None
        self.lexicon.save(Lexicon(chunks, dict(document_frequency), avgdl))
        if avgdl is not None and not 1 / AVGDL_DRIFT <= avgdl / bm25.avgdl <= AVGDL_DRIFT:
            logs.event(
                log,
                logging.WARNING,
                "BM25 avgdl setting is far from the corpus average; set REGRAG_BM25_AVGDL and re-upsert",
                configured=bm25.avgdl,
                measured=round(avgdl, 1),
            )
