"""Errors that decide what the platform does with an event or a request.

`PermanentError`: the input can never succeed (malformed, unsupported, invalid). Event functions log it,
record it and acknowledge the event; HTTP functions answer 4xx. `TransientError`: it may succeed later (429,
503, deadline, lock). Event functions raise so the platform retries; HTTP functions answer 503.
"""

from __future__ import annotations


class RegragError(Exception):
    """Base class; `code` is a stable, machine-readable reason."""

    code = "error"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, object] | None = None) -> None:
        super().__init__(message)
        if code:
            self.code = code
        self.details = details or {}  # extra JSON fields for the error body (e.g. corpus_stats on a 503)


class PermanentError(RegragError):
    """Retrying cannot help."""

    code = "permanent"


class InvalidInput(PermanentError):
    """A request or event that does not meet the contract (HTTP 400)."""

    code = "invalid_input"


class UnsupportedDocument(PermanentError):
    """A file that cannot be read as a regulation: empty, binary, unknown format, undecodable."""

    code = "unsupported_document"


class NotFound(PermanentError):
    """A named thing that does not exist (HTTP 404)."""

    code = "not_found"


class Unauthorized(PermanentError):
    """No credentials (HTTP 401)."""

    code = "unauthorized"


class Forbidden(PermanentError):
    """Credentials that do not allow this (HTTP 403)."""

    code = "forbidden"


class TransientError(RegragError):
    """May succeed on retry."""

    code = "transient"


class Unavailable(TransientError):
    """No backend could answer (HTTP 503)."""

    code = "unavailable"


class StorageError(RegragError):
    """This machine's files refused a read or write: a full disk, a read-only folder, a damaged database.

    Neither the input's fault (permanent: recording the document as bad would be wrong) nor something a retry
    fixes (transient: five retries on a full disk only fill the log). A batch stops at once with the message,
    which names the file and what to do; nothing half-written stays behind (each document is one transaction).
    HTTP 503. `kind`: full | read_only | damaged | io.
    """

    code = "storage"

    def __init__(self, message: str, *, path: str, kind: str) -> None:
        super().__init__(message, code=f"storage_{kind}", details={"path": path})
        self.path = path
        self.kind = kind
