"""Each assumption of regrag.adapters.gcp.assumptions, checked on a real Vector Search index (opt-in).

    REGRAG_CLOUD_TEST=1 <the deploy_env variables of a test project> pytest -m cloud tests/cloud

Needs a deployed stream-update hybrid index of dimension REGRAG_EMBEDDING_DIMENSION (768 by default) that may
be written to: every datapoint written here has an id starting `assumption-test-` and is removed at the end.
Not run by `make test` (no project there): what these cover is listed in infra/README.md as still to verify.
"""

from __future__ import annotations

import os
import time
import uuid

import numpy as np
import pytest

from regrag.adapters.gcp import assumptions
from regrag.config import Settings
from regrag.domain.models import Chunk, DocumentMeta, Filters

pytestmark = [
    pytest.mark.cloud,
    pytest.mark.skipif(not os.environ.get("REGRAG_CLOUD_TEST"), reason="set REGRAG_CLOUD_TEST=1 and a project"),
]


@pytest.fixture(scope="module")
def index():
    from regrag.wiring.gcp import _vertex_index

    settings = Settings.from_env({**os.environ, "REGRAG_MODE": "gcp"})
    vertex = _vertex_index(settings, settings.embedding_dimension or 768)
    written: list[str] = []
    yield vertex, written
    if written:
        vertex.remove(written)


def chunk(written, effective="2020-01-01", effective_to=None, text="第一条 并网"):
    cid = f"assumption-test-{uuid.uuid4().hex[:12]}"
    written.append(cid)
    meta = DocumentMeta(doc_id=cid, title="测试", effective_date=effective, effective_to=effective_to)
    return Chunk(cid, cid, "article", "第一条", 0, 1, 1, (), 0, len(text), text, text, meta)


def vector(dim, seed):
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def readable(vertex, ids, wait_s=120):
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if set(vertex.read(ids)) == set(ids):
            return True
        time.sleep(2)
    return False


def test_read_after_write(index):
    vertex, written = index
    c = chunk(written)
    started = time.monotonic()
    vertex.write_dense([c], [vector(vertex.config.dimension, 1)])
    assert readable(vertex, [c.id]), assumptions.READ_AFTER_WRITE.statement
    print(f"readable after {time.monotonic() - started:.1f} s (retries cover {sum(assumptions.READ_RETRY_DELAYS_S)} s)")


def test_numeric_restricts_on_one_namespace_are_anded(index):
    vertex, written = index
    old, new = chunk(written, "2010-01-01"), chunk(written, "2022-01-01")
    q = vector(vertex.config.dimension, 2)
    vertex.write_dense([old, new], [q, q])
    assert readable(vertex, [old.id, new.id])
    time.sleep(30)  # index update latency for queries, which the docs leave open
    hits = vertex.find(Filters(date_from="2015-01-01", date_to="2025-01-01"), 50, dense=q)
    ids = {n.datapoint.datapoint_id for n in hits}
    assert new.id in ids and old.id not in ids, assumptions.NUMERIC_RESTRICTS_ANDED.statement


def test_sparse_dimensions_of_63_bits_and_sparse_only_queries(index):
    from regrag.adapters.gcp.sparse import Lexicon, query_vector

    vertex, written = index
    c = chunk(written, text="第一条 窃电行为的认定与处罚")
    vertex.write_dense([c], [vector(vertex.config.dimension, 3)])  # the sparse half: hashed 63-bit dimensions
    assert readable(vertex, [c.id]), assumptions.SPARSE_DIMENSIONS_63_BIT.statement
    time.sleep(30)
    hits = vertex.find(Filters(), 10, sparse=query_vector(["窃电"], Lexicon()))
    assert c.id in {n.datapoint.datapoint_id for n in hits}, assumptions.SPARSE_ONLY_QUERY_ON_HYBRID_INDEX.statement
