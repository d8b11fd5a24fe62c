"""An in-memory twin of the bucket operations the chunk map uses, with real compare-and-swap.

The storage emulator ignores every precondition (`if_generation_match`), so the chunk map's lost-race
handling can only be exercised here. `before_write` / `before_read` let a test run another writer at the
worst moment (e.g. after a writer read the head, before its conditional write lands).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable

from regrag.adapters.gcp.blobstore import GenerationMismatch, Listed
from regrag.domain.errors import NotFound
from regrag.ports import Blob, BlobInfo


def glob_regex(pattern: str) -> re.Pattern[str]:
    """GCS matchGlob: `*` within one path segment, `**` across segments, `?` one character."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


class MemoryObjects:
    def __init__(self) -> None:
        self.objects: dict[str, Blob] = {}
        self.reads = 0
        self.writes = 0
        self.conflicts = 0
        self.before_write: Callable[[str], None] | None = None
        self.before_read: Callable[[str], None] | None = None
        self._generations = itertools.count(1_000_001)
        self._lock = threading.RLock()

    def read_optional(self, name: str) -> Blob | None:
        hook = self.before_read
        if hook is not None:
            hook(name)
        with self._lock:
            self.reads += 1
            return self.objects.get(name)

    def write(
        self,
        name: str,
        data: bytes,
        metadata: dict[str, str] | None = None,
        *,
        content_type: str | None = None,
        if_generation_match: int | None = None,
    ) -> BlobInfo:
        hook = self.before_write
        if hook is not None:
            hook(name)
        with self._lock:
            current = self.objects.get(name)
            if if_generation_match is not None and (current.generation if current else 0) != if_generation_match:
                self.conflicts += 1
                raise GenerationMismatch(f"{name} is not at generation {if_generation_match}")
            generation = next(self._generations)
            self.objects[name] = Blob(name, bytes(data), generation, dict(metadata or {}), content_type)
            self.writes += 1
            return BlobInfo(name, generation, len(data))

    def delete(self, name: str, *, if_generation_match: int | None = None) -> None:
        with self._lock:
            current = self.objects.get(name)
            if current is None:
                raise NotFound(f"{name} not found")
            if if_generation_match is not None and current.generation != if_generation_match:
                self.conflicts += 1
                raise GenerationMismatch(f"{name} is not at generation {if_generation_match}")
            del self.objects[name]

    def scan(self, prefix: str = "", *, match_glob: str | None = None) -> list[Listed]:
        regex = glob_regex(match_glob) if match_glob else None
        with self._lock:
            return [
                Listed(BlobInfo(b.name, b.generation, len(b.data)), dict(b.metadata))
                for name, b in sorted(self.objects.items())
                if name.startswith(prefix) and (regex is None or regex.match(name))
            ]

    def list(self, prefix: str = "", *, match_glob: str | None = None) -> list[BlobInfo]:
        return [item.info for item in self.scan(prefix, match_glob=match_glob)]
