"""`regrag doctor`: each configured model and the index answer with a real call, or the check says why not."""

from dataclasses import replace

import numpy as np
import pytest

from fakes.gemini_fake import GeminiFake, Reply
from fakes.rerank_model import prefer_last
from regrag.entrypoints.cli import main
from regrag.ops.doctor import run_checks
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings


@pytest.fixture
def gemini():
    with GeminiFake() as fake:
        yield fake


def services_with(tmp_path, fake=None, **overrides):
    if fake is not None:
        overrides.update(gemini_api_key="test-key", gemini_base_url=fake.base_url)
    services = build_services(make_settings(tmp_path, **overrides))
    ingest_sample(services, ["nat-reg-0088"])
    return services


def test_every_check_passes_when_the_models_answer(tmp_path, gemini):
    gemini.push(Reply.computed(prefer_last))
    services = services_with(tmp_path, gemini)
    checks = {c.name: c for c in run_checks(services)}
    assert all(c.ok for c in checks.values()), [c.line() for c in checks.values()]
    assert "gemini-3.5-flash-lite answered through the Gemini API" in checks["Gemini (rerank)"].detail
    assert gemini.requests and gemini.requests[0].model == "gemini-3.5-flash-lite"
    services.close()


def test_a_retired_gemini_model_fails_the_check_it_would_otherwise_hide(tmp_path, gemini):
    # what Vertex AI answers for a retired model id: 404, and every rerank would fall back silently
    gemini.default = Reply.error(404, "Publisher Model `gemini-2.5-flash` was not found")
    services = services_with(tmp_path, gemini, gemini_model="gemini-2.5-flash")
    gemini_check = next(c for c in run_checks(services) if c.name == "Gemini (rerank)")
    assert not gemini_check.ok and "fallback" in gemini_check.detail and "gemini-2.5-flash" in gemini_check.detail
    services.close()


def test_an_embedder_that_returns_garbage_fails(tmp_path):
    services = services_with(tmp_path)

    class Broken:
        model_id, dimension = "broken@4", 4

        def embed_query(self, text):
            return np.full(3, np.nan)

    checks = run_checks(replace(services, embedder=Broken()))
    assert not checks[0].ok and "shape (3,)" in checks[0].detail
    services.close()


def test_the_command_exits_1_on_a_failure_and_0_when_all_answer(tmp_path, gemini, monkeypatch, capsys):
    services_with(tmp_path, gemini).close()
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.setenv("REGRAG_GEMINI_BASE_URL", gemini.base_url)
    gemini.default = Reply.error(404, "model not found")
    assert main(["doctor"]) == 1
    assert "FAIL Gemini (rerank)" in capsys.readouterr().out
    gemini.default = Reply.computed(prefer_last)
    assert main(["doctor"]) == 0
