"""An Objects layer that counts what it is asked (reads, lists, writes, deletes) and passes everything on."""

from __future__ import annotations

from collections import Counter
from typing import Any


class CountingObjects:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def reset(self) -> Counter[str]:
        seen, self.calls = self.calls, Counter()
        return seen

    def read_optional(self, name: str) -> Any:
        self.calls["read"] += 1
        return self.inner.read_optional(name)

    def write(self, name: str, data: bytes, metadata: Any = None, **kw: Any) -> Any:
        self.calls["write"] += 1
        return self.inner.write(name, data, metadata, **kw)

    def delete(self, name: str, **kw: Any) -> None:
        self.calls["delete"] += 1
        self.inner.delete(name, **kw)

    def list(self, prefix: str = "", **kw: Any) -> Any:
        self.calls["list"] += 1
        listed = self.inner.list(prefix, **kw)
        self.calls["listed objects"] += len(listed)
        return listed

    def scan(self, prefix: str = "", **kw: Any) -> Any:
        self.calls["list"] += 1
        listed = self.inner.scan(prefix, **kw)
        self.calls["listed objects"] += len(listed)
        return listed
