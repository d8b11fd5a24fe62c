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
