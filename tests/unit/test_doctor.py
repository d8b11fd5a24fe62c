"""`regrag doctor`: each configured model and the index answer with a real call, or the check says why not."""

from dataclasses import replace
from datetime import date
from itertools import count

import numpy as np
import pytest

from fakes.gemini_fake import GeminiFake, Recorded, Reply
from fakes.rerank_model import prefer_last, prompt_candidates
from regrag.cloud_facts import GEMINI_MODELS
from regrag.entrypoints.cli import main
from regrag.ops.doctor import model_warnings, run_checks
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings

TODAY = date(2026, 11, 20)


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
    gemini.default = Reply.computed(prefer_last)
    services = services_with(tmp_path, gemini)
    checks = {c.name: c for c in run_checks(services, TODAY)}
    assert all(c.ok and not c.warnings for c in checks.values()), [c.line() for c in checks.values()]
    rerank = checks["Gemini (rerank)"]
    assert "gemini-3.1-flash-lite answered through the Gemini API" in rerank.detail
    assert "temperature 0.1, thinking MINIMAL, JSON schema of 4 {index, score 1–10, reason}" in rerank.detail
    assert "scored the 4 candidates alike" in checks["Gemini (same scores twice)"].detail
    services.close()


def test_the_check_sends_the_production_request_twice_past_the_rerank_cache(tmp_path, gemini):
    gemini.default = Reply.computed(prefer_last)
    services = services_with(tmp_path, gemini)
    run_checks(services, TODAY)
    first, second = gemini.requests
    assert first.body == second.body and first.model == second.model == "gemini-3.1-flash-lite"
    config = first.generation_config
    thinking = config.get("thinkingConfig", config.get("thinking_config"))  # the SDK sends nested keys as it likes
    assert config["temperature"] == 0.1 and thinking in ({"thinkingLevel": "MINIMAL"}, {"thinking_level": "MINIMAL"})
    schema = config.get("responseSchema", config.get("response_schema"))
    assert config.get("responseMimeType", config.get("response_mime_type")) == "application/json"
    assert schema["type"] == "ARRAY" and schema.get("minItems", schema.get("min_items")) == 4
    assert len(prompt_candidates(first)) == 4 and first.system  # the rerank prompt, system turn included
    assert gemini.flags == []
    services.close()


def test_a_model_that_ignores_temperature_gets_a_warning_and_no_temperature(tmp_path, gemini, capsys):
    gemini.default = Reply.computed(prefer_last)
    services = services_with(tmp_path, gemini, gemini_model="gemini-3.5-flash-lite")
    checks = {c.name: c for c in run_checks(services, TODAY)}
    rerank = checks["Gemini (rerank)"]
    assert rerank.ok and "temperature not sent, thinking MINIMAL" in rerank.detail
    (warning,) = rerank.warnings
    assert "gemini-3.5-flash-lite ignores custom temperature values" in warning and "0.1" in warning
    assert (
        rerank.line().startswith("WARN Gemini (rerank)") and "warning: gemini-3.5-flash-lite ignores" in rerank.line()
    )
    assert all("temperature" not in r.generation_config for r in gemini.requests) and gemini.flags == []
    services.close()


def test_scores_that_differ_between_two_identical_requests_are_a_warning(tmp_path, gemini):
    calls = count()

    def drifting(recorded: Recorded) -> Reply:  # what sampling at temperature 1.0 looks like
        shift = next(calls)
        return Reply.scores(
            [
                {"index": c["index"], "score": 1 + (c["index"] + shift) % 10, "reason": "r"}
                for c in prompt_candidates(recorded)
            ]
        )

    gemini.default = Reply.computed(drifting)
    services = services_with(tmp_path, gemini)
    repeat = next(c for c in run_checks(services, TODAY) if c.name == "Gemini (same scores twice)")
    assert repeat.ok  # the rerank still works: a warning, not a failure that would stop a deploy
    (warning,) = repeat.warnings
    assert warning.startswith("the scores differ (doctor-1: 2.0 then 3.0, doctor-2: 3.0 then 4.0")
    assert "not deterministic" in warning
    services.close()


def test_a_retired_gemini_model_fails_the_check_it_would_otherwise_hide(tmp_path, gemini):
    # what Vertex AI answers for a retired model id: 404, and every rerank would fall back silently
    gemini.default = Reply.error(404, "Publisher Model `gemini-2.5-flash` was not found")
    services = services_with(tmp_path, gemini, gemini_model="gemini-2.5-flash")
    checks = [c for c in run_checks(services, TODAY) if c.name.startswith("Gemini")]
    assert [c.name for c in checks] == ["Gemini (rerank)"]  # no repeat after a failure
    assert not checks[0].ok and "fallback" in checks[0].detail and "gemini-2.5-flash" in checks[0].detail
    services.close()


def test_model_warnings_read_the_retirement_dates_of_the_table():
    flash_lite = GEMINI_MODELS["gemini-3.1-flash-lite"]  # retires 2027-05-07 or later
    assert model_warnings(flash_lite, 0.1, date(2026, 11, 20)) == ()
    (near,) = model_warnings(flash_lite, 0.1, date(2027, 3, 1))
    assert near.startswith("gemini-3.1-flash-lite retires on 2027-05-07 or later (67 days)")
    (passed,) = model_warnings(flash_lite, 0.1, date(2027, 6, 1))
    assert "earliest retirement date, 2027-05-07, has passed" in passed
    retired = model_warnings(GEMINI_MODELS["gemini-2.5-flash"], 0.1, TODAY)
    assert any(w.startswith("gemini-2.5-flash retired on 2026-10-16") for w in retired)
    undocumented = model_warnings(GEMINI_MODELS["gemini-3.8-flash"], 0.1, TODAY)
    assert undocumented == (
        "no page read documents whether gemini-3.8-flash honours temperature: 0.1 is sent, and only the repeat "
        "check shows whether its scores hold still",
    )


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
    out = capsys.readouterr().out
    assert "ok   Gemini (rerank)" in out and "ok   Gemini (same scores twice)" in out
