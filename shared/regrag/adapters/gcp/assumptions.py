"""What the GCP adapters assume about Vertex AI Vector Search where the documentation is silent or ambiguous,
each named, in one place. Each has a `cloud`-marked test (tests/cloud/test_vector_search_assumptions.py, opt-in:
`pytest -m cloud` with a project) that checks it on the real service, and each says what the code does if it
does not hold, so that a wrong assumption shows as an error or a retry, never as a silently wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Assumption:
    name: str
    statement: str
    relied_on_in: str
    if_it_fails: str


NUMERIC_RESTRICTS_ANDED = Assumption(
    "numeric restricts on one namespace are ANDed",
    "A query with two numeric restricts on the same namespace (eff <= as_of and eff_to > as_of use different "
    "namespaces; date_from/date_to both use `eff`) returns only datapoints satisfying both.",
    "adapters/gcp/restricts.py query_restricts (date_from + date_to on `eff`)",
    "a date range would widen to either bound: the query path post-filters every hit by the chunk's own "
    "dates (query/retrieve.py effective filters), so a wrong result is dropped, not quoted",
)
SPARSE_DIMENSIONS_63_BIT = Assumption(
    "sparse dimensions take any non-negative int64",
    "Sparse embedding dimensions may be arbitrary non-negative 63-bit integers (BLAKE2b-hashed tokens), not "
    "a dense range bounded by a vocabulary size.",
    "adapters/gcp/sparse.py token_dimension",
    "upserts are refused (INVALID_SPARSE_EMBEDDING): the event is retried, then dead-lettered and recorded",
)
SPARSE_ONLY_QUERY_ON_HYBRID_INDEX = Assumption(
    "sparse-only queries on a hybrid index",
    "A FindNeighbors query carrying only a sparse embedding (no dense vector) is served by a tree-AH index "
    "built with both halves, and lists only datapoints sharing a dimension with the query.",
    "adapters/gcp/search_index.py VertexLexicalIndex.search",
    "the lexical leg errors or returns unrelated datapoints: the adapter drops hits with no shared "
    "dimension (sparse_distance 0), and a failed leg leaves the dense leg's answer",
)
READ_AFTER_WRITE = Assumption(
    "datapoints are readable shortly after an upsert",
    "ReadIndexDatapoints returns a datapoint some seconds after UpsertDatapoints on a stream-update index "
    "(the delay is not documented).",
    "adapters/gcp/search_index.py VertexIndex.refresh_restricts (version links rewrite older chunks' dates)",
    "refresh retries the unreadable ones with backoff (READ_RETRY_DELAYS_S) and then raises Unavailable, so "
    "the upsert event is redelivered; it never skips a chunk that the chunk map says exists",
)
READ_RETRY_DELAYS_S = (0.5, 1.0, 2.0, 4.0)  # 7.5 s in all, inside the upsert function's 300 s timeout

ALL = (NUMERIC_RESTRICTS_ANDED, SPARSE_DIMENSIONS_63_BIT, SPARSE_ONLY_QUERY_ON_HYBRID_INDEX, READ_AFTER_WRITE)
