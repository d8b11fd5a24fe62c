"""An in-process HTTP fake of the Gemini API's `generateContent`, for driving the real `google-genai` client.

It listens on 127.0.0.1, records every request (path, headers, JSON body) and answers from a script: each
request takes the next scripted `Reply`, or the default reply once the script is empty. Replies copy the wire
shapes of the real service (see /work/shared/design/gcp-vertex-gemini.md §6 and §8): a candidate with text
parts and a finish reason, a `promptFeedback.blockReason` with no candidates, an error body with an HTTP
status, a slow answer (for client timeouts) and a connection reset.

Before a request reaches the script, the fake checks it against what Google documents for the model it names
(regrag.cloud_facts, the table the request builder reads): a thinking level the model does not list is refused
with 400 INVALID_ARGUMENT, as the service refuses it (a scripted reply is not used up); a temperature sent to a
model documented to ignore it is answered normally and flagged in `flags`, since the service would sample at
its default and nothing in the answer would show it. Models the table does not know are not checked.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from regrag.cloud_facts import IGNORED, gemini_model

# Gemini API: /v1beta/models/{model}:generateContent; Vertex AI:
# /v1beta1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent
_PATH = re.compile(
    r"^/(?P<version>v1[a-z0-9]*)/(?:projects/[^/]+/locations/[^/]+/publishers/google/)?"
    r"models/(?P<model>[^/:]+):generateContent$"
)
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass(frozen=True)
class Recorded:
    """One request as the fake received it."""

    path: str
    model: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The user turn's text."""
        return "".join(p.get("text", "") for c in self.body.get("contents", []) for p in c.get("parts", []))

    @property
    def system(self) -> str:
        instruction = self.body.get("systemInstruction") or {}
        return "".join(p.get("text", "") for p in instruction.get("parts", []))

    @property
    def generation_config(self) -> dict[str, Any]:
        return dict(self.body.get("generationConfig") or {})


def _config_field(config: dict[str, Any], name: str) -> Any:
    """A generationConfig field under its lowerCamelCase JSON name or the snake_case one (the SDK sends both
    forms in nested objects; the service accepts either)."""
    head, *rest = name.split("_")
    return config.get(head + "".join(p.title() for p in rest), config.get(name))


def documented_problems(recorded: Recorded) -> tuple[Reply | None, list[str]]:
    """What the service does with a request its model's documentation rules on: a refusal (a thinking level the
    model does not list), and flags for what it would silently ignore (a temperature it does not honour)."""
    model = gemini_model(recorded.model)
    if model is None:
        return None, []
    config = recorded.generation_config
    flags: list[str] = []
    if model.temperature == IGNORED and _config_field(config, "temperature") is not None:
        flags.append(f"temperature {_config_field(config, 'temperature')} sent to {model.model_id}, which ignores it")
    thinking = _config_field(config, "thinking_config") or {}
    level = _config_field(thinking, "thinking_level")
    if level is not None and level not in model.thinking_levels:
        listed = ", ".join(model.thinking_levels) or "none"
        return Reply.error(
            400, f"Thinking level {level} is not supported for {model.model_id} (supported: {listed})"
        ), flags
    return None, flags


@dataclass(frozen=True)
class Reply:
    """What the fake does with one request. Build it with the class methods."""

    status: int = 200
    body: bytes = b""
    delay_s: float = 0.0
    reset: bool = False
    respond: Callable[[Recorded], Reply] | None = None
    content_type: str = "application/json; charset=UTF-8"

    @classmethod
    def text(cls, text: str, finish_reason: str = "STOP", **candidate: Any) -> Reply:
        """A normal answer: one candidate whose single part is `text`."""
        content = {"role": "model", "parts": [{"text": text}]}
        return cls.json(
            {
                "candidates": [{"content": content, "finishReason": finish_reason, **candidate}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
                "modelVersion": "fake",
            }
        )

    @classmethod
    def scores(cls, items: list[dict[str, Any]]) -> Reply:
        """A normal answer whose text is the JSON of `items` (what a schema-constrained model returns)."""
        return cls.text(json.dumps(items, ensure_ascii=False))

    @classmethod
    def no_parts(cls, finish_reason: str) -> Reply:
        """A candidate without content, e.g. `finishReason: SAFETY` with safety ratings and no parts."""
        ratings = [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]
        candidate: dict[str, Any] = {"finishReason": finish_reason, "index": 0}
        if finish_reason == "SAFETY":
            candidate["safetyRatings"] = ratings
        return cls.json({"candidates": [candidate], "usageMetadata": {"promptTokenCount": 100}})

    @classmethod
    def prompt_blocked(cls, block_reason: str = "SAFETY") -> Reply:
        """The prompt itself was blocked: `promptFeedback.blockReason` and no candidates."""
        return cls.json({"promptFeedback": {"blockReason": block_reason}, "usageMetadata": {"promptTokenCount": 100}})

    @classmethod
    def error(cls, status: int, message: str = "fake error") -> Reply:
        """An HTTP error with the service's JSON error body."""
        return cls.json(
            {"error": {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}},
            status=status,
        )

    @classmethod
    def json(cls, payload: dict[str, Any], status: int = 200) -> Reply:
        return cls(status=status, body=json.dumps(payload, ensure_ascii=False).encode("utf-8"))

    @classmethod
    def raw(cls, body: bytes, status: int = 200, content_type: str = "text/html") -> Reply:
        """Any bytes, e.g. a proxy's HTML page where JSON was expected."""
        return cls(status=status, body=body, content_type=content_type)

    @classmethod
    def slow(cls, delay_s: float, then: Reply | None = None) -> Reply:
        """Answer `then` (an empty JSON array by default) after `delay_s`: longer than the client timeout."""
        base = then or cls.scores([])
        return cls(status=base.status, body=base.body, delay_s=delay_s, content_type=base.content_type)

    @classmethod
    def connection_reset(cls) -> Reply:
        """Read the request, then close the socket with a TCP RST and no response."""
        return cls(reset=True)

    @classmethod
    def computed(cls, respond: Callable[[Recorded], Reply]) -> Reply:
        """Build the reply from the request (e.g. score the candidates the prompt lists)."""
        return cls(respond=respond)


@dataclass
class GeminiFake:
    """The server; use it as a context manager. `requests` lists what it received, oldest first."""

    default: Reply = field(default_factory=lambda: Reply.error(500, "the fake has no scripted reply"))
    requests: list[Recorded] = field(default_factory=list)
    # what the real service would have ignored silently (see the module docstring), one line per occurrence
    flags: list[str] = field(default_factory=list)
    _script: deque[Reply] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None

    def push(self, *replies: Reply) -> GeminiFake:
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> GeminiFake:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        # a short poll interval: shutdown() waits for the next poll, 0.5 s by default, in every test's teardown
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="gemini-fake", daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # wakes handlers that are sleeping to simulate a slow service
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _next(self, recorded: Recorded) -> Reply:
        refusal, flags = documented_problems(recorded)
        with self._lock:
            self.requests.append(recorded)
            self.flags.extend(flags)
            if refusal is not None:
                return refusal
            reply = self._script.popleft() if self._script else self.default
        while reply.respond is not None:
            reply = reply.respond(recorded)
        return reply


def _handler_for(fake: GeminiFake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the real service: the client reuses its connection
        disable_nagle_algorithm = True  # small responses otherwise wait ~40 ms for delayed ACKs

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            match = _PATH.match(self.path.split("?", 1)[0])
            if match is None:
                self._send(Reply.error(404, f"unknown path {self.path}"))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(Reply.error(400, "request body is not JSON"))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = fake._next(Recorded(self.path, match.group("model"), headers, body))
            if reply.reset:
                # SO_LINGER with a zero timeout makes close() send RST instead of FIN
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            if reply.delay_s and fake._stopping.wait(reply.delay_s):
                return
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                # the client gave up (timeout) before the slow answer came; that is the point of the test
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean; `requests` holds what matters

    return Handler
