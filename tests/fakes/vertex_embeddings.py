"""An in-process HTTP fake of Vertex AI text embeddings (`…/publishers/google/models/{model}:predict`).

It serves what `google-genai` sends in Vertex AI mode for `embed_content` (see gcp-vertex-gemini.md §5):
`{instances: [{content, task_type}], parameters: {outputDimensionality?, autoTruncate?}}`, answered with
`{predictions: [{embeddings: {values, statistics: {token_count, truncated}}}]}`.

What it enforces (documented limits; "assumed" where the fake errs strict): a bearer token; a known model;
1–250 instances and at most 20,000 input tokens per request (the fake counts one token per CJK character and
one per four other characters, lower than the adapter's estimate); one instance per request for
gemini-embedding-001; a known task type; a non-empty string content; outputDimensionality within the model's
size. Vectors are deterministic character 1–2-gram hashes (texts sharing characters get similar vectors),
unit length at the model's native size and cut, not renormalised, to outputDimensionality, as the real
models do.

Failure injection: `push(status, ...)` answers the next requests with HTTP errors (the service's JSON error
body); `poison` makes every request containing that text answer 503; `delay_s` slows every answer.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

MODELS = {"text-embedding-005": 768, "text-multilingual-embedding-002": 768, "gemini-embedding-001": 3072}
TASK_TYPES = {
    "RETRIEVAL_QUERY", "RETRIEVAL_DOCUMENT", "SEMANTIC_SIMILARITY", "CLASSIFICATION", "CLUSTERING",
    "QUESTION_ANSWERING", "FACT_VERIFICATION", "CODE_RETRIEVAL_QUERY",
}  # fmt: skip
MAX_INSTANCES = 250
MAX_TOKENS = 20_000
_PATH = re.compile(
    r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/publishers/google/models/(?P<model>[^/:]+):predict$"
)
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
           500: "INTERNAL", 503: "UNAVAILABLE"}  # fmt: skip


def fake_tokens(text: str) -> int:
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff")
    return cjk + (len(text) - cjk) // 4


def fake_vector(text: str, dimension: int) -> np.ndarray:
    vec = np.zeros(dimension, dtype=np.float64)
    chars = [c for c in text if not c.isspace()]
    for gram in chars + [a + b for a, b in itertools.pairwise(chars)]:
        h = int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "little")
        vec[h % dimension] += 1.0 if (h >> 63) & 1 else -1.0
    norm = np.linalg.norm(vec)
    return vec / norm if norm else vec + 1 / np.sqrt(dimension)


@dataclass(frozen=True)
class Recorded:
    model: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def texts(self) -> list[str]:
        return [i.get("content", "") for i in self.body.get("instances", [])]

    @property
    def task_types(self) -> set[str]:
        return {i.get("task_type") for i in self.body.get("instances", [])}


@dataclass
class EmbeddingsFake:
    poison: str | None = None
    delay_s: float = 0.0
    requests: list[Recorded] = field(default_factory=list)
    _script: deque[int] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def push(self, *statuses: int) -> None:
        with self._lock:
            self._script.extend(statuses)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.poison = None
            self.delay_s = 0.0

    def start(self) -> str:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self.base_url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, model: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(Recorded(model, headers, body))
            scripted = self._script.popleft() if self._script else None
        if scripted is not None:
            return _error(scripted, "scripted failure")
        if not headers.get("authorization", "").startswith("Bearer "):
            return _error(401, "request is missing a bearer token")
        if model not in MODELS:
            return _error(404, f"Publisher Model {model} not found")
        instances = body.get("instances")
        if not isinstance(instances, list) or not 1 <= len(instances) <= MAX_INSTANCES:
            return _error(400, f"1 to {MAX_INSTANCES} instances per request")
        if model == "gemini-embedding-001" and len(instances) != 1:
            return _error(400, "gemini-embedding-001 supports one instance per request")
        texts = []
        for inst in instances:
            content, task = inst.get("content"), inst.get("task_type")
            if not isinstance(content, str) or not content.strip():
                return _error(400, "each instance needs a non-empty content")
            if task is not None and task not in TASK_TYPES:
                return _error(400, f"unknown task_type {task!r}")
            texts.append(content)
        if sum(fake_tokens(t) for t in texts) > MAX_TOKENS:
            return _error(400, f"more than {MAX_TOKENS} input tokens in one request")
        params = body.get("parameters") or {}
        dims = params.get("outputDimensionality") or MODELS[model]
        if not isinstance(dims, int | float) or not 1 <= int(dims) <= MODELS[model]:
            return _error(400, f"outputDimensionality {dims!r} out of range")
        if self.poison and any(self.poison in t for t in texts):
            return _error(503, "the model is overloaded (poison text)")
        predictions = [
            {
                "embeddings": {
                    "values": fake_vector(t, MODELS[model])[: int(dims)].tolist(),
                    "statistics": {"token_count": float(fake_tokens(t)), "truncated": False},
                }
            }
            for t in texts
        ]
        return 200, {"predictions": predictions, "metadata": {"billableCharacterCount": sum(len(t) for t in texts)}}


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}


def _handler(fake: EmbeddingsFake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # otherwise small answers wait ~40 ms for delayed ACKs

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            match = _PATH.match(self.path.split("?", 1)[0])
            if match is None:
                status, body = _error(404, f"unknown path {self.path}")
            else:
                try:
                    payload = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    status, body = _error(400, "body is not JSON")
                else:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    status, body = fake.answer(match.group("model"), headers, payload)
            if fake.delay_s:
                threading.Event().wait(fake.delay_s)
            data = json.dumps(body).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client timed out first

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
