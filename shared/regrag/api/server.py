"""`regrag serve`: the same routes as the query function, on a production WSGI server with bounded work.

waitress (pure Python, portable) runs a fixed pool of threads. In front of the expensive requests (POST: a
question costs an embedding, the rest are cheap) sits admission control: at most `max_active` run at once and
at most `max_waiting` wait for a turn, none longer than `wait_s`; a caller whose expected wait is longer is
answered 503 with Retry-After at once, so a crowd gets fast refusals instead of a queue tens of seconds long.
The thread pool is sized so that a refusal always finds a thread: active + waiting + a few for the page and the
cheap GETs. Idle keep-alive connections cost waitress a socket, not a thread.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import threading
import time
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
# the estimate of one question's service time that Retry-After is computed from: an exponential average whose last
# ≈ 5 questions count most, so a slow spell shows within seconds and one slow question does not
SERVICE_TIME_WEIGHT = 0.2
WAITRESS_CONNECTION_LIMIT = 100  # waitress's own default, kept as the floor
# an idle or stalled client connection is closed after this; a question answers in well under a second
# (bench/README.md query latency), so a minute only ever cuts off a client that stopped reading
CHANNEL_TIMEOUT_S = 60
# descriptors asked for: sockets up to the connection limit plus two per SQLite connection, with room to spare
OPEN_FILES = 65536


@dataclass(frozen=True)
class Limits:
    """How much work the server takes on (Settings: REGRAG_SERVE_*)."""

    max_active: int = 2
    max_waiting: int = 192
    wait_s: float = 2.5
    retry_after_s: int = 2
    long_bytes: int = 1024  # a request body over this is a long question (about 300 characters and filters)

    @property
    def threads(self) -> int:
        return self.max_active + self.max_waiting + _CHEAP_THREADS


class Admission:
    """A gate with `max_active` slots and a bounded waiting room, smallest request first.

    `enter(cost)` is True when the caller may run now or after a short wait; False when it is turned away at
    once: the room is full, or the wait it would face (callers ahead × the recent time per question ÷ slots)
    exceeds `wait_s`; or after waiting `wait_s` in vain. Waiting callers are served by increasing cost (the
    request's size): a short question never queues behind long ones that arrived first, which with FIFO made
    one wait for four 2,000-character questions. Long requests (body over `long_bytes`) hold at most
    `max_active − 1` slots: one is always left for short questions, which otherwise waited for a long one
    to finish (p95 1.14 s behind four long questions; the embedder has a short lane for the same reason)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._cond = threading.Condition()
        self._free = limits.max_active
        self._queue: list[tuple[int, int]] = []  # (cost, ticket) of waiting callers, a heap
        self._tickets = itertools.count()
        self.refused = 0
        self.service_s = 0.02  # moving average of the time a question holds a slot; updated by leave()
        self._entered: dict[int, tuple[float, bool]] = {}  # thread → (entered at, long)
        self._long_active = 0
        self._long_cap = max(1, limits.max_active - 1)

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def _may_run(self, cost: int) -> bool:
        return bool(self._free) and (cost <= self.limits.long_bytes or self._long_active < self._long_cap)

    def enter(self, cost: int = 0) -> bool:
        with self._cond:
            if self._may_run(cost) and not self._queue:
                return self._take(cost)
            expected_s = (len(self._queue) + 1) * self.service_s / self.limits.max_active
            if len(self._queue) >= self.limits.max_waiting or expected_s > self.limits.wait_s:
                self.refused += 1
                return False
            ticket = (cost, next(self._tickets))
            heapq.heappush(self._queue, ticket)
            deadline = time.monotonic() + self.limits.wait_s
            # shorter requests are ahead in the heap, so a long one at the head only waits for its own kind
            while not (self._may_run(cost) and self._queue[0] == ticket):
                left = deadline - time.monotonic()
                if left <= 0:
                    self._queue.remove(ticket)
                    heapq.heapify(self._queue)
                    self._cond.notify_all()
                    self.refused += 1
                    return False
                self._cond.wait(left)
            heapq.heappop(self._queue)
            return self._take(cost)

    def _take(self, cost: int) -> bool:
        long = cost > self.limits.long_bytes
        self._free -= 1
        self._long_active += long
        self._entered[threading.get_ident()] = (time.perf_counter(), long)
        return True

    def leave(self) -> None:
        with self._cond:
            entered = self._entered.pop(threading.get_ident(), None)
            if entered is not None:
                elapsed = time.perf_counter() - entered[0]
                self.service_s = (1 - SERVICE_TIME_WEIGHT) * self.service_s + SERVICE_TIME_WEIGHT * elapsed
                self._long_active -= entered[1]
            self._free += 1
            self._cond.notify_all()


def warm_up(services: Services) -> None:
    """Load what the first question would otherwise pay for (the search snapshot, the embedding model) before
    the server takes traffic: a crowd arriving at a cold server would all wait on one load."""
    from regrag.inputs.filters import parse_filters

    try:
        services.retriever.retrieve("供电企业停电通知", parse_filters({}), 5)
    except Exception as exc:  # noqa: BLE001 - an empty index or a slow backend must not keep the server down
        logs.event(log, logging.WARNING, "warm-up query failed; the first request will load the index", error=repr(exc))


def wsgi_app(services: Services, admission: Admission | None = None) -> WsgiApp:
    """The API and the search page as a WSGI callable (what any WSGI server, or a test client, runs)."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        if admission is None or request.method != "POST":
            return dispatch(services, request)(environ, start_response)
        if not admission.enter(request.content_length or 0):
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


MAX_WIRE_BYTES = 64 * 1024 * 1024


def serve(services: Services, host: str = "127.0.0.1", port: int = 8080, limits: Limits | None = None) -> None:
    """Serve until interrupted, on waitress with `limits.threads` threads and admission control."""
    import waitress

    limits = limits or Limits()
    _raise_open_file_limit()
    app = wsgi_app(services, Admission(limits))
    logs.event(log, logging.INFO, "serving", host=host, port=port, threads=limits.threads, max_active=limits.max_active)
    waitress.serve(
        app,
        host=host,
        port=port,
        threads=limits.threads,
        # connections beyond this wait in the kernel's backlog; each costs a socket, not a thread
        connection_limit=max(WAITRESS_CONNECTION_LIMIT, 4 * limits.threads),
        channel_timeout=CHANNEL_TIMEOUT_S,
        # bodies up to this reach the routes, which refuse what is over their own limit with a JSON 413 (1 MB
        # for questions; REGRAG_CHECK_MAX_BYTES, 20 MB by default, for POST /check); past it waitress answers
        # 413 itself. Waitress spools large bodies to a temporary file, not memory
        max_request_body_size=MAX_WIRE_BYTES,
        # past this waitress answers in plain text; below it the routes answer a long URL with a JSON 414
        max_request_header_size=256 * 1024,
        # poll(), not select(): select() fails past file descriptor 1024 ("filedescriptor out of range"), which
        # a busy server reaches with its sockets and one SQLite connection per worker thread
        asyncore_use_poll=True,
        ident="regrag",
        clear_untrusted_proxy_headers=True,
    )


def _raise_open_file_limit() -> None:
    """Up to the hard limit: every waitress thread may hold an SQLite connection (2 descriptors with WAL) beside
    up to `connection_limit` sockets, past a soft limit of 1024 on many systems."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):  # not allowed here: keep the soft limit
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
