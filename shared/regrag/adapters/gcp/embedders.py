"""Vertex AI text embeddings through google-genai (`vertexai=True`), the production twin of E5Embedder.

- Model configurable: `text-multilingual-embedding-002` (768 dims, evaluated on Chinese) by default
  (`text-embedding-005` is English-only); `gemini-embedding-001` (3,072 dims, or fewer with
  `output_dimensionality`; one text per request on Vertex AI). Chunks are embedded with task type
  RETRIEVAL_DOCUMENT, questions with RETRIEVAL_QUERY.
- Requests stay within the service's limits: at most 250 texts and 20,000 tokens each. Tokens are estimated
  without a tokenizer call: one per CJK character (Chinese runs at 0.6–1 token per character in the
  embedding models' vocabularies) plus one per three other characters, so the estimate errs high.
  gemini-embedding-001 takes one text per request on Vertex AI (docs), so its requests hold one text.
- Every request has a timeout; 429 and 503 (and only they) are retried with exponential backoff and full
  jitter; when retries run out the error is transient (the event is redelivered later).
- Every vector is checked (count, dimension, finite, non-zero) and L2-normalised: vectors of a reduced
  dimensionality are not unit length as the service returns them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from regrag import logs
from regrag.adapters.gcp.clients import genai_vertex_client
from regrag.cloud_facts import EMBED_MAX_TEXTS_PER_REQUEST, EMBED_MAX_TOKENS_PER_REQUEST, EMBEDDING_MODELS
from regrag.domain.errors import InvalidInput, Unavailable

log = logs.get("embed.vertex")

NATIVE_DIMENSIONS = {model_id: model.dimensions for model_id, model in EMBEDDING_MODELS.items()}
MAX_TEXTS_PER_REQUEST = EMBED_MAX_TEXTS_PER_REQUEST
MAX_TOKENS_PER_REQUEST = EMBED_MAX_TOKENS_PER_REQUEST
# longer texts are truncated by the service (autoTruncate); the same for every model in the table
MAX_TOKENS_PER_TEXT = min(model.max_tokens_per_text for model in EMBEDDING_MODELS.values())
_RETRY_STATUSES = frozenset({429, 503})


def estimate_tokens(text: str) -> int:
    """A high estimate of a text's token count (see the module docstring)."""
    cjk = sum(
        1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef"
    )
    return cjk + -(-(len(text) - cjk) // 3) + 1


def batches(texts: Sequence[str], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indexes of `texts` grouped into requests within both limits (a text's estimate is capped at the
    per-text truncation length, since the service never reads further)."""
    groups: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for i, text in enumerate(texts):
        cost = min(estimate_tokens(text), MAX_TOKENS_PER_TEXT)
        if current and (len(current) >= max_texts or tokens + cost > max_tokens):
            groups.append(current)
            current, tokens = [], 0
        current.append(i)
        tokens += cost
    if current:
        groups.append(current)
    return groups


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts per request and the backoff between them: initial × 2^n, capped, with jitter; 429 and 503 only
    (google-genai's HttpRetryOptions does the retrying)."""

    max_attempts: int = 5
    initial_s: float = 0.5
    maximum_s: float = 8.0

    def http_options(self) -> Any:
        from google.genai import types

        return types.HttpRetryOptions(
            attempts=self.max_attempts,
            initial_delay=self.initial_s,
            max_delay=self.maximum_s,
            exp_base=2.0,
            jitter=1.0,
            http_status_codes=sorted(_RETRY_STATUSES),
        )


class VertexEmbedder:
    """The `Embedder` port on Vertex AI embeddings."""

    def __init__(
        self,
        project: str,
        location: str,
        *,
        model: str = "text-multilingual-embedding-002",
        output_dimensionality: int | None = None,
        timeout_s: float = 30.0,
        retry: RetryPolicy | None = None,
        max_texts_per_request: int = MAX_TEXTS_PER_REQUEST,
        max_tokens_per_request: int = MAX_TOKENS_PER_REQUEST,
        base_url: str | None = None,
    ) -> None:
        native = NATIVE_DIMENSIONS.get(model)
        if output_dimensionality is None and native is None:
            raise InvalidInput(f"embedding model {model!r} has no known dimension; set its output dimensionality")
        if output_dimensionality is not None and (
            output_dimensionality < 1 or (native is not None and output_dimensionality > native)
        ):
            raise InvalidInput(f"output dimensionality {output_dimensionality} is out of range for {model}")
        self.project = project
        self.location = location
        self.model = model
        self.output_dimensionality = output_dimensionality
        self._dimension = output_dimensionality or int(native or 0)
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        one_per_request = model.startswith("gemini-embedding")
        self.max_texts = 1 if one_per_request else min(max_texts_per_request, MAX_TEXTS_PER_REQUEST)
        self.max_tokens = min(max_tokens_per_request, MAX_TOKENS_PER_REQUEST)
        self.base_url = base_url
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """Model and dimension: vectors of different models or sizes must never share an index."""
        return f"vertex:{self.model}@{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def _get_client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = genai_vertex_client(
                        self.project, self.location, self.base_url, self.timeout_s, self.retry.http_options()
                    )
        return self._client

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of chunks (task type RETRIEVAL_DOCUMENT), in as few requests as the limits allow."""
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        if any(not t.strip() for t in texts):
            raise InvalidInput("cannot embed an empty text")
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for group in batches(texts, self.max_texts, self.max_tokens):
            out[group] = self._embed([texts[i] for i in group], "RETRIEVAL_DOCUMENT")
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """The unit vector of a question (task type RETRIEVAL_QUERY)."""
        if not text.strip():
            raise InvalidInput("cannot embed an empty query")
        return self._embed([text], "RETRIEVAL_QUERY")[0]

    def _embed(self, texts: list[str], task_type: str) -> np.ndarray:
        from google.genai import types

        config = types.EmbedContentConfig(
            task_type=task_type, output_dimensionality=self.output_dimensionality, auto_truncate=True
        )
        started = time.perf_counter()
        try:
            # google-genai retries 429 and 503 itself (HttpRetryOptions on the client, see _get_client)
            response = self._get_client().models.embed_content(model=self.model, contents=texts, config=config)
        except Exception as exc:  # classified below; anything unknown is re-raised
            status = _retryable_status(exc)
            if status is not None:
                raise Unavailable(
                    f"Vertex AI embeddings ({self.model}) answered {status} {self.retry.max_attempts} times; "
                    "giving up for now"
                ) from exc
            mapped = _classified(exc, self.model)
            if mapped is None:
                raise
            raise mapped from exc
        vectors = self._validated(response, len(texts))
        logs.event(
            log, logging.DEBUG, "texts embedded", model=self.model, task_type=task_type, texts=len(texts),
            ms=round((time.perf_counter() - started) * 1000, 1),
        )  # fmt: skip
        return vectors

    def _validated(self, response: Any, count: int) -> np.ndarray:
        embeddings = list(response.embeddings or [])
        if len(embeddings) != count:
            raise Unavailable(f"Vertex AI returned {len(embeddings)} embeddings for {count} texts")
        matrix = np.asarray([list(e.values or []) for e in embeddings], dtype=np.float64)
        if matrix.shape != (count, self._dimension):
            raise InvalidInput(
                f"Vertex AI returned vectors of shape {matrix.shape}; this index expects {self._dimension} dims "
                f"({self.model_id})"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidInput(f"Vertex AI returned non-finite values ({self.model_id})")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if np.any(norms == 0):
            raise InvalidInput(f"Vertex AI returned a zero vector ({self.model_id})")
        return (matrix / norms).astype(np.float32)


def _retryable_status(exc: Exception) -> int | None:
    """429 or 503 from the service (the only statuses worth another attempt), else None."""
    from google.genai import errors

    if isinstance(exc, errors.APIError) and exc.code in _RETRY_STATUSES:
        return int(exc.code)
    return None


def _classified(exc: Exception, model: str) -> Exception | None:
    """400-class answers are permanent; timeouts, connection failures and other errors of the service are
    transient (not retried here: the platform redelivers the event); None for anything else (a bug)."""
    import httpx
    from google.genai import errors

    if isinstance(exc, errors.ClientError) and exc.code in (400, 413):
        return InvalidInput(f"Vertex AI embeddings ({model}) refused the request: {exc.code} {exc.message}")
    if isinstance(exc, errors.APIError):
        return Unavailable(f"Vertex AI embeddings ({model}) answered {exc.code} {exc.message}")
    if isinstance(exc, httpx.TimeoutException | httpx.TransportError):
        return Unavailable(f"Vertex AI embeddings ({model}): {type(exc).__name__}: {exc}")
    return None
