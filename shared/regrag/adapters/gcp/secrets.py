"""Secrets from Secret Manager, read once per process (one cold start) and never logged.

The client does not verify `payload.data_crc32c`; this store does (google-crc32c) and refuses a payload
whose checksum does not match, so a corrupted key is never sent to a model API. Errors name the secret,
never its value.
"""

from __future__ import annotations

import threading
from typing import Any

from regrag.adapters.gcp.clients import Endpoint, api_retry, secret_manager
from regrag.adapters.gcp.errors import translated
from regrag.domain.errors import Unavailable


class SecretChecksumMismatch(Unavailable):
    """The payload's crc32c does not match the checksum the service sent (corruption in transit)."""

    code = "secret_checksum_mismatch"


class SecretManagerStore:
    """SecretStore on Secret Manager: `get("gemini-api-key")` reads `projects/P/secrets/gemini-api-key/versions/latest`.

    A full resource name (`projects/…/secrets/…/versions/…`) is used as it is.
    """

    def __init__(self, project: str, *, endpoint: Endpoint | None = None, timeout_s: float = 10.0) -> None:
        self.project = project
        self.endpoint = endpoint or Endpoint("secretmanager.googleapis.com")
        self.timeout_s = timeout_s
        self._client: Any = None
        self._values: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never show cached values
        return f"SecretManagerStore(project={self.project!r}, cached={sorted(self._values)})"

    def version_name(self, name: str) -> str:
        if name.startswith("projects/"):
            return name if "/versions/" in name else f"{name}/versions/latest"
        return f"projects/{self.project}/secrets/{name}/versions/latest"

    def get(self, name: str) -> str | None:
        """The secret's text (UTF-8, surrounding whitespace removed), or None if it or its version is absent."""
        with self._lock:
            if name not in self._values:
                self._values[name] = self._access(self.version_name(name))
            return self._values[name]

    def _access(self, version: str) -> str | None:
        import google_crc32c
        from google.api_core import exceptions as gexc

        if self._client is None:
            self._client = secret_manager(self.endpoint)
        try:
            with translated(f"access secret {version}"):
                response = self._client.access_secret_version(
                    request={"name": version}, timeout=self.timeout_s, retry=api_retry(self.timeout_s)
                )
        except gexc.NotFound:
            return None
        data = bytes(response.payload.data)
        # `data_crc32c` is optional in the API: an absent checksum cannot be checked (proto3 presence).
        if "data_crc32c" in response.payload and response.payload.data_crc32c != google_crc32c.value(data):
            raise SecretChecksumMismatch(f"secret {version}: payload crc32c does not match; refusing it")
        return data.decode("utf-8").strip() or None
