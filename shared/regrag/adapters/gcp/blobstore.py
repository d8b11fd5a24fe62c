"""The bucket on Cloud Storage (google-cloud-storage): objects with their generation and custom metadata.

Custom metadata travels as `x-goog-meta-*` HTTP headers on downloads, which must be Latin-1; the storage
emulator even drops the connection on anything else. So values are kept ASCII: non-ASCII characters are
percent-encoded on write (ingest decodes them), and Chinese titles belong in the JSON sidecar
(`<object>.meta.json`), not in metadata.

Beyond the BlobStore port, the chunk map needs compare-and-swap writes (`if_generation_match`) and listings
with glob patterns and metadata; `GenerationMismatch` reports a lost race (HTTP 412).
"""

from __future__ import annotations

import builtins
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from regrag.adapters.gcp.clients import storage_client
from regrag.adapters.gcp.errors import translated
from regrag.domain.errors import InvalidInput, NotFound, TransientError
from regrag.ports import Blob, BlobInfo

_ASCII_SAFE = "".join(chr(c) for c in range(0x20, 0x7F))  # printable ASCII stays; '%' too, so encoding is idempotent
_READ_ATTEMPTS = 3


class GenerationMismatch(TransientError):
    """A conditional write or delete lost a race: the object's generation was not the expected one."""

    code = "generation_mismatch"


def ascii_metadata(metadata: dict[str, str] | None) -> dict[str, str]:
    """Custom metadata safe for GCS headers: ASCII keys, values with non-ASCII characters percent-encoded."""
    out: dict[str, str] = {}
    for key, value in (metadata or {}).items():
        if not key or not key.isascii() or not all(c.isalnum() or c in "-_." for c in key):
            raise InvalidInput(f"metadata key {key!r} must be ASCII letters, digits, '-', '_' or '.'")
        out[key] = urllib.parse.quote(str(value), safe=_ASCII_SAFE)
    return out


@dataclass(frozen=True)
class Listed:
    """A listed object with its custom metadata (the listing returns it; no extra request)."""

    info: BlobInfo
    metadata: dict[str, str] = field(default_factory=dict)


class GcsBlobStore:
    """BlobStore on one bucket. The client is created on first use, so building it costs no import or call."""

    def __init__(self, bucket: str, *, project: str | None = None, timeout_s: float = 30.0) -> None:
        self.bucket_name = bucket
        self.project = project
        self.timeout_s = timeout_s
        self._bucket: Any = None
        self._lock = threading.Lock()

    # --- plumbing -----------------------------------------------------------------------------------------

    def _get_bucket(self) -> Any:
        if self._bucket is None:
            with self._lock:
                if self._bucket is None:
                    self._bucket = storage_client(self.project).bucket(self.bucket_name)
        return self._bucket

    def _retry(self) -> Any:
        # The default retry runs for 120 s; a function has a deadline of its own, so bound it.
        from google.cloud.storage.retry import DEFAULT_RETRY

        return DEFAULT_RETRY.with_timeout(self.timeout_s).with_delay(initial=0.2, maximum=4.0)

    def _where(self, name: str) -> str:
        return f"gs://{self.bucket_name}/{name}"

    # --- BlobStore ----------------------------------------------------------------------------------------

    def read(self, name: str) -> Blob:
        """The object with its generation and custom metadata; NotFound if it does not exist."""
        blob = self.read_optional(name)
        if blob is None:
            raise NotFound(f"object {self._where(name)} not found")
        return blob

    def read_optional(self, name: str) -> Blob | None:
        """The object's bytes, generation and metadata, all of one generation (a concurrent overwrite between
        the metadata request and the download is detected and the read repeated)."""
        from google.api_core import exceptions as gexc

        for _ in range(_READ_ATTEMPTS):
            with translated(f"read {self._where(name)}"):
                handle = self._get_bucket().get_blob(name, timeout=self.timeout_s, retry=self._retry())
                if handle is None:
                    return None
                # Taken before the download, which overwrites them from its response headers (the emulator
                # sends no x-goog-generation).
                generation, metadata, content_type = (
                    int(handle.generation),
                    dict(handle.metadata or {}),
                    handle.content_type,
                )
                try:
                    data = handle.download_as_bytes(
                        if_generation_match=generation, timeout=self.timeout_s, retry=self._retry()
                    )
                except gexc.PreconditionFailed:
                    continue  # overwritten between the two requests: read the new generation
                except gexc.NotFound:
                    return None  # deleted between the two requests
            return Blob(name, data, generation, metadata, content_type)
        raise GenerationMismatch(f"{self._where(name)} kept changing while being read")

    def write(
        self,
        name: str,
        data: bytes,
        metadata: dict[str, str] | None = None,
        *,
        content_type: str | None = None,
        if_generation_match: int | None = None,
    ) -> BlobInfo:
        """Upload `data`; with `if_generation_match` only if the object is still at that generation (0: absent)."""
        from google.api_core import exceptions as gexc

        handle = self._get_bucket().blob(name)
        handle.metadata = ascii_metadata(metadata) or None
        try:
            with translated(f"write {self._where(name)}"):
                handle.upload_from_string(
                    data,
                    content_type=content_type or "application/octet-stream",
                    if_generation_match=if_generation_match,
                    timeout=self.timeout_s,
                    retry=self._retry(),
                )
        except gexc.PreconditionFailed as exc:
            raise GenerationMismatch(f"{self._where(name)} is no longer at generation {if_generation_match}") from exc
        return BlobInfo(name, int(handle.generation), len(data))

    def delete(self, name: str, *, if_generation_match: int | None = None) -> None:
        """Delete the object (only at that generation, if given); NotFound if it does not exist."""
        from google.api_core import exceptions as gexc

        try:
            with translated(f"delete {self._where(name)}"):
                self._get_bucket().delete_blob(
                    name, if_generation_match=if_generation_match, timeout=self.timeout_s, retry=self._retry()
                )
        except gexc.NotFound as exc:
            raise NotFound(f"object {self._where(name)} not found") from exc
        except gexc.PreconditionFailed as exc:
            raise GenerationMismatch(f"{self._where(name)} is no longer at generation {if_generation_match}") from exc

    def list(self, prefix: str = "", *, match_glob: str | None = None) -> list[BlobInfo]:
        """Live objects under `prefix`, by name."""
        return [item.info for item in self.scan(prefix, match_glob=match_glob)]

    def scan(self, prefix: str = "", *, match_glob: str | None = None) -> builtins.list[Listed]:
        """Objects under `prefix` (optionally matching a glob such as `docs/*/head.json`), by name, with metadata."""
        with translated(f"list {self._where(prefix)}"):
            blobs = self._get_bucket().client.list_blobs(
                self.bucket_name,
                prefix=prefix or None,
                match_glob=match_glob,
                timeout=self.timeout_s,
                retry=self._retry(),
            )
            items = [
                Listed(BlobInfo(b.name, int(b.generation), int(b.size or 0)), dict(b.metadata or {})) for b in blobs
            ]
        return sorted(items, key=lambda item: item.info.name)


class PrefixedBlobStore:
    """A BlobStore view of `prefix` in another BlobStore: names are relative to the prefix.

    The eval question files and reports live under the state prefix of the state bucket (never in the uploads
    bucket, whose every new object triggers `ingest`), while `/admin/eval` names them as it does locally,
    relative to the store's root (`evals/dev.jsonl`).
    """

    def __init__(self, inner: GcsBlobStore, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix

    def _strip(self, info: BlobInfo) -> BlobInfo:
        return BlobInfo(info.name[len(self.prefix) :], info.generation, info.size)

    def read(self, name: str) -> Blob:
        blob = self.inner.read(self.prefix + name)
        return Blob(name, blob.data, blob.generation, blob.metadata, blob.content_type)

    def read_optional(self, name: str) -> Blob | None:
        blob = self.inner.read_optional(self.prefix + name)
        return None if blob is None else Blob(name, blob.data, blob.generation, blob.metadata, blob.content_type)

    def write(self, name: str, data: bytes, metadata: dict[str, str] | None = None) -> BlobInfo:
        return self._strip(self.inner.write(self.prefix + name, data, metadata))

    def delete(self, name: str) -> None:
        self.inner.delete(self.prefix + name)

    def list(self, prefix: str = "") -> builtins.list[BlobInfo]:
        return [self._strip(info) for info in self.inner.list(self.prefix + prefix)]
