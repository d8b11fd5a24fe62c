"""Emulators and fakes for the GCP adapters: started once per session, stopped at its end, never orphaned.

Tests that need the Pub/Sub emulator skip with the reason when gcloud, Java or the emulator component is
missing (pytest -ra prints it in the summary); CI here has them, and tests/gcp/install.sh installs Java on a
fresh machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # before grpc loads: no INFO lines when a fake server stops

import pytest

from fakes import gcp_env
from fakes.emulators import pubsub_launcher, start_gcs, start_pubsub
from fakes.secret_manager import SecretManagerFake
from fakes.vector_search import VectorSearchFake
from fakes.vertex_embeddings import EmbeddingsFake


@pytest.fixture(scope="session")
def gcs_host() -> Iterator[str]:
    emulator = start_gcs()
    yield emulator.host
    emulator.stop()


@pytest.fixture(scope="session")
def pubsub_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    launcher, reason = pubsub_launcher()
    if launcher is None:
        pytest.skip(f"Pub/Sub emulator unavailable: {reason}")
    emulator = start_pubsub(launcher, tmp_path_factory.mktemp("pubsub-emulator"))
    yield emulator.host
    emulator.stop()


@pytest.fixture(scope="session")
def vector_fake() -> Iterator[VectorSearchFake]:
    fake = VectorSearchFake()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def embeddings_fake() -> Iterator[EmbeddingsFake]:
    fake = EmbeddingsFake()
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def secrets_fake() -> Iterator[SecretManagerFake]:
    fake = SecretManagerFake(project=gcp_env.PROJECT)
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def gcs(gcs_host: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The storage emulator, visible to clients built in this test."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_host)
    return gcs_host


@pytest.fixture
def bucket(gcs: str) -> str:
    return gcp_env.create_bucket(gcs)


@pytest.fixture
def pubsub(pubsub_host: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PUBSUB_EMULATOR_HOST", pubsub_host)
    return pubsub_host


@pytest.fixture
def embeddings(embeddings_fake: EmbeddingsFake) -> Iterator[EmbeddingsFake]:
    embeddings_fake.reset()
    yield embeddings_fake
    embeddings_fake.reset()
