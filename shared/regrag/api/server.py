"""`regrag serve`: the same routes as the query function, on a production WSGI server with bounded work.

waitress (pure Python, portable) runs a fixed pool of threads. In front of the expensive requests (POST: a
question costs an embedding, the rest are cheap) sits admission control: at most `max_active` run at once and
at most `max_waiting` wait for a turn, none longer than `wait_s`; a caller whose expected wait is longer is
answered 503 with Retry-After at once, so a crowd gets fast refusals instead of a queue tens of seconds long.
The thread pool is sized so that a refusal always finds a thread: active + waiting + a few for the page and the
cheap GETs. Idle keep-alive connections cost waitress a socket, not a thread.

waitress refuses some requests itself, before the application sees them: a body over the size limit (413,
from the Content-Length alone, or while de-chunking), headers over theirs (431), malformed HTTP (400). Its own
answer is plain text; `JsonErrorTask` answers them with the API's JSON error instead (`{"error": {"code",
"message"}}`, the CORS headers of an allowed origin), so a client reads every refusal the same way.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from werkzeug.exceptions import default_exceptions
from werkzeug.wrappers import Request

from regrag import logs
from regrag.api.routes import MAX_BODY_BYTES, dispatch, error_body, error_response, json_response, with_cors
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
    limits = limits or Limits()
    _raise_open_file_limit()
    server = create_server(services, host, port, limits)
    logs.event(log, logging.INFO, "serving", host=host, port=port, threads=limits.threads, max_active=limits.max_active)
    server.run()


def create_server(services: Services, host: str, port: int, limits: Limits | None = None) -> Any:
    """The waitress server of `regrag serve`, listening, not yet running (`.run()`; port 0 picks a free port,
    `.effective_port` says which). Requests waitress refuses itself are answered in JSON (JsonErrorTask)."""
    import waitress.server

    limits = limits or Limits()
    sockets: dict[int, Any] = {}
    server = waitress.server.create_server(
        wsgi_app(services, Admission(limits)),
        map=sockets,
        host=host,
        port=port,
        threads=limits.threads,
        # connections beyond this wait in the kernel's backlog; each costs a socket, not a thread
        connection_limit=max(WAITRESS_CONNECTION_LIMIT, 4 * limits.threads),
        channel_timeout=CHANNEL_TIMEOUT_S,
        # the largest body any route takes; each request's own limit (body_limit: 1 MB, or REGRAG_CHECK_MAX_BYTES
        # for POST /check) is applied as soon as its headers are read. Waitress spools large bodies to a file
        max_request_body_size=MAX_WIRE_BYTES,
        # past this waitress answers in plain text; below it the routes answer a long URL with a JSON 414
        max_request_header_size=256 * 1024,
        # poll(), not select(): select() fails past file descriptor 1024 ("filedescriptor out of range"), which
        # a busy server reaches with its sockets and one SQLite connection per worker thread
        asyncore_use_poll=True,
        ident="regrag",
        clear_untrusted_proxy_headers=True,
    )
    channel = _json_error_channel(services.settings.allowed_origins, services.settings.check_max_bytes)
    for dispatcher in sockets.values():  # one listening server per address (localhost: IPv4 and IPv6)
        if isinstance(dispatcher, waitress.server.BaseWSGIServer):
            dispatcher.channel_class = channel
    return server


LINGER_S = 5.0  # after a refusal, how long the rest of a request is read (and dropped) before the socket closes
LINGER_BYTES = 64_000_000
# What waitress's own refusals say, by status (a 413 in the words the routes use for a body they refuse).
_WAITRESS_MESSAGES = {431: "request headers are too large"}


def body_limit(path: str, check_max_bytes: int) -> int:
    """The largest body a request to `path` may carry: the citation check takes documents, the rest JSON."""
    return check_max_bytes if path.rstrip("/").endswith("/check") else MAX_BODY_BYTES


def _json_error_channel(allowed_origins: frozenset[str], check_max_bytes: int) -> type:
    """waitress's HTTPChannel whose refusals (its ErrorTask) are the API's JSON errors, and whose requests are
    held to their route's body limit from their headers on (a 20 MB question is refused unread)."""
    import copy

    from waitress.channel import HTTPChannel
    from waitress.parser import HTTPRequestParser
    from waitress.task import ErrorTask

    class LimitedParser(HTTPRequestParser):  # type: ignore[misc]
        """Reads the request line and headers, then gives the request its route's body limit (waitress checks
        its `adj.max_request_body_size` against Content-Length, and against a chunked body as it arrives)."""

        def parse_header(self, header_plus: bytes) -> None:
            super().parse_header(header_plus)
            limit = body_limit(self.path or "", check_max_bytes)
            adj: Any = getattr(self, "adj")  # noqa: B009 - waitress's untyped attribute
            if limit + 1 < adj.max_request_body_size:  # waitress refuses at >=
                adj = copy.copy(adj)
                adj.max_request_body_size = limit + 1
                setattr(self, "adj", adj)  # noqa: B010

    class JsonErrorTask(ErrorTask):  # type: ignore[misc]
        """waitress's error task with the body and headers `regrag.api.routes` gives any error."""

        def execute(self) -> None:
            try:
                status, headers, body = self._json_error()
            except Exception:  # noqa: BLE001 - never fail a refusal: waitress's own plain-text answer then
                super().execute()
                return
            self.status = status
            self.response_headers.extend(headers)
            self.set_close_on_finish()  # the rest of a refused body is never read
            self.content_length = len(body)
            self.write(body)

        def _json_error(self) -> tuple[str, list[tuple[str, str]], bytes]:
            error = self.request.error
            status = int(getattr(error, "code", 500))
            if status == 413:
                message = f"request body larger than {self.request.adj.max_request_body_size - 1} bytes"
            else:
                message = _WAITRESS_MESSAGES.get(status) or (str(error.body) if status < 500 else "internal error")
            logs.event(log, 30, "request refused by the server", status=status, error=message)
            self.channel.refused = True
            exception = default_exceptions.get(status)
            if exception is not None:
                response = error_response(exception(message))
            else:
                response = json_response(*error_body(status, "error", message))
            origin = self.request.headers.get("ORIGIN")
            response = with_cors(response, Request({"HTTP_ORIGIN": origin} if origin else {}), allowed_origins)
            headers = [(k, v) for k, v in response.headers.items() if k != "Content-Length"]
            return response.status, headers, response.get_data()

    class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
        """A channel that answers refusals in JSON and then closes gently: it stops sending, reads and discards
        what the client still sends (up to LINGER_S seconds, LINGER_BYTES bytes), then closes. Closed at once,
        the socket would reset a client still sending its 20 MB body, which then never reads the answer
        (Python's http.client reports ConnectionResetError); Apache and nginx linger the same way."""

        error_task_class = JsonErrorTask
        parser_class = LimitedParser
        refused = False  # set by JsonErrorTask: close gently once the answer is sent
        linger_until: float | None = None
        lingered_bytes = 0

        def handle_close(self) -> None:
            if self.refused and self.linger_until is None and self.connected:
                try:
                    self.socket.shutdown(socket.SHUT_WR)  # the answer is sent in full; the client sees the end
                except OSError:
                    super().handle_close()
                    return
                self.linger_until = time.monotonic() + LINGER_S
                self.will_close = self.close_when_flushed = False
                return
            super().handle_close()

        def readable(self) -> bool:
            if self.linger_until is None:
                return bool(super().readable())
            if time.monotonic() > self.linger_until or self.lingered_bytes > LINGER_BYTES:
                self.will_close = True  # handle_write closes it (writable is true now)
                return False
            return True

        def writable(self) -> bool:
            return bool(self.will_close) if self.linger_until is not None else bool(super().writable())

        def handle_read(self) -> None:
            if self.linger_until is None:
                super().handle_read()
                return
            try:
                data = self.recv(self.adj.recv_bytes)
            except OSError:
                data = b""
            self.lingered_bytes += len(data)
            if not data:
                super().handle_close()

    return JsonErrorChannel


def _raise_open_file_limit() -> None:
    """Up to the hard limit: every waitress thread may hold an SQLite connection (2 descriptors with WAL) beside
    up to `connection_limit` sockets, past a soft limit of 1024 on many systems."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):  # not allowed here: keep the soft limit
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
