"""Errors of a text-model call (the `Generator` port), one class per way a call can fail.

Each class has a stable `reason` (timeout, connection, rate_limited, server_error, client_error, blocked,
empty, invalid_json, truncated) that callers put in statuses and logs. Callers that can do without the model
(the reranker) catch `GenerationError` and degrade; elsewhere the Transient/Permanent base decides the HTTP
status (503 or 422) as for every other error.
"""

from __future__ import annotations

from typing import Any

from regrag.domain.errors import PermanentError, RegragError, TransientError


class GenerationError(RegragError):
    """The model gave no usable answer. `details`: what the service said (HTTP status, finish or block
    reason), for logs; never document text or keys."""

    reason = "error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, code=f"generation_{self.reason}")
        self.details = dict(details or {})


class GenerationTimeout(GenerationError, TransientError):
    """The client's deadline passed (or the service answered 504 DEADLINE_EXCEEDED)."""

    reason = "timeout"


class GenerationConnectionError(GenerationError, TransientError):
    """No HTTP answer: connection refused or reset, DNS, TLS."""

    reason = "connection"


class GenerationRateLimited(GenerationError, TransientError):
    """HTTP 429: quota or rate limit."""

    reason = "rate_limited"


class GenerationServerError(GenerationError, TransientError):
    """HTTP 5xx, or a 2xx whose body is not the service's JSON."""

    reason = "server_error"


class GenerationRejected(GenerationError, PermanentError):
    """HTTP 4xx other than 429: bad key, unknown model, invalid request. Retrying the same call cannot help."""

    reason = "client_error"


class GenerationBlocked(GenerationError, PermanentError):
    """A safety filter stopped the prompt (`promptFeedback.blockReason`) or the answer (finish reason SAFETY…)."""

    reason = "blocked"


class GenerationEmpty(GenerationError, TransientError):
    """The service answered without text (no candidate, or a candidate without parts) and without a block."""

    reason = "empty"


class GenerationInvalidJson(GenerationError, TransientError):
    """The answer's text is not JSON although JSON was required."""

    reason = "invalid_json"


class GenerationTruncated(GenerationError, TransientError):
    """The answer stopped early (MAX_TOKENS, or a continuation the caller did not follow) and is not JSON."""

    reason = "truncated"
