"""`regrag serve`: the same routes as the query function, on a production WSGI server with bounded work.

waitress (pure Python, portable) runs a fixed pool of threads. In front of the expensive requests (POST: a
question costs an embedding, the rest are cheap) sits admission control: at most `max_active` run at once and
at most `max_waiting` wait for a turn, each no longer than `wait_s`; anyone else is answered 503 with
Retry-After at once, so a crowd gets fast refusals instead of a queue tens of seconds long. The thread pool is
sized so that a refusal always finds a thread: active + waiting + a few for the page and cheap GETs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from werkzeug.wrappers import Request

from regrag import logs
from regrag.api.routes import dispatch, error_body, json_response
from regrag.services import Services

log = logs.get("server")

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
_CHEAP_THREADS = 4  # the page, assets, health and document views never wait behind questions


@dataclass(frozen=True)
class Limits:
    """How much work the server takes on (Settings: REGRAG_SERVE_*)."""

    max_active: int = 2
    max_waiting: int = 16
    wait_s: float = 2.0
    retry_after_s: int = 2

    @property
    def threads(self) -> int:
        return self.max_active + self.max_waiting + _CHEAP_THREADS


class Admission:
    """A counting gate with a bounded waiting room: `enter()` is True when the caller may run now or after a
    short wait, False when it should be turned away (room full, or no turn within `wait_s`)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._slots = threading.BoundedSemaphore(limits.max_active)
        self._lock = threading.Lock()
        self.waiting = 0
        self.refused = 0

    def enter(self) -> bool:
        if self._slots.acquire(blocking=False):
            return True
        with self._lock:
            if self.waiting >= self.limits.max_waiting:
                self.refused += 1
                return False
            self.waiting += 1
        try:
            admitted = self._slots.acquire(timeout=self.limits.wait_s)
        finally:
            with self._lock:
                self.waiting -= 1
        if not admitted:
            with self._lock:
                self.refused += 1
        return admitted

    def leave(self) -> None:
        self._slots.release()


def wsgi_app(services: Services, admission: Admission | None = None) -> WsgiApp:
    """The API and the search page as a WSGI callable (what any WSGI server, or a test client, runs)."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        if admission is None or request.method != "POST":
            return dispatch(services, request)(environ, start_response)
        if not admission.enter():
            status, body = error_body(503, "busy", "the server is busy; retry shortly")
            response = json_response(status, body)
            response.headers["Retry-After"] = str(admission.limits.retry_after_s)
            return response(environ, start_response)
        try:
            response = dispatch(services, request)
        finally:
            admission.leave()
        return response(environ, start_response)

    return app


def serve(services: Services, host: str = "127.0.0.1", port: int = 8080, limits: Limits | None = None) -> None:
    """Serve until interrupted, on waitress with `limits.threads` threads and admission control."""
    import waitress

    limits = limits or Limits()
    app = wsgi_app(services, Admission(limits))
    logs.event(log, 20, "serving", host=host, port=port, threads=limits.threads, max_active=limits.max_active)
    waitress.serve(
        app,
        host=host,
        port=port,
        threads=limits.threads,
        # connections beyond this wait in the kernel's backlog; each costs a socket, not a thread
        connection_limit=max(100, 4 * limits.threads),
        channel_timeout=60,
        # the JSON bodies are small: refuse big ones at the server too (the routes read at most 1 MB)
        max_request_body_size=2_000_000,
        # past this waitress answers in plain text; below it the routes answer a long URL with a JSON 414
        max_request_header_size=256 * 1024,
        ident="regrag",
        clear_untrusted_proxy_headers=True,
    )
