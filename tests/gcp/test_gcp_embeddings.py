"""VertexEmbedder on the HTTP fake of Vertex AI embeddings, through the real google-genai client."""

from __future__ import annotations

import time

import numpy as np
import pytest

from fakes import gcp_env
from fakes.vertex_embeddings import MAX_TOKENS, fake_tokens
from regrag.adapters.gcp.embedders import RetryPolicy, VertexEmbedder, batches, estimate_tokens
from regrag.domain.errors import InvalidInput, Unavailable


def embedder(fake, **kw):
    kw.setdefault("retry", RetryPolicy(3, 0.0))
    return VertexEmbedder(gcp_env.PROJECT, gcp_env.REGION, base_url=fake.base_url, timeout_s=5, **kw)


def test_task_types_model_path_and_model_id(embeddings):
    e = embedder(embeddings)
    e.embed_documents(["第一条 为了规范电力供应", "第二条 禁止窃电"])
    e.embed_query("窃电怎么处罚？")
    first, second = embeddings.requests
    assert first.model == "text-multilingual-embedding-002" and first.task_types == {"RETRIEVAL_DOCUMENT"}
    assert second.task_types == {"RETRIEVAL_QUERY"} and second.texts == ["窃电怎么处罚？"]
    assert first.headers["authorization"].startswith("Bearer ")
    assert e.model_id == "vertex:text-multilingual-embedding-002@768" and e.dimension == 768


def test_requests_stay_within_250_texts_and_20000_tokens(embeddings):
    texts = [f"第{i}条 " + "电" * 300 for i in range(600)]  # 600 texts of ~300 tokens
    vectors = embedder(embeddings).embed_documents(texts)
    assert vectors.shape == (600, 768)
    sizes = [len(r.texts) for r in embeddings.requests]
    assert sum(sizes) == 600 and max(sizes) <= 250
    assert all(sum(fake_tokens(t) for t in r.texts) <= MAX_TOKENS for r in embeddings.requests)
    assert all(sum(estimate_tokens(t) for t in r.texts) <= MAX_TOKENS for r in embeddings.requests)
    # order is kept across requests
    assert np.allclose(vectors[599], embedder(embeddings).embed_documents([texts[599]])[0])


def test_batches_split_on_either_limit():
    assert [len(g) for g in batches(["短"] * 600, 250, 20_000)] == [250, 250, 100]
    assert [len(g) for g in batches(["电" * 1000] * 50, 250, 20_000)] == [19, 19, 12]
    assert [len(g) for g in batches(["电" * 5000] * 3, 250, 20_000)] == [3]  # capped at 2,048 tokens per text


def test_estimate_errs_high_for_chinese_and_latin_text():
    assert estimate_tokens("电力供应与使用条例") >= 9
    assert estimate_tokens("GB/T 19964-2012 光伏发电站接入电力系统技术规定") >= fake_tokens(
        "GB/T 19964-2012 光伏发电站接入电力系统技术规定"
    )


def test_gemini_embedding_001_one_text_per_request_reduced_and_renormalised(embeddings):
    e = embedder(embeddings, model="gemini-embedding-001", output_dimensionality=256)
    vectors = e.embed_documents(["第一条", "第二条", "第三条"])
    assert vectors.shape == (3, 256) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert [len(r.texts) for r in embeddings.requests] == [1, 1, 1]
    assert all(r.body["parameters"]["outputDimensionality"] == 256 for r in embeddings.requests)
    assert e.model_id == "vertex:gemini-embedding-001@256"
    with pytest.raises(InvalidInput, match="out of range"):
        embedder(embeddings, model="gemini-embedding-001", output_dimensionality=4096)


def test_429_and_503_are_retried_with_backoff_then_succeed(embeddings):
    embeddings.push(429, 503)
    started = time.perf_counter()
    vector = embedder(embeddings, retry=RetryPolicy(3, 0.2, 1.0)).embed_query("并网")
    assert vector.shape == (768,) and len(embeddings.requests) == 3
    assert time.perf_counter() - started >= 0.2  # backed off between attempts (google-genai's HttpRetryOptions)


def test_retries_run_out_into_a_transient_error(embeddings):
    embeddings.push(503, 503, 503)
    with pytest.raises(Unavailable, match="503 3 times"):
        embedder(embeddings).embed_query("并网")


@pytest.mark.parametrize(("status", "error"), [(500, Unavailable), (400, InvalidInput), (404, Unavailable)])
def test_other_statuses_are_not_retried(embeddings, status, error):
    embeddings.push(status)
    with pytest.raises(error):
        embedder(embeddings).embed_query("并网")
    assert len(embeddings.requests) == 1


def test_timeout_is_transient(embeddings):
    embeddings.delay_s = 2.0
    e = VertexEmbedder(gcp_env.PROJECT, gcp_env.REGION, base_url=embeddings.base_url, timeout_s=0.3)
    with pytest.raises(Unavailable, match="Timeout"):
        e.embed_query("并网")


def test_vectors_of_the_wrong_size_are_refused(embeddings):
    e = VertexEmbedder(
        gcp_env.PROJECT, gcp_env.REGION, model="gemini-embedding-001", output_dimensionality=3072,
        base_url=embeddings.base_url, timeout_s=5,
    )  # fmt: skip
    e.output_dimensionality = 128  # the service honours the request; the index still expects 3072
    with pytest.raises(InvalidInput, match="expects 3072"):
        e.embed_query("并网")


def test_empty_texts_are_refused_before_any_request(embeddings):
    with pytest.raises(InvalidInput):
        embedder(embeddings).embed_documents(["第一条", "  "])
    assert embeddings.requests == []
