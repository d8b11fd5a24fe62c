"""Vertex AI Vector Search: what the adapter sends, and that the wire fake refuses what the service refuses.

The adapter tests read the requests the fake received (decoded by the library's own message classes), so
they check the wire format itself: one Restriction per namespace, dates as `value_int`, no `op` on
datapoints, `all_restricts` update masks, batch sizes, one write per chunk per pipeline call.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import grpc
import numpy as np
import pytest
from google.api_core import exceptions as gexc
from google.cloud import aiplatform_v1 as v1

from contract.contracts import make_chunk, make_meta
from fakes import gcp_env
from fakes.gcp_env import vertex_ports
from fakes.memory_objects import MemoryObjects
from regrag.adapters.gcp import clients
from regrag.adapters.gcp.clients import Endpoint
from regrag.adapters.gcp.sparse import Lexicon
from regrag.domain.errors import InvalidInput, Unavailable
from regrag.domain.models import Filters
from regrag.text.terms import chunk_tokens, query_tokens

DIM = 16
Op = v1.IndexDatapoint.NumericRestriction.Operator


def vec(seed, dim=DIM):
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def ports(vector_fake):
    return vertex_ports(MemoryObjects(), vector_fake)


def put(ports, meta, chunks, seeds):
    store, vectors, lexical, dim = ports
    result = store.put_part(meta, "全文", chunks, 0, 1)
    vectors.upsert(chunks, [vec(s, dim) for s in seeds])
    toks = [chunk_tokens(c) for c in chunks]
    lexical.upsert(chunks, [b for b, _ in toks], [t for _, t in toks])
    return result


def upserts(fake, index):
    return [r for r in fake.calls("UpsertDatapoints") if r.index == index]


def test_datapoints_carry_one_restriction_per_namespace_and_integer_dates(ports, vector_fake):
    _store, vectors, _lexical, _dim = ports
    meta = make_meta(effective_date="2024-01-01", effective_to="2025-06-30")
    put(ports, meta, [make_chunk(meta, 1, "第1条 并网协议")], [1])
    [request] = upserts(vector_fake, vectors.index.config.index)
    [point] = request.datapoints
    namespaces = [r.namespace for r in point.restricts]
    assert sorted(namespaces) == ["asset", "corpus", "doc_class", "doc_id", "province", "regulation_level"]
    assert len(set(namespaces)) == len(namespaces) and all(len(r.allow_list) == 1 for r in point.restricts)
    numeric = {
        r.namespace: v1.IndexDatapoint.NumericRestriction.pb(r).WhichOneof("Value") for r in point.numeric_restricts
    }
    assert numeric == {"eff": "value_int", "eff_to": "value_int"}
    assert {r.namespace: r.value_int for r in point.numeric_restricts} == {"eff": 20240101, "eff_to": 20250630}
    assert all(r.op == Op.OPERATOR_UNSPECIFIED for r in point.numeric_restricts)
    assert len(point.sparse_embedding.dimensions) > 0 and all(d >= 0 for d in point.sparse_embedding.dimensions)


def test_one_write_per_chunk_for_the_two_views_and_batches_of_the_configured_size(vector_fake):
    store, vectors, lexical, dim = vertex_ports(MemoryObjects(), vector_fake, batch_size=100)
    meta = make_meta()
    chunks = [make_chunk(meta, i, f"第{i}条 电网企业并网协议{i}") for i in range(1, 251)]
    put((store, vectors, lexical, dim), meta, chunks, range(1, 251))
    sizes = [len(r.datapoints) for r in upserts(vector_fake, vectors.index.config.index)]
    assert sizes == [100, 100, 50]  # the lexical view found its datapoints just written: no second write
    assert vectors.index.calls == {"UpsertDatapoints": 3}
    assert len(vector_fake.indexes[vectors.index.config.index].datapoints) == 250


def test_filters_become_token_and_numeric_restricts_inside_the_query(ports, vector_fake):
    _store, vectors, _lexical, dim = ports
    filters = Filters(province=("gd", "sd"), asset=("solar",), date_from="2010-01-01", as_of="2025-01-01")
    vectors.search(vec(1, dim), filters, 5)
    [request] = [
        r for r in vector_fake.calls("FindNeighbors") if r.index_endpoint == vectors.index.config.index_endpoint
    ]
    query = request.queries[0].datapoint
    assert {r.namespace: list(r.allow_list) for r in query.restricts} == {"province": ["gd", "sd"], "asset": ["solar"]}
    assert sorted((r.namespace, Op(r.op).name, r.value_int) for r in query.numeric_restricts) == [
        ("eff", "GREATER_EQUAL", 20100101),
        ("eff", "LESS_EQUAL", 20250101),
        ("eff_to", "GREATER", 20250101),
    ]
    assert request.queries[0].neighbor_count == 5 and not request.return_full_datapoint


def test_refresh_rewrites_restricts_only_with_an_update_mask(ports, vector_fake):
    store, vectors, lexical, _dim = ports
    old = make_meta("v1", effective_date="2010-01-01")
    put(ports, old, [make_chunk(old, 1, "第1条 旧版")], [1])
    before = vector_fake.snapshot(vectors.index.config.index)["v1-c1"]
    new = make_meta("v2", effective_date="2020-01-01", supersedes="v1")
    result = put(ports, new, [make_chunk(new, 1, "第1条 新版")], [2])
    assert result.relinked == ("v1",)
    related = store.document_chunks("v1")
    vectors.refresh_metadata(related)
    lexical.refresh_metadata(related)  # same restricts just written: no second request
    masked = [r for r in upserts(vector_fake, vectors.index.config.index) if r.update_mask.paths]
    assert [list(r.update_mask.paths) for r in masked] == [["all_restricts"]]
    after = vector_fake.snapshot(vectors.index.config.index)["v1-c1"]
    assert after[0] == before[0] and after[1] == before[1]  # vector and sparse untouched
    assert dict(after[3])["eff_to"] == ("value_int", 20200101)


def test_hybrid_single_call_fuses_with_rrf_alpha(ports):
    _store, vectors, _lexical, dim = ports
    meta = make_meta()
    texts = ["第1条 电网企业应当签订并网协议", "第2条 禁止窃电", "第3条 煤矿安全"]
    put(ports, meta, [make_chunk(meta, i + 1, t) for i, t in enumerate(texts)], [1, 2, 3])
    tokens = query_tokens("并网协议")
    dense_first = vectors.search_hybrid(vec(3, dim), tokens, Lexicon(), Filters(), 3, alpha=1.0)
    sparse_first = vectors.search_hybrid(vec(3, dim), tokens, Lexicon(), Filters(), 3, alpha=0.0)
    assert dense_first[0].chunk_id == "doc-a-c3"  # nearest vector
    assert [h.chunk_id for h in sparse_first] == ["doc-a-c1"]  # the only lexical match
    assert dense_first[0].rank == 1 and dense_first[0].score == 1.0


def test_transient_errors_are_retried_and_invalid_ones_are_permanent(vector_fake):
    _store, vectors, _lexical, dim = vertex_ports(MemoryObjects(), vector_fake, timeout_s=1.0)
    chunk = make_chunk(make_meta(), 1)
    vector_fake.fail_next("UpsertDatapoints", grpc.StatusCode.UNAVAILABLE)
    vectors.upsert([chunk], [vec(1, dim)])  # the adapter's retry absorbs one UNAVAILABLE
    assert vectors.search(vec(1, dim), Filters(), 1)[0].chunk_id == chunk.id
    vector_fake.fail_next("FindNeighbors", grpc.StatusCode.INVALID_ARGUMENT)
    with pytest.raises(InvalidInput):
        vectors.search(vec(1, dim), Filters(), 1)
    vector_fake.fail_next("FindNeighbors", grpc.StatusCode.RESOURCE_EXHAUSTED, times=100)
    try:
        with pytest.raises(Unavailable):  # retried until the 1 s deadline, then transient
            vectors.search(vec(1, dim), Filters(), 1)
    finally:
        vector_fake.clear_failures()


def test_adapter_refuses_wrong_dimensions_and_non_finite_vectors(ports):
    _store, vectors, _lexical, _dim = ports
    chunk = make_chunk(make_meta(), 1)
    with pytest.raises(InvalidInput, match="dimensions"):
        vectors.upsert([chunk], [np.ones(8, np.float32)])
    with pytest.raises(InvalidInput, match="non-finite"):
        vectors.upsert([chunk], [np.full(DIM, np.nan, np.float32)])


# --- the fake, through the real client: the service's validation errors ---------------------------------------


@pytest.fixture
def raw(vector_fake):
    names = gcp_env.vertex_names()
    vector_fake.add_index(names.index, 4, names.endpoint, names.deployed_index_id)
    endpoint = Endpoint(vector_fake.address, plaintext=True)
    return names, clients.index_service(endpoint), clients.match_service(endpoint)


def point(dp_id="a", vector=(1.0, 0.0, 0.0, 0.0), **kw):
    return v1.IndexDatapoint(datapoint_id=dp_id, feature_vector=list(vector), **kw)


def restrict(ns, *tokens, deny=()):
    return v1.IndexDatapoint.Restriction(namespace=ns, allow_list=list(tokens), deny_list=list(deny))


def number(ns, op=None, **value):
    r = v1.IndexDatapoint.NumericRestriction(namespace=ns, **value)
    if op:
        r.op = Op[op]
    return r


@pytest.mark.parametrize(
    ("datapoint", "error"),
    [
        (point(vector=(1.0, 0.0)), "EMBEDDING_SIZE_MISMATCH"),
        (point(restricts=[restrict("province", "gd"), restrict("province", "sd")]), "DUPLICATE_NAMESPACE"),
        (point(numeric_restricts=[number("eff", "LESS", value_int=20240101)]), "OP_IN_DATAPOINT"),
        (point(numeric_restricts=[number("eff", value_int=1), number("eff", value_int=2)]), "MULTIPLE_VALUES"),
        (point(numeric_restricts=[number("eff")]), "INVALID_NUMERIC_VALUE"),
        (point(dp_id=""), "INVALID_EMBEDDING_ID"),
        (
            point(sparse_embedding=v1.IndexDatapoint.SparseEmbedding(values=[1.0, 2.0], dimensions=[3, 3])),
            "INVALID_SPARSE_EMBEDDING",
        ),
        (point(restricts=[restrict("province", "广东")]), "INVALID_TOKEN_VALUE"),
    ],
)
def test_the_fake_refuses_what_the_service_refuses(raw, datapoint, error):
    names, index, _match = raw
    with pytest.raises(gexc.InvalidArgument, match=error):
        index.upsert_datapoints(request={"index": names.index, "datapoints": [datapoint]}, timeout=5)


def test_the_fake_needs_op_on_query_restricts_and_a_matching_routing_header(raw):
    names, _index, match = raw
    query = v1.FindNeighborsRequest.Query(
        datapoint=point(numeric_restricts=[number("eff", value_int=1)]), neighbor_count=3
    )
    request = {"index_endpoint": names.endpoint, "deployed_index_id": names.deployed_index_id, "queries": [query]}
    with pytest.raises(gexc.InvalidArgument, match="needs op"):
        match.find_neighbors(request=request, timeout=5)
    with pytest.raises(gexc.NotFound):
        match.find_neighbors(request={**request, "deployed_index_id": "nope", "queries": []}, timeout=5)


def test_the_fake_implements_token_and_numeric_restrict_semantics(raw):
    names, index, match = raw
    points = [
        point("gd-old", restricts=[restrict("province", "gd")], numeric_restricts=[number("eff", value_int=20100101)]),
        point("gd-new", restricts=[restrict("province", "gd")], numeric_restricts=[number("eff", value_int=20240101)]),
        point("sd", restricts=[restrict("province", "sd")], numeric_restricts=[number("eff", value_int=20240101)]),
        point("bare"),  # no restricts at all
        point("deny-gd", restricts=[restrict("province", "gd", deny=["gd"])]),
        point("float", numeric_restricts=[number("eff", value_float=20240101)]),
    ]
    index.upsert_datapoints(request={"index": names.index, "datapoints": points}, timeout=5)

    def ids(restricts=(), numeric=()):
        q = point("q", restricts=list(restricts), numeric_restricts=list(numeric))
        response = match.find_neighbors(
            request={
                "index_endpoint": names.endpoint,
                "deployed_index_id": names.deployed_index_id,
                "queries": [v1.FindNeighborsRequest.Query(datapoint=q, neighbor_count=10)],
            },
            timeout=5,
        )
        return sorted(n.datapoint.datapoint_id for n in response.nearest_neighbors[0].neighbors)

    assert ids() == ["bare", "deny-gd", "float", "gd-new", "gd-old", "sd"]
    assert ids([restrict("province", "gd", "sd")]) == ["gd-new", "gd-old", "sd"]  # OR within; deny-gd denies gd
    assert ids([restrict("province", deny=["gd"])]) == ["bare", "float", "sd"]  # deny-only: the rest pass
    assert ids(numeric=[number("eff", "GREATER_EQUAL", value_int=20240101)]) == ["gd-new", "sd"]  # no namespace: out
    assert ids([restrict("province", "gd")], [number("eff", "LESS", value_int=20240101)]) == ["gd-old"]  # AND
    # value_float is float32 on the wire: 20240101 is stored as 20240100, so an EQUAL on the date misses it
    assert ids(numeric=[number("eff", "EQUAL", value_float=20240101)]) == ["float"]  # same rounding both sides
    assert ids(numeric=[number("eff", "GREATER_EQUAL", value_int=20240101)]) == ["gd-new", "sd"]  # int ≠ float type
    read = match.read_index_datapoints(
        request={"index_endpoint": names.endpoint, "deployed_index_id": names.deployed_index_id, "ids": ["float"]},
        timeout=5,
    )
    assert read.datapoints[0].numeric_restricts[0].value_float == 20240100.0


def test_an_as_of_day_between_promulgation_and_entry_into_force_finds_the_version_then_in_force(ports, vector_fake):
    """The chunk map and the restricts carry the same dates: the newer version promulgated 2024-06-28 and in
    force from 2024-11-01 is invisible on 2024-08-01, when the older one is the law; visible from 2024-11-01."""
    store, vectors, lexical, dim = ports
    older = make_meta(doc_id="old", effective_date="2007-11-01")
    newer = make_meta(doc_id="new", effective_date="2024-11-01", promulgated="2024-06-28", supersedes="old")
    put(ports, older, [make_chunk(older, 1, "第1条 预防措施")], [1])
    put(ports, newer, [make_chunk(newer, 1, "第1条 预防措施")], [2])
    # the successor's arrival rewrote the older version's restricts: eff_to = the successor's entry into force
    linked = store.get_document("old")[0]
    assert (linked.superseded_by, linked.effective_to) == ("new", "2024-11-01")
    vectors.refresh_metadata(store.document_chunks("old"))
    lexical.refresh_metadata(store.document_chunks("old"))
    point = vector_fake.indexes[vectors.index.config.index].datapoints[make_chunk(older, 1, "x").id]
    assert {r.namespace: r.value_int for r in point.numeric_restricts} == {"eff": 20071101, "eff_to": 20241101}

    def found(day):
        hits = vectors.search(vec(1, dim), Filters(as_of=day), 5)
        return {store.get_chunks([h.chunk_id])[0].doc_id for h in hits}

    assert found("2024-08-01") == {"old"}
    assert found("2024-10-31") == {"old"}
    assert found("2024-11-01") == {"new"}


def test_an_index_is_claimed_by_its_first_model_and_refuses_another(vector_fake):
    from regrag.adapters.gcp.index_metadata import EmbeddingMismatch, IndexMetadata

    objects = MemoryObjects()
    _, vectors, _, dim = vertex_ports(objects, vector_fake)
    q = np.ones(dim, dtype=np.float32) / np.sqrt(dim)
    assert vectors.search(q, Filters(), 3) == []  # an empty index records no model: queries pass
    assert objects.read_optional("index/embedding.json") is None
    chunk = make_chunk(make_meta("doc-a"), 1)
    vectors.upsert([chunk], [q])
    assert json.loads(objects.read_optional("index/embedding.json").data) == {
        "model_id": "test-model",
        "dimension": dim,
    }

    other = type(vectors)(vectors.index, IndexMetadata(objects, "", "vertex:text-embedding-005@768", 768))
    for attempt in (lambda: other.search(q, Filters(), 3), lambda: other.upsert([chunk], [q])):
        with pytest.raises(EmbeddingMismatch, match=r"text-embedding-005.*must not mix"):
            attempt()
    same = type(vectors)(vectors.index, IndexMetadata(objects, "", "test-model", dim))
    assert [h.chunk_id for h in same.search(q, Filters(), 3)] == ["doc-a-c1"]


def test_two_first_writers_agree_on_one_claim():
    from regrag.adapters.gcp.index_metadata import EmbeddingMismatch, IndexMetadata

    objects = MemoryObjects()
    first, second = IndexMetadata(objects, "p/", "model-a", 8), IndexMetadata(objects, "p/", "model-b", 8)
    assert second._read() is None  # both saw no record
    first.check(claim=True)
    with pytest.raises(EmbeddingMismatch):
        second._confirmed = False
        second.check(claim=True)  # its create-only write loses and it compares with the winner's record


def test_the_fake_like_the_service_does_not_find_an_endpoint_named_with_the_project_id(vector_fake):
    names = gcp_env.vertex_names()
    by_id = names.endpoint.replace(gcp_env.PROJECT_NUMBER, gcp_env.PROJECT)
    vector_fake.add_index(names.index, 4, by_id, names.deployed_index_id)
    client = clients.match_service(Endpoint(vector_fake.address, plaintext=True))
    request = v1.FindNeighborsRequest(index_endpoint=by_id, deployed_index_id=names.deployed_index_id)
    with pytest.raises(gexc.NotFound):
        client.find_neighbors(request=request, metadata=[("x-goog-request-params", f"index_endpoint={by_id}")])


def test_a_refresh_waits_out_the_read_after_write_delay(vector_fake, monkeypatch):
    from regrag.adapters.gcp import assumptions

    monkeypatch.setattr(assumptions, "READ_RETRY_DELAYS_S", (0.01, 0.01, 0.01, 0.01))
    _, vectors, _, dim = vertex_ports(MemoryObjects(), vector_fake)
    meta = make_meta("doc-a")
    chunk = make_chunk(meta, 1)
    vector_fake.read_delay_calls = 3  # readable on the 4th read: within the retries
    vectors.upsert([chunk], [np.ones(dim, dtype=np.float32)])
    later = replace(chunk, meta=replace(meta, effective_to="2030-01-01"))
    vectors.refresh_metadata([later])
    assert [h.chunk_id for h in vectors.search(np.ones(dim, dtype=np.float32), Filters(as_of="2031-01-01"), 3)] == []


def test_a_datapoint_still_unreadable_is_an_unavailable_error_never_a_silent_skip(vector_fake, monkeypatch):
    from regrag.adapters.gcp import assumptions

    monkeypatch.setattr(assumptions, "READ_RETRY_DELAYS_S", (0.01, 0.01))
    _, vectors, _, dim = vertex_ports(MemoryObjects(), vector_fake)
    meta = make_meta("doc-a")
    chunk = make_chunk(meta, 1)
    vector_fake.read_delay_calls = 50
    vectors.upsert([chunk], [np.ones(dim, dtype=np.float32)])
    with pytest.raises(Unavailable, match="not readable yet") as err:
        vectors.refresh_metadata([replace(chunk, meta=replace(meta, effective_to="2030-01-01"))])
    assert err.value.details["missing"] == [chunk.id]


def test_every_assumption_names_where_it_is_relied_on_and_what_happens_if_it_fails():
    from regrag.adapters.gcp import assumptions

    for a in assumptions.ALL:
        module = a.relied_on_in.split()[0]
        assert (Path(__file__).parents[2] / "shared" / "regrag" / module).exists(), a.name
        assert a.statement and a.if_it_fails
