"""The one Vertex AI Vector Search index behind both search views (search_index.py): datapoints written whole
(dense + sparse + restricts), read back, removed, restricts refreshed, and FindNeighbors (see search_index.py
for the datapoint layout, the write-skipping and the scores)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regrag import logs
from regrag.adapters.gcp import assumptions
from regrag.adapters.gcp.clients import Endpoint, api_retry, index_service, match_service
from regrag.adapters.gcp.errors import translated
from regrag.adapters.gcp.restricts import datapoint_restricts, query_restricts
from regrag.adapters.gcp.sparse import SparseVector, document_vector
from regrag.domain.bm25 import Bm25Params
from regrag.domain.errors import InvalidInput, Unavailable
from regrag.domain.models import Chunk, Filters

TokensOf = Callable[[Chunk], tuple[list[str], list[str]]]
log = logs.get("vertex")


@dataclass(frozen=True)
class VertexIndexConfig:
    """Where the index lives and how it is called.

    `index` (projects/P/locations/L/indexes/I) is updated through `index_api` (the regional
    aiplatform host); `index_endpoint` + `deployed_index_id` are queried through `match_api` (the index
    endpoint's public domain, …vdb.vertexai.goog).
    """

    index: str
    index_endpoint: str
    deployed_index_id: str
    index_api: Endpoint
    match_api: Endpoint
    dimension: int
    batch_size: int = 100
    timeout_s: float = 20.0
    recent_s: float = 30.0


@dataclass(frozen=True)
class _Written:
    at: float
    sparse: SparseVector | None
    restricts: Any
    removed: bool = False


def _chunks_of(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class VertexIndex:
    """The datapoints of one index; both views delegate here."""

    def __init__(self, config: VertexIndexConfig, *, tokens_of: TokensOf, bm25: Bm25Params | None = None) -> None:
        if config.batch_size < 1:
            raise InvalidInput("the Vector Search batch size must be at least 1")
        self.config = config
        self.tokens_of = tokens_of
        self.bm25 = bm25 or Bm25Params()
        self._index_client: Any = None
        self._match_client: Any = None
        self._recent: dict[str, _Written] = {}
        self._lock = threading.Lock()
        self.calls: dict[str, int] = {}  # RPCs made, by method: reported by health checks and tests

    # --- clients and bookkeeping --------------------------------------------------------------------------

    def _index(self) -> Any:
        with self._lock:
            if self._index_client is None:
                self._index_client = index_service(self.config.index_api)
            return self._index_client

    def _match(self) -> Any:
        with self._lock:
            if self._match_client is None:
                self._match_client = match_service(self.config.match_api)
            return self._match_client

    def warm(self) -> None:
        """Import the aiplatform types and create the match client (seconds on a cold instance); connecting is
        left to the first call."""
        self._types()
        self._match()

    def _count(self, method: str) -> None:
        with self._lock:
            self.calls[method] = self.calls.get(method, 0) + 1

    def _remember(self, chunk_id: str, written: _Written) -> None:
        with self._lock:
            self._recent[chunk_id] = written
            if len(self._recent) > 100_000:  # bounded: forget the oldest half
                cutoff = sorted(w.at for w in self._recent.values())[len(self._recent) // 2]
                self._recent = {k: w for k, w in self._recent.items() if w.at > cutoff}

    def _just_written(self, chunk_id: str) -> _Written | None:
        with self._lock:
            written = self._recent.get(chunk_id)
        if written is None or time.monotonic() - written.at > self.config.recent_s:
            return None
        return written

    def _unchanged(self, chunk_id: str, sparse: SparseVector | None, restricts: Any, sparse_too: bool = True) -> bool:
        """Whether this instance has just written exactly this (sparse half and) restricts for the chunk."""
        written = self._just_written(chunk_id)
        if written is None or written.removed or written.restricts != restricts:
            return False
        return not sparse_too or written.sparse == sparse

    # --- datapoints -----------------------------------------------------------------------------------------

    def _types(self) -> Any:
        from google.cloud import aiplatform_v1

        return aiplatform_v1

    def _restricts(self, chunk: Chunk) -> Any:
        r = datapoint_restricts(chunk.meta)
        return (tuple(sorted(r.tokens.items())), tuple(sorted(r.numbers.items())))

    def _datapoint(self, chunk_id: str, vector: Any, sparse: SparseVector | None, restricts: Any) -> Any:
        v1 = self._types()
        tokens, numbers = restricts
        point = v1.IndexDatapoint(
            datapoint_id=chunk_id,
            feature_vector=list(vector),
            restricts=[v1.IndexDatapoint.Restriction(namespace=ns, allow_list=[tok]) for ns, tok in tokens],
            # value_int, never value_float: float32 cannot hold YYYYMMDD exactly. No `op` on datapoints.
            numeric_restricts=[v1.IndexDatapoint.NumericRestriction(namespace=ns, value_int=n) for ns, n in numbers],
        )
        if sparse:
            point.sparse_embedding = v1.IndexDatapoint.SparseEmbedding(
                values=list(sparse.values), dimensions=list(sparse.dimensions)
            )
        return point

    def _checked_vector(self, chunk_id: str, vector: np.ndarray) -> np.ndarray:
        arr = np.asarray(vector, dtype=np.float32).reshape(-1)
        if arr.shape[0] != self.config.dimension:
            raise InvalidInput(
                f"vector of chunk {chunk_id} has {arr.shape[0]} dimensions; the index holds {self.config.dimension}"
            )
        if not np.all(np.isfinite(arr)):
            raise InvalidInput(f"vector of chunk {chunk_id} has non-finite values")
        return arr

    def _upsert(self, points: Sequence[Any], *, restricts_only: bool = False) -> None:
        from google.protobuf import field_mask_pb2

        mask = field_mask_pb2.FieldMask(paths=["all_restricts"]) if restricts_only else None
        for batch in _chunks_of(points, self.config.batch_size):
            request: dict[str, Any] = {"index": self.config.index, "datapoints": list(batch)}
            if mask is not None:
                request["update_mask"] = mask
            self._count("UpsertDatapoints")
            with translated(f"upsert {len(batch)} datapoints into {self.config.index}"):
                self._index().upsert_datapoints(
                    request=request, timeout=self.config.timeout_s, retry=api_retry(self.config.timeout_s)
                )

    def read(self, ids: Sequence[str]) -> dict[str, Any]:
        """The datapoints that exist among `ids`, as the deployed index returns them (ReadIndexDatapoints)."""
        found: dict[str, Any] = {}
        for batch in _chunks_of(list(dict.fromkeys(ids)), self.config.batch_size):
            self._count("ReadIndexDatapoints")
            with translated(f"read {len(batch)} datapoints of {self.config.deployed_index_id}"):
                response = self._match().read_index_datapoints(
                    request={
                        "index_endpoint": self.config.index_endpoint,
                        "deployed_index_id": self.config.deployed_index_id,
                        "ids": list(batch),
                    },
                    timeout=self.config.timeout_s,
                    retry=api_retry(self.config.timeout_s),
                )
            found.update({p.datapoint_id: p for p in response.datapoints})
        return found

    def _read_after_write(self, ids: Sequence[str]) -> dict[str, Any]:
        """Every datapoint of `ids`, waiting out the read-after-write delay (assumptions.READ_AFTER_WRITE).

        The ids come from the chunk map, which is written before the vectors: a datapoint that is still missing
        after the retries was written by an upsert not yet visible (or still in flight), so this raises
        Unavailable and the event is redelivered, rather than leaving an older version's dates unchanged."""
        found = self.read(ids)
        for delay in assumptions.READ_RETRY_DELAYS_S:
            missing = [i for i in ids if i not in found]
            if not missing:
                return found
            time.sleep(delay)
            found.update(self.read(missing))
        missing = [i for i in ids if i not in found]
        if missing:
            raise Unavailable(
                f"{len(missing)} datapoints are not readable yet (e.g. {missing[:3]}): their restricts cannot be "
                "refreshed now; the event will be retried",
                details={"missing": missing[:20]},
            )
        return found

    def write_dense(self, chunks: Sequence[Chunk], vectors: Sequence[np.ndarray]) -> None:
        """Upsert complete datapoints: the given vectors, the sparse half from `tokens_of`, the restricts."""
        if len(chunks) != len(vectors):
            raise InvalidInput(f"{len(chunks)} chunks but {len(vectors)} vectors")
        rows = []
        for chunk, vector in zip(chunks, vectors, strict=True):
            body, title = self.tokens_of(chunk)
            sparse = document_vector(body, title, self.bm25)
            rows.append((chunk.id, self._checked_vector(chunk.id, vector), sparse, self._restricts(chunk)))
        self._upsert([self._datapoint(cid, vec, sparse, r) for cid, vec, sparse, r in rows])
        now = time.monotonic()
        for cid, _, sparse, r in rows:
            self._remember(cid, _Written(now, sparse, r))

    def write_sparse(
        self, chunks: Sequence[Chunk], body_tokens: Sequence[Sequence[str]], title_tokens: Sequence[Sequence[str]]
    ) -> None:
        """Upsert the sparse halves; skipped for chunks this instance has just written identically."""
        pending = []
        for chunk, body, title in zip(chunks, body_tokens, title_tokens, strict=True):
            sparse = document_vector(body, title, self.bm25)
            restricts = self._restricts(chunk)
            if self._unchanged(chunk.id, sparse, restricts):
                continue
            pending.append((chunk, sparse, restricts))
        if not pending:
            return
        existing = self.read([c.id for c, _, _ in pending])
        missing = [c.id for c, _, _ in pending if c.id not in existing]
        if missing:
            raise InvalidInput(
                f"{len(missing)} chunk(s) have no dense vector in the index (e.g. {missing[0]}); "
                "upsert their vectors first"
            )
        self._upsert([self._datapoint(c.id, existing[c.id].feature_vector, sparse, r) for c, sparse, r in pending])
        now = time.monotonic()
        for chunk, sparse, restricts in pending:
            self._remember(chunk.id, _Written(now, sparse, restricts))

    def remove(self, chunk_ids: Sequence[str]) -> None:
        """RemoveDatapoints in batches; ids this instance has just removed are not sent again."""
        ids = []
        for cid in dict.fromkeys(chunk_ids):
            written = self._just_written(cid)
            if written is None or not written.removed:
                ids.append(cid)
        for batch in _chunks_of(ids, self.config.batch_size):
            self._count("RemoveDatapoints")
            with translated(f"remove {len(batch)} datapoints from {self.config.index}"):
                self._index().remove_datapoints(
                    request={"index": self.config.index, "datapoint_ids": list(batch)},
                    timeout=self.config.timeout_s,
                    retry=api_retry(self.config.timeout_s),
                )
        now = time.monotonic()
        for cid in ids:
            self._remember(cid, _Written(now, None, None, removed=True))

    def refresh_restricts(self, chunks: Sequence[Chunk]) -> None:
        """Rewrite the restricts of chunks that are in the index (update_mask all_restricts)."""
        pending = []
        for chunk in chunks:
            restricts = self._restricts(chunk)
            if self._unchanged(chunk.id, None, restricts, sparse_too=False):
                continue
            pending.append((chunk, restricts))
        if not pending:
            return
        existing = self._read_after_write([c.id for c, _ in pending])
        points = []
        now = time.monotonic()
        for chunk, restricts in pending:
            old = existing[chunk.id]
            sparse = (
                SparseVector(tuple(old.sparse_embedding.dimensions), tuple(old.sparse_embedding.values))
                if old.sparse_embedding and old.sparse_embedding.dimensions
                else None
            )
            points.append(self._datapoint(chunk.id, old.feature_vector, sparse, restricts))
            self._remember(chunk.id, _Written(now, sparse, restricts))
        self._upsert(points, restricts_only=True)

    # --- search -------------------------------------------------------------------------------------------

    def find(
        self,
        filters: Filters,
        k: int,
        *,
        dense: np.ndarray | None = None,
        sparse: SparseVector | None = None,
        alpha: float | None = None,
    ) -> list[Any]:
        """One FindNeighbors query; the neighbors, best first."""
        v1 = self._types()
        q = query_restricts(filters)
        point = v1.IndexDatapoint(
            restricts=[v1.IndexDatapoint.Restriction(namespace=ns, allow_list=list(v)) for ns, v in q.allow.items()],
            numeric_restricts=[
                v1.IndexDatapoint.NumericRestriction(
                    namespace=c.namespace, value_int=c.value, op=v1.IndexDatapoint.NumericRestriction.Operator[c.op]
                )
                for c in q.numeric
            ],
        )
        if dense is not None:
            point.feature_vector = list(self._checked_vector("<query>", dense))
        if sparse:
            point.sparse_embedding = v1.IndexDatapoint.SparseEmbedding(
                values=list(sparse.values), dimensions=list(sparse.dimensions)
            )
        query = v1.FindNeighborsRequest.Query(datapoint=point, neighbor_count=int(k))
        if alpha is not None:
            query.rrf = v1.FindNeighborsRequest.Query.RRF(alpha=float(alpha))
        self._count("FindNeighbors")
        with translated(f"find neighbors in {self.config.deployed_index_id}"):
            response = self._match().find_neighbors(
                request=v1.FindNeighborsRequest(
                    index_endpoint=self.config.index_endpoint,
                    deployed_index_id=self.config.deployed_index_id,
                    queries=[query],
                    return_full_datapoint=False,
                ),
                timeout=self.config.timeout_s,
                retry=api_retry(self.config.timeout_s),
            )
        if not response.nearest_neighbors:
            return []
        return list(response.nearest_neighbors[0].neighbors)
