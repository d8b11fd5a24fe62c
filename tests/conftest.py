"""Shared fixtures: an isolated environment per test, apps on the local adapters, the sample corpus."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import time
from collections.abc import Collection, Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from regrag.config import Settings
from regrag.domain.models import Filters
from regrag.domain.results import Answer, Candidate
from regrag.entrypoints import handlers
from regrag.query.answer import QueryOptions, compose
from regrag.query.judge import RelevanceFloor
from regrag.query.question import analyse
from regrag.services import Services
from regrag.wiring import build_services, reset_services
from regrag.wiring.models import query_options_from

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "shared" / "sample_corpus"
FIXTURES = ROOT / "tests" / "fixtures"
FORMATS = FIXTURES / "formats"


def read_path_options(top_n: int = 5, max_bullets: int = 4, floor: RelevanceFloor | None = None) -> QueryOptions:
    """The product's read-path options (Settings' defaults), with the quoting limits and floor a test sets."""
    options = query_options_from(Settings())
    return replace(
        options,
        quote=replace(options.quote, top_n=top_n, max_bullets=max_bullets),
        judge=replace(options.judge, top_n=top_n, floor=floor or options.judge.floor),
    )


def compose_answer(
    question: str,
    candidates: list[Candidate],
    filters: Filters | None = None,
    *,
    source_text: Any,
    top_n: int = 5,
    max_bullets: int = 4,
    floor: RelevanceFloor | None = None,
) -> Answer:
    """The `compose` function's answer for candidates named by id: the read path after retrieval, on its own."""
    q = analyse(question, filters or Filters())
    return compose(q, candidates, read_path_options(top_n, max_bullets, floor), source_text=source_text)


def bench_module(name: str) -> ModuleType:
    """A script of bench/ loaded as a module (bench/ is no package; its scripts import `_common` from beside them)."""
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_manifest() -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (SAMPLE / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return {r["doc_id"]: r for r in rows}


def sample_text(doc_id: str) -> str:
    return (SAMPLE / "docs" / f"{doc_id}.md").read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test sees the developer's REGRAG_* settings, keys or data dir; the process-wide services are rebuilt."""
    for key in list(os.environ):
        if key.startswith(("REGRAG_", "GEMINI_", "GOOGLE_API_KEY", "RERANK", "STORAGE_EMULATOR", "PUBSUB_EMULATOR")):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    reset_services()
    yield
    reset_services()


class SlowOrBrokenIndex:
    """Wraps a VectorIndex: searches of some corpora sleep (a slow backend) or fail (a broken one)."""

    def __init__(
        self,
        inner: Any,
        slow: Collection[str] = (),
        broken: Collection[str] = (),
        delay_s: float = 1.0,
    ) -> None:
        self.inner, self.slow, self.broken, self.delay_s = inner, set(slow), set(broken), delay_s

    def search(self, vector: Any, filters: Any, k: int) -> Any:
        corpus = set(filters.corpus)
        if corpus & self.broken:
            raise RuntimeError("index shard unavailable")
        if corpus & self.slow:
            time.sleep(self.delay_s)
        return self.inner.search(vector, filters, k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def with_vectors(services: Services, vectors: Any) -> Services:
    """The same services with another VectorIndex in its retriever (for SlowOrBrokenIndex)."""
    return replace(services, vectors=vectors, retriever=replace(services.retriever, vectors=vectors))


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"data_dir": tmp_path / "data", "embedder": "hash"}
    values.update(overrides)
    return Settings.from_env({}, **values)


@pytest.fixture
def hash_services(tmp_path: Path) -> Iterator[Services]:
    """Services on the local adapters with the hashing embedder (instant, no semantics)."""
    services = build_services(make_settings(tmp_path))
    yield services
    services.close()


def upload(services: Services, src: Path, name: str, sidecar: dict[str, Any] | None = None) -> Any:
    """Put a file (and its sidecar) in the local bucket and raise the finalize event, as GCS would."""
    if sidecar is not None:
        services.blobs.write(name + ".meta.json", json.dumps(sidecar, ensure_ascii=False).encode("utf-8"))
    info = services.blobs.write(name, src.read_bytes() if isinstance(src, Path) else src)
    return handlers.ingest_event(services, storage_event(name, info.generation))


def storage_event(name: str, generation: int, kind: str = "finalized", bucket: str = "local") -> dict[str, Any]:
    return {
        "specversion": "1.0",
        "type": f"google.cloud.storage.object.v1.{kind}",
        "source": f"//storage.googleapis.com/projects/_/buckets/{bucket}",
        "id": f"evt-{name}-{generation}",
        "data": {"bucket": bucket, "name": name, "generation": str(generation)},
    }


def ingest_sample(services: Services, doc_ids: list[str] | None = None) -> None:
    manifest = sample_manifest()
    for doc_id in doc_ids or list(manifest):
        record = {k: v for k, v in manifest[doc_id].items() if k not in ("file", "chars", "articles")}
        result = upload(services, SAMPLE / manifest[doc_id]["file"], manifest[doc_id]["file"], record)
        assert result is not None and result.status == "chunked", (doc_id, result)


@pytest.fixture(scope="session")
def e5_sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the whole sample corpus ingested with the real e5 embedder (once per session).

    The vector cache is shared through RG_TEST_VECTOR_CACHE when set (developer machines), so
    re-runs do not embed again; CI starts empty and embeds the sample once (about 2 minutes on 2 cores).
    """
    data = tmp_path_factory.mktemp("e5-sample")
    cache = os.environ.get("RG_TEST_VECTOR_CACHE") or str(data / "vector-cache.sqlite")
    settings = Settings.from_env({}, data_dir=data, embedder="e5", vector_cache=Path(cache))
    services = build_services(settings)
    try:
        ingest_sample(services)
        assert not services.bus.dead_letters
    finally:
        services.close()
    return data


@pytest.fixture
def e5_services(e5_sample_dir: Path, tmp_path: Path) -> Iterator[Services]:
    """Services on the sample corpus with e5, on a private copy of the session's data dir (tests may mutate it)."""
    data = tmp_path / "e5"
    shutil.copytree(e5_sample_dir, data)
    cache = os.environ.get("RG_TEST_VECTOR_CACHE")
    settings = Settings.from_env({}, data_dir=data, embedder="e5", **({"vector_cache": Path(cache)} if cache else {}))
    services = build_services(settings)
    yield services
    services.close()


def admin_call(services: Services, method: str, path: str, authorization: str | None, body: Any = None) -> Any:
    """An admin route through the HTTP routes (credentials travel in headers): (status, JSON body)."""
    from werkzeug.test import Client

    from regrag.api.server import wsgi_app

    headers = {"Authorization": authorization} if authorization else {}
    response = Client(wsgi_app(services)).open(path, method=method, headers=headers, json=body)
    return response.status_code, response.get_json()
