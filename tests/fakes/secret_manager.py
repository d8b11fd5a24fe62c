"""An in-process gRPC fake of Secret Manager's AccessSecretVersion, driven by the real gapic client.

It resolves `versions/latest` to the newest enabled version and returns the resolved name; it sends
`data_crc32c` (google-crc32c) the way the service does, or a wrong one (`corrupt`), or none (`no_checksum`);
an unknown secret or version is NOT_FOUND, a name in `denied` PERMISSION_DENIED; the routing header must name
the version. `calls` counts requests, so tests can tell how often a secret was read.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import google_crc32c
import grpc
from google.cloud import secretmanager_v1 as sm

from fakes.grpc_server import serve_unary


@dataclass
class SecretManagerFake:
    project: str = "test-project"
    secrets: dict[str, list[bytes]] = field(default_factory=dict)  # secret id → versions, oldest first
    corrupt: set[str] = field(default_factory=set)
    no_checksum: set[str] = field(default_factory=set)
    denied: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)
    _failures: deque[grpc.StatusCode] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: grpc.Server | None = None
    address: str = ""

    def add(self, secret_id: str, value: bytes) -> None:
        with self._lock:
            self.secrets.setdefault(secret_id, []).append(value)

    def fail_next(self, code: grpc.StatusCode, times: int = 1) -> None:
        with self._lock:
            self._failures.extend([code] * times)

    def start(self) -> str:
        service = {"AccessSecretVersion": (self._access, sm.AccessSecretVersionRequest, sm.AccessSecretVersionResponse)}
        self._server, self.address = serve_unary(
            {"google.cloud.secretmanager.v1.SecretManagerService": service}, thread_name_prefix="sm-fake"
        )
        return self.address

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None)
            self._server = None

    def _access(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self._lock:
            self.calls.append(request.name)
            failure = self._failures.popleft() if self._failures else None
        if failure is not None:
            context.abort(failure, f"injected {failure.name}")
        params = urllib.parse.parse_qs(str(dict(context.invocation_metadata()).get("x-goog-request-params", "")))
        if params.get("name", [None])[0] != request.name:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "routing header does not name the version")
        parts = request.name.split("/")
        if len(parts) != 6 or parts[0] != "projects" or parts[2] != "secrets" or parts[4] != "versions":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed secret version name {request.name!r}")
        _, project, _, secret_id, _, version = parts
        if secret_id in self.denied:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, f"Permission denied on secret {secret_id}")
        versions = self.secrets.get(secret_id) if project == self.project else None
        if not versions:
            context.abort(grpc.StatusCode.NOT_FOUND, f"Secret [{request.name}] not found or has no versions")
        number = len(versions) if version == "latest" else int(version) if version.isdigit() else 0
        if not 1 <= number <= len(versions):
            context.abort(grpc.StatusCode.NOT_FOUND, f"Secret Version [{request.name}] not found")
        data = versions[number - 1]
        payload = sm.SecretPayload(data=data)
        if secret_id not in self.no_checksum:
            crc = google_crc32c.value(data)
            payload.data_crc32c = crc ^ 1 if secret_id in self.corrupt else crc
        return sm.AccessSecretVersionResponse(
            name=f"projects/{project}/secrets/{secret_id}/versions/{number}", payload=payload
        )
