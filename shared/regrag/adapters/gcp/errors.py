"""Google client exceptions → the pipeline's error policy, in one place.

- Throttling, unavailability, deadlines and connection failures → `Unavailable` (a TransientError): event
  functions raise, the platform redelivers, and the dead-letter topic catches what never succeeds.
- INVALID_ARGUMENT / HTTP 400 → `InvalidInput` (a PermanentError): logged, recorded and acknowledged.
- Anything else (permission denied, a missing index or topic, a bug) propagates unchanged: it is a
  deployment problem that redelivery will get past once fixed, so it must not be acknowledged either.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from regrag.domain.errors import InvalidInput, RegragError, Unavailable


def translate(exc: BaseException, what: str) -> RegragError | None:
    """The domain error for a Google client exception, or None to let it propagate as it is."""
    from google.api_core import exceptions as gexc

    if isinstance(exc, gexc.TooManyRequests | gexc.ServiceUnavailable | gexc.GatewayTimeout):
        return Unavailable(f"{what}: {type(exc).__name__}: {exc.message}")
    if isinstance(exc, gexc.InternalServerError | gexc.BadGateway | gexc.RetryError):
        return Unavailable(f"{what}: {type(exc).__name__}: {exc}")
    if isinstance(exc, gexc.BadRequest):  # InvalidArgument, FailedPrecondition, OutOfRange
        return InvalidInput(f"{what}: {type(exc).__name__}: {exc.message}")
    if isinstance(exc, ConnectionError | TimeoutError):
        return Unavailable(f"{what}: {type(exc).__name__}: {exc}")
    try:  # google-cloud-storage and google-auth go through `requests`
        import requests
    except ImportError:  # pragma: no cover - a dependency of google-cloud-storage
        return None
    if isinstance(exc, requests.ConnectionError | requests.Timeout):
        return Unavailable(f"{what}: {type(exc).__name__}: {exc}")
    from google.auth import exceptions as auth_exc

    if isinstance(exc, auth_exc.TransportError):
        return Unavailable(f"{what}: {type(exc).__name__}: {exc}")
    return None


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """Re-raise Google client exceptions inside the block as domain errors where the policy says so."""
    try:
        yield
    except RegragError:
        raise
    except Exception as exc:  # classified by translate(); unknown ones are re-raised as they are
        mapped = translate(exc, what)
        if mapped is None:
            raise
        raise mapped from exc
