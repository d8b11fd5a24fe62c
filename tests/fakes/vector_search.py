"""An in-process gRPC fake of Vertex AI Vector Search (aiplatform v1), driven by the real gapic clients.

Services: `IndexService` (UpsertDatapoints, RemoveDatapoints) and `MatchService` (FindNeighbors,
ReadIndexDatapoints), over a plaintext channel on 127.0.0.1, wired to the library's own proto-plus message
classes (so requests are decoded exactly as the service would receive them).

What it enforces (documented behaviour; "assumed" where the docs are silent and the fake errs strict):
- the routing header `x-goog-request-params` names the resource in the body;
- upsert validation, as INVALID_ARGUMENT with the service's error type first: EMBEDDING_SIZE_MISMATCH,
  DUPLICATE_NAMESPACE (one Restriction per namespace), NAMESPACE_MISSING, OP_IN_DATAPOINT (no `op` on a
  datapoint), MULTIPLE_VALUES (a numeric namespace twice), INVALID_NUMERIC_VALUE (no value set),
  INVALID_EMBEDDING_ID, INVALID_SPARSE_EMBEDDING (lengths, duplicate or negative dimensions, non-finite),
  non-finite vector values; assumed: non-ASCII tokens (INVALID_TOKEN_VALUE), duplicate ids in a request,
  an update mask other than `all_restricts`, and a masked update of an id that does not exist;
- `value_float` is stored as float32, as on the wire (20240101 becomes 20240100);
- query restricts: AND across namespaces, OR within an allow list, deny tokens exclude, a datapoint without
  the namespace fails an allow list, a datapoint's own deny tokens exclude it from queries allowing them;
  numeric restricts must carry `op` and all hold; a datapoint without the numeric namespace is not eligible
  (assumed);
- DOT_PRODUCT_DISTANCE: `distance` is the dot product (larger is closer, as public clients read it);
  `sparse_distance` the sparse dot product; a sparse query lists only datapoints sharing a dimension;
  both halves: reciprocal rank fusion weighted by `rrf.alpha` (1 dense only, 0 sparse only; k = 60 and
  alpha 0.5 when unset are assumed).
Not modelled: approximate search (results are exact), crowding, index update latency.
"""

from __future__ import annotations

import copy
import math
import re
import threading
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import numpy as np
from google.cloud import aiplatform_v1 as v1

from fakes.grpc_server import Handlers, serve_unary

Op = v1.IndexDatapoint.NumericRestriction.Operator
_OPS: dict[int, Callable[[float, float], bool]] = {
    Op.LESS: lambda a, b: a < b,
    Op.LESS_EQUAL: lambda a, b: a <= b,
    Op.EQUAL: lambda a, b: a == b,
    Op.GREATER_EQUAL: lambda a, b: a >= b,
    Op.GREATER: lambda a, b: a > b,
    Op.NOT_EQUAL: lambda a, b: a != b,
}
RRF_K = 60


class Rejected(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class FakeIndex:
    name: str
    dimensions: int
    datapoints: dict[str, Any] = field(default_factory=dict)  # id → v1.IndexDatapoint


def _numeric_value(r: Any) -> tuple[str, float] | None:
    which = v1.IndexDatapoint.NumericRestriction.pb(r).WhichOneof("Value")
    if which is None:
        return None
    value = getattr(r, which)
    if which == "value_float":
        value = float(np.float32(value))  # float32 on the wire
    return which, value


class VectorSearchFake:
    """Start with `start()` (returns "127.0.0.1:PORT"), stop with `stop()`; state is per index name."""

    def __init__(self) -> None:
        self.indexes: dict[str, FakeIndex] = {}
        self.deployments: dict[tuple[str, str], str] = {}
        self.requests: list[tuple[str, Any]] = []
        self._failures: deque[tuple[str, grpc.StatusCode]] = deque()
        # read-after-write delay: a datapoint upserted becomes readable after this many ReadIndexDatapoints calls
        self.read_delay_calls = 0
        self._unreadable: dict[str, int] = {}
        self._lock = threading.RLock()
        self._server: grpc.Server | None = None
        self.address = ""

    # --- control ------------------------------------------------------------------------------------------

    def add_index(self, name: str, dimensions: int, endpoint: str, deployed_index_id: str) -> FakeIndex:
        with self._lock:
            index = FakeIndex(name, dimensions)
            self.indexes[name] = index
            self.deployments[(endpoint, deployed_index_id)] = name
            return index

    def fail_next(self, method: str, code: grpc.StatusCode, times: int = 1) -> None:
        """The next `times` calls of `method` (e.g. "UpsertDatapoints") fail with `code`."""
        with self._lock:
            self._failures.extend([(method, code)] * times)

    def clear_failures(self) -> None:
        with self._lock:
            self._failures.clear()

    def calls(self, method: str) -> list[Any]:
        with self._lock:
            return [r for m, r in self.requests if m == method]

    def snapshot(self, index: str) -> dict[str, Any]:
        """Everything a datapoint holds, comparable with ==."""
        with self._lock:
            out = {}
            for dp_id, dp in self.indexes[index].datapoints.items():
                out[dp_id] = (
                    tuple(np.asarray(dp.feature_vector, dtype=np.float32).tolist()),
                    tuple(zip(dp.sparse_embedding.dimensions, dp.sparse_embedding.values, strict=True)),
                    tuple(sorted((r.namespace, tuple(r.allow_list), tuple(r.deny_list)) for r in dp.restricts)),
                    tuple(sorted((r.namespace, _numeric_value(r)) for r in dp.numeric_restricts)),
                )
            return out

    def start(self) -> str:
        options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        handlers: Handlers = {
            "google.cloud.aiplatform.v1.IndexService": {
                "UpsertDatapoints": (self._upsert, v1.UpsertDatapointsRequest, v1.UpsertDatapointsResponse),
                "RemoveDatapoints": (self._remove, v1.RemoveDatapointsRequest, v1.RemoveDatapointsResponse),
            },
            "google.cloud.aiplatform.v1.MatchService": {
                "FindNeighbors": (self._find, v1.FindNeighborsRequest, v1.FindNeighborsResponse),
                "ReadIndexDatapoints": (self._read, v1.ReadIndexDatapointsRequest, v1.ReadIndexDatapointsResponse),
            },
        }
        wrapped: Handlers = {
            service: {method: (self._wrap(method, fn), req, resp) for method, (fn, req, resp) in methods.items()}
            for service, methods in handlers.items()
        }
        self._server, self.address = serve_unary(wrapped, thread_name_prefix="vs-fake", max_workers=8, options=options)
        return self.address

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None)
            self._server = None

    # --- plumbing -------------------------------------------------------------------------------------------

    def _wrap(self, method: str, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def handler(request: Any, context: grpc.ServicerContext) -> Any:
            with self._lock:
                self.requests.append((method, copy.deepcopy(request)))
                for i, (m, code) in enumerate(self._failures):
                    if m == method:
                        del self._failures[i]
                        context.abort(code, f"injected {code.name}")
            try:
                return fn(request, dict(context.invocation_metadata()))
            except Rejected as exc:
                context.abort(exc.code, str(exc))

        return handler

    @staticmethod
    def _routed(metadata: dict[str, Any], key: str, value: str) -> None:
        params = urllib.parse.parse_qs(str(metadata.get("x-goog-request-params", "")))
        if params.get(key, [None])[0] != value:
            raise Rejected(grpc.StatusCode.INVALID_ARGUMENT, f"routing header does not name {key}={value}")

    def _index(self, name: str) -> FakeIndex:
        index = self.indexes.get(name)
        if index is None:
            raise Rejected(grpc.StatusCode.NOT_FOUND, f"Index {name} not found")
        return index

    def _deployed(self, endpoint: str, deployed_index_id: str) -> FakeIndex:
        # as reported of the real service: an endpoint named with the project id, not its number, is not found
        if not re.fullmatch(r"projects/[0-9]+/locations/[^/]+/indexEndpoints/[^/]+", endpoint):
            raise Rejected(grpc.StatusCode.NOT_FOUND, f"IndexEndpoint {endpoint} not found")
        name = self.deployments.get((endpoint, deployed_index_id))
        if name is None:
            raise Rejected(grpc.StatusCode.NOT_FOUND, f"deployed index {deployed_index_id} not found on {endpoint}")
        return self._index(name)

    # --- IndexService ---------------------------------------------------------------------------------------

    def _validate(self, dp: Any, index: FakeIndex, masked: bool) -> None:
        def bad(kind: str, detail: str) -> Rejected:
            return Rejected(grpc.StatusCode.INVALID_ARGUMENT, f"{kind}: datapoint {dp.datapoint_id!r}: {detail}")

        if not dp.datapoint_id:
            raise bad("INVALID_EMBEDDING_ID", "datapoint_id is required")
        if not masked:
            if len(dp.feature_vector) != index.dimensions:
                raise bad("EMBEDDING_SIZE_MISMATCH", f"{len(dp.feature_vector)} values, index has {index.dimensions}")
            if not all(math.isfinite(x) for x in dp.feature_vector):
                raise bad("INVALID_EMBEDDING", "feature_vector has non-finite values")
            sparse = dp.sparse_embedding
            if len(sparse.values) != len(sparse.dimensions):
                raise bad("INVALID_SPARSE_EMBEDDING", "values and dimensions differ in length")
            if len(set(sparse.dimensions)) != len(sparse.dimensions) or any(d < 0 for d in sparse.dimensions):
                raise bad("INVALID_SPARSE_EMBEDDING", "dimensions must be distinct and non-negative")
            if not all(math.isfinite(x) for x in sparse.values):
                raise bad("INVALID_SPARSE_EMBEDDING", "non-finite values")
        seen: set[str] = set()
        for r in dp.restricts:
            if not r.namespace:
                raise bad("NAMESPACE_MISSING", "a restrict has no namespace")
            if r.namespace in seen:
                raise bad("DUPLICATE_NAMESPACE", f"namespace {r.namespace!r} appears twice")
            seen.add(r.namespace)
            for token in [*r.allow_list, *r.deny_list]:
                if not token or not token.isascii() or not token.isprintable():
                    raise bad("INVALID_TOKEN_VALUE", f"token {token!r} (assumed: printable ASCII)")
        seen_numeric: set[str] = set()
        for r in dp.numeric_restricts:
            if not r.namespace:
                raise bad("NAMESPACE_MISSING", "a numeric restrict has no namespace")
            if r.op != Op.OPERATOR_UNSPECIFIED:
                raise bad("OP_IN_DATAPOINT", f"numeric restrict {r.namespace!r} sets op on a datapoint")
            if r.namespace in seen_numeric:
                raise bad("MULTIPLE_VALUES", f"numeric namespace {r.namespace!r} appears twice")
            seen_numeric.add(r.namespace)
            if _numeric_value(r) is None:
                raise bad("INVALID_NUMERIC_VALUE", f"numeric restrict {r.namespace!r} has no value")

    def _upsert(self, request: Any, metadata: dict[str, Any]) -> Any:
        self._routed(metadata, "index", request.index)
        with self._lock:
            index = self._index(request.index)
            paths = list(request.update_mask.paths) if request.update_mask else []
            if any(p != "all_restricts" for p in paths):
                raise Rejected(grpc.StatusCode.INVALID_ARGUMENT, f"update_mask {paths}: only all_restricts")
            masked = bool(paths)
            ids = [dp.datapoint_id for dp in request.datapoints]
            if len(set(ids)) != len(ids):
                raise Rejected(grpc.StatusCode.INVALID_ARGUMENT, "duplicate datapoint ids in one request (assumed)")
            for dp in request.datapoints:
                self._validate(dp, index, masked)
                if masked and dp.datapoint_id not in index.datapoints:
                    raise Rejected(grpc.StatusCode.NOT_FOUND, f"datapoint {dp.datapoint_id} not found (assumed)")
            for dp in request.datapoints:
                if not masked and self.read_delay_calls:
                    self._unreadable[dp.datapoint_id] = self.read_delay_calls
                if masked:
                    stored = index.datapoints[dp.datapoint_id]
                    stored.restricts = list(dp.restricts)
                    stored.numeric_restricts = list(dp.numeric_restricts)
                else:
                    index.datapoints[dp.datapoint_id] = copy.deepcopy(dp)
        return v1.UpsertDatapointsResponse()

    def _remove(self, request: Any, metadata: dict[str, Any]) -> Any:
        self._routed(metadata, "index", request.index)
        with self._lock:
            index = self._index(request.index)
            for dp_id in request.datapoint_ids:
                index.datapoints.pop(dp_id, None)
        return v1.RemoveDatapointsResponse()

    # --- MatchService ---------------------------------------------------------------------------------------

    @staticmethod
    def _eligible(dp: Any, query: Any) -> bool:
        tokens = {r.namespace: (set(r.allow_list), set(r.deny_list)) for r in dp.restricts}
        for q in query.restricts:
            allow, deny = set(q.allow_list), set(q.deny_list)
            have, have_deny = tokens.get(q.namespace, (set(), set()))
            if have & deny:
                return False
            if allow and (not have & allow or have_deny & allow):
                return False
        numbers = {r.namespace: _numeric_value(r) for r in dp.numeric_restricts}
        for q in query.numeric_restricts:
            have = numbers.get(q.namespace)
            want = _numeric_value(q)
            if have is None or want is None or have[0] != want[0]:
                return False
            if not _OPS[q.op](have[1], want[1]):
                return False
        return True

    def _find(self, request: Any, metadata: dict[str, Any]) -> Any:
        self._routed(metadata, "index_endpoint", request.index_endpoint)
        with self._lock:
            index = self._deployed(request.index_endpoint, request.deployed_index_id)
            points = list(index.datapoints.values())
        response = v1.FindNeighborsResponse()
        for query in request.queries:
            q = query.datapoint
            for r in q.numeric_restricts:
                if r.op == Op.OPERATOR_UNSPECIFIED:
                    raise Rejected(grpc.StatusCode.INVALID_ARGUMENT, f"numeric restrict {r.namespace!r} needs op")
                if _numeric_value(r) is None:
                    raise Rejected(grpc.StatusCode.INVALID_ARGUMENT, f"numeric restrict {r.namespace!r} has no value")
            dense = np.asarray(q.feature_vector, dtype=np.float64)
            sparse = dict(zip(q.sparse_embedding.dimensions, q.sparse_embedding.values, strict=True))
            if dense.size == 0 and not sparse:
                raise Rejected(grpc.StatusCode.INVALID_ARGUMENT, "query has neither a dense nor a sparse embedding")
            if dense.size and dense.size != index.dimensions:
                raise Rejected(
                    grpc.StatusCode.INVALID_ARGUMENT, f"query has {dense.size} dims, index has {index.dimensions}"
                )
            eligible = [dp for dp in points if self._eligible(dp, q)]
            dense_scores = {
                dp.datapoint_id: float(np.dot(np.asarray(dp.feature_vector, dtype=np.float64), dense))
                for dp in eligible
                if dense.size and len(dp.feature_vector)
            }
            sparse_scores = {}
            for dp in eligible:
                overlap = [
                    w * sparse[d]
                    for d, w in zip(dp.sparse_embedding.dimensions, dp.sparse_embedding.values, strict=True)
                    if d in sparse
                ]
                if overlap:
                    sparse_scores[dp.datapoint_id] = float(sum(overlap))
            if dense.size and sparse:
                alpha = query.rrf.alpha if "rrf" in query else 0.5
                dense_rank = {i: r for r, i in enumerate(sorted(dense_scores, key=lambda i: (-dense_scores[i], i)), 1)}
                sparse_rank = {
                    i: r for r, i in enumerate(sorted(sparse_scores, key=lambda i: (-sparse_scores[i], i)), 1)
                }
                fused = {
                    i: alpha * (1 / (RRF_K + dense_rank[i]) if i in dense_rank else 0)
                    + (1 - alpha) * (1 / (RRF_K + sparse_rank[i]) if i in sparse_rank else 0)
                    for i in set(dense_rank) | set(sparse_rank)
                }
                order = sorted((i for i in fused if fused[i] > 0), key=lambda i: (-fused[i], i))
            elif dense.size:
                order = sorted(dense_scores, key=lambda i: (-dense_scores[i], i))
            else:
                order = sorted(sparse_scores, key=lambda i: (-sparse_scores[i], i))
            count = query.neighbor_count or 10
            neighbors = []
            by_id = {dp.datapoint_id: dp for dp in eligible}
            for dp_id in order[:count]:
                point = (
                    copy.deepcopy(by_id[dp_id])
                    if request.return_full_datapoint
                    else v1.IndexDatapoint(datapoint_id=dp_id)
                )
                neighbors.append(
                    v1.FindNeighborsResponse.Neighbor(
                        datapoint=point,
                        distance=dense_scores.get(dp_id, 0.0),
                        sparse_distance=sparse_scores.get(dp_id, 0.0),
                    )
                )
            response.nearest_neighbors.append(
                v1.FindNeighborsResponse.NearestNeighbors(id=q.datapoint_id, neighbors=neighbors)
            )
        return response

    def _read(self, request: Any, metadata: dict[str, Any]) -> Any:
        self._routed(metadata, "index_endpoint", request.index_endpoint)
        with self._lock:
            index = self._deployed(request.index_endpoint, request.deployed_index_id)
            for i in request.ids:
                if self._unreadable.get(i, 0) > 0:
                    self._unreadable[i] -= 1
            visible = [i for i in request.ids if i in index.datapoints and self._unreadable.get(i, 0) <= 0]
            found = [copy.deepcopy(index.datapoints[i]) for i in visible]
        return v1.ReadIndexDatapointsResponse(datapoints=found)
