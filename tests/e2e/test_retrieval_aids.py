"""Retrieval aids end to end on the local adapters: off changes nothing, on adds legs, with the deterministic
local generator (REGRAG_GENERATOR=local); the settings and the wiring that select them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes import gcp_env
from regrag.api import endpoints
from regrag.api.routes import call
from regrag.config import ConfigError, Settings
from regrag.domain.models import Filters
from regrag.ops.evaluation import context as evaluation_context
from regrag.prompts import list_prompts, load_prompt
from regrag.query.fusion import rrf_fuse
from regrag.query.question import analyse
from regrag.query.retrieve import effective_filters
from regrag.text.terms import query_tokens
from regrag.wiring import build_services
from regrag.wiring.gcp import build_gcp_services

from conftest import ingest_sample, make_settings

DOCS = ["nat-reg-0088", "nat-law-0069", "sh-0001", "ha-0001"]
QUESTIONS = [
    "供电企业因计划检修需要停电，应当提前几天通知用户？",
    "窃电行为如何处罚？",
    "上海用户逾期未交电费会怎样？",
]


def response_without_volatile_fields(body):
    """A query response minus what differs between two identical runs (its id, timings and latencies)."""
    out = {k: v for k, v in body.items() if k not in ("query_id", "timings_ms")}
    out["corpus_stats"] = [{k: v for k, v in s.items() if k != "latency_ms"} for s in body["corpus_stats"]]
    return out


def ranking(retrieval):
    return [(c.chunk.id, c.score, c.dense_rank, c.lexical_rank) for c in retrieval.candidates]


def fusion(retriever, question, top_k):
    """The fusion step alone (legs → RRF), where the aids enter; whatever reorders candidates after it (a local
    reranker) is not this feature's business."""
    timings: dict[str, float] = {}
    q = analyse(question, Filters())
    qvec = retriever._embed(q, timings)
    aids = retriever._prepare_aids(q.text, qvec, timings)
    return retriever._search(q, qvec, q.filters, top_k, timings, aids.legs), aids, timings


@pytest.fixture
def plain(tmp_path):
    services = build_services(make_settings(tmp_path / "plain"))
    ingest_sample(services, DOCS)
    yield services
    services.close()


def test_with_the_aids_off_the_fusion_is_exactly_dense_plus_lexical(plain):
    retriever = plain.retriever
    assert retriever.hyde is None and retriever.questions is None
    cfg = retriever.config
    for question in QUESTIONS:
        found, aids, timings = fusion(retriever, question, 20)
        assert aids.legs == () and aids.status == {"hyde": "skipped", "questions": "skipped"}
        filters = effective_filters(Filters())
        dense = plain.vectors.search(plain.embedder.embed_query(question), filters, cfg.dense_k)
        lexical = plain.lexical.search(query_tokens(question), filters, cfg.lexical_k)
        expected = rrf_fuse([dense, lexical], [cfg.dense_weight, cfg.lexical_weight], cfg.rrf_k)[:20]
        assert [(c.chunk.id, c.score) for c in found] == [(f.chunk_id, f.score) for f in expected]
        assert [(c.dense_rank, c.lexical_rank) for c in found] == [f.ranks for f in expected]
        assert not {"hyde", "hyde_search", "questions_search"} & set(timings)


def test_stored_questions_change_nothing_while_the_flag_is_off(plain, tmp_path):
    with_questions = make_settings(tmp_path / "questions", questions_index=True, generator="local")
    writer = build_services(with_questions)
    ingest_sample(writer, DOCS)
    stored = writer.store._con().execute("SELECT count(*) FROM question_vec").fetchone()[0]
    assert stored > 100
    writer.close()
    reader = build_services(replace(with_questions, questions_index=False))  # the same index, the flag off
    try:
        for question in QUESTIONS:
            body = {"question": question, "top_k": 20}
            status, off = call(endpoints.query, reader, body)
            _, reference = call(endpoints.query, plain, body)
            assert status == 200 and off["questions_status"] == "skipped" and off["hyde_status"] == "skipped"
            assert response_without_volatile_fields(off) == response_without_volatile_fields(reference)
            assert set(off["timings_ms"]) == set(reference["timings_ms"])
    finally:
        reader.close()


def test_local_hyde_adds_a_deterministic_leg_built_from_the_lexical_hits(plain, tmp_path):
    settings = make_settings(tmp_path / "plain", hyde=True, generator="local")
    first, second = build_services(settings), build_services(settings)
    try:
        retriever = first.retriever
        question = QUESTIONS[0]
        result = retriever.retrieve(question, Filters(), 20)
        assert result.aids.status["hyde"] == "ok"
        passage = result.aids.debug["hyde_passage"]
        # pseudo-relevance feedback: the passage is the opening sentences of the three best BM25 hits
        top = plain.lexical.search(result.tokens, effective_filters(Filters()), 3)
        texts = [c.search_text for c in plain.store.get_chunks([h.chunk_id for h in top])]
        openings = [t.split(" ", 1)[1] if t.startswith("第") else t for t in texts]
        starts = [passage.find(o[:15]) for o in openings]
        assert -1 not in starts and starts == sorted(starts)
        # the third leg is the passage's document-side vector searched over the chunks
        cfg, filters = retriever.config, result.filters
        hyde_hits = first.vectors.search(first.embedder.embed_documents([passage])[0], filters, cfg.dense_k)
        dense = first.vectors.search(first.embedder.embed_query(question), filters, cfg.dense_k)
        lexical = first.lexical.search(result.tokens, filters, cfg.lexical_k)
        expected = rrf_fuse([dense, lexical, hyde_hits], [cfg.dense_weight, cfg.lexical_weight, cfg.hyde_weight], 20)
        assert [(c.chunk.id, c.score) for c in fusion(retriever, question, 20)[0]] == [
            (f.chunk_id, f.score) for f in expected[:20]
        ]
        # another process with the same index and settings makes the same passage and the same ranking
        again = second.retriever.retrieve(question, Filters(), 20)
        assert again.aids.debug == result.aids.debug and ranking(again) == ranking(result)
        status, body = call(endpoints.query, first, {"question": question})
        assert status == 200 and body["hyde_status"] == "ok" and body["debug"]["hyde_passage"] == passage
    finally:
        first.close()
        second.close()


def test_local_questions_are_generated_at_ingest_and_searched_at_query_time(tmp_path):
    services = build_services(make_settings(tmp_path, questions_index=True, generator="local", questions_per_chunk=2))
    try:
        ingest_sample(services, ["nat-reg-0088"])
        articles = [c for c in services.store.document_chunks("nat-reg-0088") if c.kind == "article"]
        count, chunks = (
            services.store._con().execute("SELECT count(*), count(DISTINCT chunk_rowid) FROM question_vec").fetchone()
        )
        assert chunks == len(articles) and count == 2 * len(articles)
        status, body = call(endpoints.query, services, {"question": QUESTIONS[0]})
        assert status == 200 and body["questions_status"] == "ok" and body["bullets"]
        assert evaluation_context(services)["prompts"] == {"questions": "questions_v1"}
    finally:
        services.close()


# --- settings and wiring ------------------------------------------------------------------------------------------


def test_the_aids_are_off_by_default_and_set_from_the_environment():
    defaults = Settings.from_env({})
    assert (defaults.hyde, defaults.questions_index, defaults.generator) == (False, False, "gemini")
    s = Settings.from_env(
        {
            "REGRAG_HYDE": "true",
            "REGRAG_HYDE_WEIGHT": "0.25",
            "REGRAG_HYDE_TIMEOUT_S": "1.5",
            "REGRAG_QUESTIONS_INDEX": "1",
            "REGRAG_QUESTIONS_WEIGHT": "0.75",
            "REGRAG_QUESTIONS_PER_CHUNK": "2",
            "REGRAG_GENERATOR": "local",
        }
    )
    assert (s.hyde, s.hyde_weight, s.hyde_timeout_s) == (True, 0.25, 1.5)
    assert (s.questions_index, s.questions_weight, s.questions_per_chunk, s.generator) == (True, 0.75, 2, "local")
    with pytest.raises(ConfigError, match="REGRAG_GENERATOR"):
        Settings.from_env({"REGRAG_GENERATOR": "gpt"})


@pytest.mark.parametrize("aid", ["hyde", "questions_index"])
def test_an_aid_on_gemini_without_a_key_is_a_configuration_error(tmp_path, aid):
    with pytest.raises(ConfigError, match="GEMINI_API_KEY or REGRAG_GEMINI_VERTEX"):
        build_services(make_settings(tmp_path, **{aid: True}))


def test_gcp_mode_gets_hyde_and_refuses_the_questions_index(tmp_path):
    env = gcp_env.gcp_environ(
        bucket="docs", state_bucket="state", vertex=gcp_env.vertex_names(), vertex_host="127.0.0.1:1",
        embeddings_url="http://127.0.0.1:1", topic_chunked="chunked", topic_embedded="embedded",
    )  # fmt: skip
    plain = build_gcp_services(Settings.from_env(env, data_dir=tmp_path))
    assert plain.retriever.hyde is None and plain.retriever.questions is None
    wired = build_gcp_services(Settings.from_env(env, data_dir=tmp_path, hyde=True, generator="local", hyde_weight=0.3))
    assert wired.retriever.hyde is not None and wired.retriever.questions is None
    assert wired.retriever.config == replace(plain.retriever.config, hyde_weight=0.3)
    assert "hyde" in wired.caches and "hyde" not in plain.caches
    with pytest.raises(ConfigError, match="local mode only"):
        build_gcp_services(Settings.from_env(env, data_dir=tmp_path, questions_index=True))


def test_the_aid_prompts_are_listed_with_their_sections():
    keys = {p.key for p in list_prompts()}
    assert {"hyde_v1", "questions_v1", "rerank_v1"} <= keys
    hyde, questions = load_prompt("hyde_v1"), load_prompt("questions_v1")
    assert list(hyde.sections()) == list(questions.sections()) == ["system", "user"]
    assert "$question" in hyde.section("user")
    assert "$count" in questions.section("user") and "$article" in questions.section("user")
    assert "Released" not in hyde.section("system") + questions.section("system")
