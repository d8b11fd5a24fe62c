"""The one place Google clients are built, so that tests swap only where they connect.

Production: the service's own endpoint with application default credentials (gapic clients get
`client_options={"api_endpoint": host}`). Emulators and test fakes: a plaintext gRPC channel or an `http://`
base URL and no credentials, selected by an `*_EMULATOR_HOST`-style setting, the convention Google's own
clients follow for STORAGE_EMULATOR_HOST and PUBSUB_EMULATOR_HOST (which google-cloud-storage and
google-cloud-pubsub read by themselves).

Every import of a Google library happens inside these functions: local mode never loads one, and a function
only loads the clients it uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

# gRPC's default 4 MiB receive limit is below a batch of 1,500 × 768-dim datapoints; the real clients lift it.
_UNLIMITED = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]


@dataclass(frozen=True)
class Endpoint:
    """Where a gRPC service answers: `host` is "name:port" or a Google API host; `plaintext` for fakes only."""

    host: str
    plaintext: bool = False


T = TypeVar("T")


def gapic(client_cls: Any, transport_cls: Any, endpoint: Endpoint) -> Any:
    """A generated (gapic) client for `endpoint`; a plaintext channel needs and sends no credentials."""
    if endpoint.plaintext:
        import grpc

        channel = grpc.insecure_channel(endpoint.host, options=_UNLIMITED)
        return client_cls(transport=transport_cls(channel=channel))
    return client_cls(client_options={"api_endpoint": endpoint.host})


def index_service(endpoint: Endpoint) -> Any:
    """aiplatform v1 IndexService (UpsertDatapoints, RemoveDatapoints), regional endpoint."""
    from google.cloud.aiplatform_v1.services.index_service import IndexServiceClient
    from google.cloud.aiplatform_v1.services.index_service.transports.grpc import IndexServiceGrpcTransport

    return gapic(IndexServiceClient, IndexServiceGrpcTransport, endpoint)


def match_service(endpoint: Endpoint) -> Any:
    """aiplatform v1 MatchService (FindNeighbors, ReadIndexDatapoints) on the index endpoint's public domain."""
    from google.cloud.aiplatform_v1.services.match_service import MatchServiceClient
    from google.cloud.aiplatform_v1.services.match_service.transports.grpc import MatchServiceGrpcTransport

    return gapic(MatchServiceClient, MatchServiceGrpcTransport, endpoint)


def secret_manager(endpoint: Endpoint) -> Any:
    """Secret Manager v1 (AccessSecretVersion)."""
    from google.cloud.secretmanager_v1.services.secret_manager_service import SecretManagerServiceClient
    from google.cloud.secretmanager_v1.services.secret_manager_service.transports.grpc import (
        SecretManagerServiceGrpcTransport,
    )

    return gapic(SecretManagerServiceClient, SecretManagerServiceGrpcTransport, endpoint)


def document_ai(endpoint: Endpoint) -> Any:
    """Document AI v1 DocumentProcessorService (ProcessDocument, BatchProcessDocuments and its operations) on the
    processor's regional endpoint (`{location}-documentai.googleapis.com`)."""
    from google.cloud.documentai_v1.services.document_processor_service import DocumentProcessorServiceClient
    from google.cloud.documentai_v1.services.document_processor_service.transports.grpc import (
        DocumentProcessorServiceGrpcTransport,
    )

    return gapic(DocumentProcessorServiceClient, DocumentProcessorServiceGrpcTransport, endpoint)


def storage_client(project: str | None) -> Any:
    """google-cloud-storage; with STORAGE_EMULATOR_HOST set it talks to the emulator without credentials."""
    from google.cloud.storage import Client

    return Client(project=project)


def publisher_client() -> Any:
    """google-cloud-pubsub publisher, one message per batch request (our messages are up to 9 MB each)."""
    from google.cloud.pubsub_v1 import PublisherClient, types

    return PublisherClient(batch_settings=types.BatchSettings(max_messages=1))


def genai_vertex_client(
    project: str, location: str, base_url: str | None, timeout_s: float, retry_options: Any = None
) -> Any:
    """google-genai in Vertex AI mode. A `base_url` (a fake) gets a static token: the SDK refuses anonymous
    credentials, and the fake needs none."""
    from google import genai
    from google.genai import types

    credentials = None
    if base_url:
        from google.oauth2.credentials import Credentials

        credentials = Credentials(token="emulator")  # not a secret: fakes accept any bearer token
    return genai.Client(
        vertexai=True,
        project=project,
        location=location,
        credentials=credentials,
        # retry_options: the SDK retries what they name (VertexEmbedder: 429 and 503); unset, one attempt.
        http_options=types.HttpOptions(
            base_url=base_url,
            api_version="v1",
            timeout=max(1, round(timeout_s * 1000)),
            retry_options=retry_options,
        ),
    )


def api_retry(deadline_s: float, initial_s: float = 0.2, maximum_s: float = 4.0) -> Any:
    """An api_core Retry for idempotent calls: UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED and
    INTERNAL only, exponential backoff with jitter, bounded by `deadline_s` in total."""
    from google.api_core import exceptions as gexc
    from google.api_core import retry as gretry

    return gretry.Retry(
        predicate=gretry.if_exception_type(
            gexc.ServiceUnavailable, gexc.TooManyRequests, gexc.DeadlineExceeded, gexc.InternalServerError
        ),
        initial=initial_s,
        maximum=maximum_s,
        multiplier=2.0,
        timeout=deadline_s,
    )


class LostRace(Exception):
    """A compare-and-swap write found the object changed since it was read (HTTP 412)."""


def until_written(
    attempt: Callable[[], T],
    *,
    attempts: int,
    initial_s: float,
    maximum_s: float,
    exhausted: Exception,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `attempt` (read, change, write with if_generation_match) until it does not raise LostRace, at most
    `attempts` times, sleeping between tries by api-core's truncated exponential backoff with full jitter
    (google.api_core.retry.exponential_sleep_generator: writers that collided spread out instead of colliding
    again in lockstep). Raises `exhausted` when every attempt lost its race."""
    from google.api_core.retry import exponential_sleep_generator

    delays = exponential_sleep_generator(initial_s, maximum_s)
    for n in range(attempts):
        try:
            return attempt()
        except LostRace:
            if n + 1 < attempts:
                sleep(next(delays))
    raise exhausted
