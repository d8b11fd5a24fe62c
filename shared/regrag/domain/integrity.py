"""What an integrity check finds wrong with the stored index, and how it is put right.

Stores find (regrag.ports.IntegrityCheck); `regrag doctor` and GET /healthz report; `regrag repair` acts on each
finding by its `remedy`:

- `store`: the store fixes it alone, from what it holds (derived rows, saved search files, cache entries, a
  version link whose other end is gone);
- `reingest`: the documents named are read again from the bucket (the source of truth) and written whole;
- `delete`: the documents named have lost their bucket object (an interrupted delete): the delete is completed;
- `rebuild`: the whole file is unreadable: it is set aside and the index is rebuilt from the bucket;
- `none`: nothing to repair (a warning: a version claim that waits for the version it names).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"

STORE = "store"
REINGEST = "reingest"
DELETE = "delete"
REBUILD = "rebuild"
NONE = "none"


@dataclass(frozen=True)
class Finding:
    """One thing wrong: its kind, what it concerns (a document id, a file), in words, and what repairs it."""

    kind: str
    subject: str
    detail: str
    remedy: str
    doc_ids: tuple[str, ...] = ()
    severity: str = ERROR
    data: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "subject": self.subject,
            "detail": self.detail,
            "remedy": self.remedy,
            "doc_ids": list(self.doc_ids),
            "severity": self.severity,
        }
