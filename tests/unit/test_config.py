from pathlib import Path

import pytest

from regrag.config import ConfigError, Settings


def test_defaults_are_the_local_embedded_stack():
    s = Settings.from_env({})
    assert (s.mode, s.embedder, s.top_k, s.rerank) == ("local", "e5", 12, True)
    assert s.index_path == Path(".regrag/index.sqlite")


def test_values_are_parsed_once_into_types():
    s = Settings.from_env(
        {"REGRAG_DATA_DIR": "/tmp/x", "REGRAG_TOP_K": "20", "RERANK": "false", "REGRAG_RELEVANCE_FLOOR": "0.4"}
    )
    assert s.data_dir == Path("/tmp/x") and s.top_k == 20 and s.rerank is False and s.relevance_floor == 0.4
    with pytest.raises(AttributeError):
        s.top_k = 3  # frozen


def test_every_problem_is_named_in_one_error_and_secrets_are_hidden():
    with pytest.raises(ConfigError) as err:
        Settings.from_env({"REGRAG_MODE": "cloud", "REGRAG_TOP_K": "many", "RERANK": "maybe", "REGRAG_TOP_N": "1"})
    text = str(err.value)
    for name in ("REGRAG_MODE", "REGRAG_TOP_K", "RERANK"):
        assert name in text
    assert Settings.from_env({"GEMINI_API_KEY": "secret"}).redacted()["gemini_api_key"] == "<set>"
    assert "secret" not in repr(Settings.from_env({}).redacted())


def test_bounds():
    with pytest.raises(ConfigError, match="must be ≤ 100"):
        Settings.from_env({"REGRAG_TOP_K": "1000"})


def test_secrets_never_appear_in_repr():
    s = Settings.from_env({"GEMINI_API_KEY": "AIza-very-secret", "REGRAG_ADMIN_TOKEN": "tok-secret"})
    assert "very-secret" not in repr(s) and "tok-secret" not in repr(s)
