"""Every event and the query path cost a number of chunk-map requests that does not grow with the corpus.

A chunk map of N document heads (in memory: the same Objects contract as the GCS adapter, counted by a
pass-through wrapper), then, from a cold GcsChunkStore: an upsert of a new document, an upsert of a new version
of a stored one (version linking), a delete by object name, and the query path's reads (the corpora to fan out
to, 10 chunks). Each operation's counts are the same at 200 heads as at many more. bench/gcp_heads.py prints
the same counts for 200 / 2,000 / 20,000 heads.
"""

from __future__ import annotations

import numpy as np
import pytest

from contract.contracts import make_chunk, make_meta
from fakes.counting_objects import CountingObjects
from fakes.memory_objects import MemoryObjects
from regrag.adapters.gcp.chunk_store import GcsChunkStore
from regrag.adapters.local.chunk_store import SqliteIndex
from regrag.adapters.local.search_index import SqliteLexicalIndex, SqliteVectorIndex
from regrag.domain.messages import ChunksEmbedded, DocumentDeleted
from regrag.ingest.upsert import delete_document, upsert_chunks

DIM = 4


REAL = 40  # documents stored through put_part; the rest are synthetic heads cloned from the first


def meta_for(i: int):
    return make_meta(f"doc-{i:05d}", title=f"测试条例第{i}号", corpus=f"c{i % 8}", source_name=f"docs/{i:05d}.md")


def populate(n: int) -> MemoryObjects:
    """N document heads. The first REAL are stored as ingest stores them; the others copy doc-00000's objects
    under their own id (head, text, part, pointer) with their own key and source markers: what the counted
    operations touch is real, and building 20,000 heads stays linear (the in-memory twin lists in O(objects))."""
    objects = MemoryObjects()
    store = GcsChunkStore(objects, dimension=DIM, model_id="m")
    for i in range(min(n, REAL)):
        meta = meta_for(i)
        store.put_part(meta, "第1条 内容1", [make_chunk(meta, 1)], 0, 1)
    template = {k: v for k, v in objects.objects.items() if "doc-00000" in k and not k.startswith("keys/")}
    for i in range(REAL, n):
        doc = f"doc-{i:05d}"
        for name, blob in template.items():
            objects.write(name.replace("doc-00000", doc), blob.data.replace(b"doc-00000", doc.encode()), blob.metadata)
        for name in store._key_names(meta_for(i)):
            objects.write(name, b"", content_type="text/plain")
    return objects


def operations(objects: MemoryObjects, tmp_path) -> dict[str, dict[str, int]]:
    counted = CountingObjects(objects)
    store = GcsChunkStore(counted, dimension=DIM, model_id="m")  # cold: no head cached
    local = SqliteIndex(tmp_path / "v.sqlite", DIM, "m")  # the vector and lexical legs: not what is counted
    legs = {"vectors": SqliteVectorIndex(local), "lexical": SqliteLexicalIndex(local)}
    v = (np.ones(DIM, dtype=np.float32) / 2,)
    out = {}

    def run(name, action):
        counted.reset()
        action()
        out[name] = dict(counted.reset())

    new = make_meta("doc-new", title="全新条例", corpus="c1", source_name="docs/new.md", generation=5)
    run(
        "upsert a new document",
        lambda: upsert_chunks(ChunksEmbedded(new, "第1条 新", (make_chunk(new, 1),), v, "m"), store=store, **legs),
    )
    newer = make_meta(
        "doc-00007-v2", title="测试条例第7号", corpus="c7", source_name="docs/00007-v2.md", effective_date="2024-01-01",
        supersedes="doc-00007", generation=6,
    )  # fmt: skip
    run(
        "upsert a new version (links)",
        lambda: upsert_chunks(
            ChunksEmbedded(newer, "第1条 修订", (make_chunk(newer, 1),), v, "m"), store=store, **legs
        ),
    )
    run(
        "delete by object name",
        lambda: delete_document(DocumentDeleted("doc-00003", "docs/00003.md", 9, "c3"), store=store, **legs),
    )
    run(
        "query: corpora + 10 chunks",
        lambda: (store.corpus_names(), store.get_chunks([f"doc-{i:05d}-c1" for i in range(10, 20)])),
    )
    local.close()
    return out


@pytest.mark.parametrize("big", [20_000])
def test_each_operation_costs_the_same_at_200_heads_as_at_many_more(tmp_path, big):
    small = operations(populate(200), tmp_path / "small")
    large = operations(populate(big), tmp_path / "large")
    assert small == large, (small, large)
    for name, calls in large.items():
        assert calls.get("listed objects", 0) < 20 and sum(calls.values()) < 60, (name, calls)
    assert large["delete by object name"]["delete"] > 0  # it did find and remove the document
