"""SecretManagerStore on the gRPC fake of Secret Manager, through the real gapic client."""

from __future__ import annotations

import logging

import grpc
import pytest

from fakes import gcp_env
from regrag.adapters.gcp.clients import Endpoint
from regrag.adapters.gcp.secrets import SecretChecksumMismatch, SecretManagerStore
from regrag.config import Settings
from regrag.domain.errors import Unavailable
from regrag.logs import JsonFormatter
from regrag.wiring.gcp import build_gcp_services

KEY = "AIza-test-key-不要记录"


def store(fake, **kw):
    return SecretManagerStore(gcp_env.PROJECT, endpoint=Endpoint(fake.address, plaintext=True), timeout_s=2, **kw)


def test_the_latest_version_is_read_once_and_checksummed(secrets_fake):
    secrets_fake.add("gemini-once", b"old-key")
    secrets_fake.add("gemini-once", f"  {KEY}\n".encode())
    s = store(secrets_fake)
    assert s.get("gemini-once") == KEY
    assert s.get("gemini-once") == KEY
    assert secrets_fake.calls.count(f"projects/{gcp_env.PROJECT}/secrets/gemini-once/versions/latest") == 1
    assert KEY not in repr(s)


def test_a_corrupted_payload_is_refused_and_a_missing_checksum_accepted(secrets_fake):
    secrets_fake.add("gemini-corrupt", b"key")
    secrets_fake.corrupt.add("gemini-corrupt")
    with pytest.raises(SecretChecksumMismatch, match="crc32c"):
        store(secrets_fake).get("gemini-corrupt")
    secrets_fake.add("gemini-nocrc", b"key")
    secrets_fake.no_checksum.add("gemini-nocrc")
    assert store(secrets_fake).get("gemini-nocrc") == "key"


def test_missing_secrets_are_none_and_denied_ones_raise(secrets_fake):
    assert store(secrets_fake).get("never-created") is None
    secrets_fake.add("gemini-denied", b"key")
    secrets_fake.denied.add("gemini-denied")
    from google.api_core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        store(secrets_fake).get("gemini-denied")


def test_unavailable_is_retried_then_transient(secrets_fake):
    secrets_fake.add("gemini-flaky", b"key")
    secrets_fake.fail_next(grpc.StatusCode.UNAVAILABLE)
    assert store(secrets_fake).get("gemini-flaky") == "key"
    secrets_fake.fail_next(grpc.StatusCode.UNAVAILABLE, times=100)
    with pytest.raises(Unavailable):
        store(secrets_fake).get("gemini-flaky-2")
    secrets_fake._failures.clear()


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_gcp_wiring_reads_the_gemini_key_once_per_cold_start_and_never_logs_it(secrets_fake, caplog):
    secrets_fake.add("regrag-gemini-api-key", KEY.encode())
    names = gcp_env.vertex_names()
    env = gcp_env.gcp_environ(
        bucket="b-docs", state_bucket="b-state", vertex=names, vertex_host="127.0.0.1:1",
        embeddings_url="http://127.0.0.1:1", topic_chunked="c", topic_embedded="e",
        RERANK="true", REGRAG_GEMINI_SECRET="regrag-gemini-api-key",
        REGRAG_SECRETMANAGER_EMULATOR_HOST=secrets_fake.address, LOG_LEVEL="DEBUG",
    )  # fmt: skip
    before = len(secrets_fake.calls)
    collect = Collect()
    logger = logging.getLogger("regrag")  # our JSON logs do not propagate to the root logger
    logger.addHandler(collect)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG):
            services = build_gcp_services(Settings.from_env(env))
            services.reranker.rerank("问题", [], 3)
    finally:
        logger.removeHandler(collect)
        logger.setLevel(level)
    assert len(secrets_fake.calls) == before + 1
    assert type(services.reranker).__name__ == "LlmReranker"  # Gemini reranks with the key it was given
    logged = "\n".join(collect.lines) + caplog.text
    assert KEY not in logged and KEY not in repr(services.settings) and KEY not in repr(services)
