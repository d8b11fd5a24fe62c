"""Gemini through `google-genai`: one schema-constrained JSON answer per call, failures as typed errors.

One call is one HTTP request. The client gets no `HttpRetryOptions` (the SDK then makes a single attempt),
and automatic continuation and automatic function calling are switched off, because either would send
requests the caller did not budget for: the reranker has a 4 s deadline and its own fallback.

The Gemini API (API key; locally from GEMINI_API_KEY, on GCP from Secret Manager) and Vertex AI
(`vertexai=True`, project, location, application default credentials) differ only in how the client is
built. `base_url` points the client somewhere else (tests use an HTTP fake, tests/fakes/gemini_fake.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from regrag.cloud_facts import DEFAULT_TEMPERATURE, GenerationParams, generation_params
from regrag.domain.generation import (
    GenerationBlocked,
    GenerationConnectionError,
    GenerationEmpty,
    GenerationError,
    GenerationInvalidJson,
    GenerationRateLimited,
    GenerationRejected,
    GenerationServerError,
    GenerationTimeout,
    GenerationTruncated,
)

# Finish reasons that mean a filter stopped the answer (types.FinishReason); the text, if any, is unusable.
_BLOCKED_FINISH = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT"}
)
# Finish reasons that mean the answer stopped before it was complete. CONTINUATION comes with a token to
# fetch the rest; we never follow it (that would be a second request inside the caller's deadline).
_TRUNCATED_FINISH = frozenset({"MAX_TOKENS", "CONTINUATION"})
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
# near-deterministic answers: the same candidates and question should score the same (the answers are cached)
TEMPERATURE = 0.1
# room for the longest answer asked of it: 20 scored candidates with reasons, ≈ 1,210 characters ≈ 1.2 k tokens
# (infra/README.md "Rerank deadline"); an answer cut at the cap is GenerationTruncated, never half-parsed
MAX_OUTPUT_TOKENS = 2048


class GeminiGenerator:
    """The `Generator` port on Gemini: `generate_json(prompt, schema)` → the parsed JSON the model returned.

    Raises a `GenerationError` subclass for every way the call can fail (see regrag.domain.generation);
    other exceptions are bugs. The `schema` is an OpenAPI-style schema dict (the Gemini `responseSchema`
    subset: type, properties, items, required, minimum, maximum, minItems, maxItems, propertyOrdering).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        vertexai: bool = False,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
        base_url: str | None = None,
        timeout_s: float,
        params: GenerationParams | None = None,
        max_output_tokens: int = MAX_OUTPUT_TOKENS,
    ) -> None:
        """Build the client (no network). `credentials` (Vertex mode only) overrides application default
        credentials; `timeout_s` is the default per-request timeout when a call does not pass one.

        `params`: the temperature and thinking the requests carry (`Settings.gemini_params`); by default
        `cloud_facts.generation_params(model, DEFAULT_TEMPERATURE)`: only what the model's row says it takes.

        The timeout is httpx's: it bounds each phase (connect, send, every read), not their sum. A
        non-streaming answer arrives in one read, and the client also sends it as X-Server-Timeout, so
        the service gives up at the same time (504 → GenerationTimeout).
        """
        from google import genai
        from google.genai import types

        if not vertexai and not api_key:
            raise ValueError("the Gemini API needs an API key (or use Vertex AI mode)")
        self.model = model
        self.params = params if params is not None else generation_params(model, DEFAULT_TEMPERATURE)
        self.max_output_tokens = max_output_tokens
        self.timeout_s = timeout_s
        self._types = types
        # retry_options stays unset: the SDK then stops after one attempt (no hidden retries).
        http_options = types.HttpOptions(base_url=base_url, timeout=_ms(timeout_s))
        if vertexai:
            # `vertexai` is always passed explicitly so GOOGLE_GENAI_USE_VERTEXAI in the environment cannot flip it.
            self._client = genai.Client(
                vertexai=True, project=project, location=location, credentials=credentials, http_options=http_options
            )
        else:
            self._client = genai.Client(vertexai=False, api_key=api_key, http_options=http_options)

    def generate_json(
        self, prompt: str, schema: dict[str, Any], *, system: str | None = None, timeout_s: float | None = None
    ) -> Any:
        """One `generateContent` request with JSON output constrained by `schema`; the parsed JSON value."""
        types = self._types
        thinking = self.params.thinking_config()
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=self.params.temperature,  # None: not sent (a model that ignores it)
            max_output_tokens=self.max_output_tokens,
            candidate_count=1,
            response_mime_type="application/json",
            response_schema=schema,
            thinking_config=types.ThinkingConfig(**thinking) if thinking else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            automatic_continuation=False,
            http_options=types.HttpOptions(timeout=_ms(timeout_s)) if timeout_s else None,
        )
        try:
            response = self._client.models.generate_content(model=self.model, contents=prompt, config=config)
        except Exception as exc:
            typed = _classify(exc)
            if typed is None:
                raise  # not a failure of the service: a bug, which must not pass for a fallback reason
            raise typed from exc
        return json_from_response(response)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _name(value: Any) -> str | None:
    """An enum member's name (the SDK's enums are str enums; unknown values arrive as plain strings)."""
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _classify(exc: Exception) -> GenerationError | None:
    """The typed error for an exception from the SDK call; None for exceptions that are not the service's."""
    import httpx
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        details = {"http_status": exc.code, "error_status": exc.status}
        message = f"Gemini answered HTTP {exc.code} {exc.status or ''}: {exc.message or ''}".strip()
        if exc.code == 429:
            return GenerationRateLimited(message, details=details)
        if exc.code == 504:  # DEADLINE_EXCEEDED: the service's side of our timeout (X-Server-Timeout)
            return GenerationTimeout(message, details=details)
        if isinstance(exc, errors.ServerError) or exc.code >= 500:
            return GenerationServerError(message, details=details)
        return GenerationRejected(message, details=details)
    if isinstance(exc, httpx.TimeoutException):
        return GenerationTimeout(f"no answer from Gemini in time ({type(exc).__name__})")
    if isinstance(exc, httpx.TransportError):
        return GenerationConnectionError(f"connection to Gemini failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, json.JSONDecodeError):  # a 2xx whose body is not JSON (a proxy's page, say)
        return GenerationServerError("Gemini's response body is not JSON")
    return _classify_requests(exc)  # Vertex AI with mTLS goes through `requests`, not httpx


def _classify_requests(exc: Exception) -> GenerationError | None:
    try:
        import requests
    except ImportError:  # pragma: no cover - google-auth[requests] is a dependency of google-genai
        return None
    if isinstance(exc, requests.Timeout):
        return GenerationTimeout(f"no answer from Gemini in time ({type(exc).__name__})")
    if isinstance(exc, requests.ConnectionError):
        return GenerationConnectionError(f"connection to Gemini failed: {type(exc).__name__}")
    return None


def json_from_response(response: Any) -> Any:
    """The JSON value in a `GenerateContentResponse`, or the typed error saying why there is none.

    Order matters: a block explains an empty answer; a MAX_TOKENS stop explains text that does not parse.
    """
    candidates = response.candidates or []
    if not candidates:
        feedback = response.prompt_feedback
        block = _name(feedback.block_reason) if feedback is not None else None
        if block:
            raise GenerationBlocked(f"Gemini blocked the prompt: {block}", details={"block_reason": block})
        raise GenerationEmpty("Gemini answered without a candidate")
    first = candidates[0]
    finish = _name(first.finish_reason)
    details: dict[str, Any] = {"finish_reason": finish}
    if finish in _BLOCKED_FINISH:
        raise GenerationBlocked(f"Gemini stopped the answer: {finish}", details=details)
    parts = first.content.parts if first.content is not None and first.content.parts else []
    text = "".join(p.text for p in parts if p.text and not p.thought)  # thought summaries are not the answer
    if not text.strip():
        if finish in _TRUNCATED_FINISH:  # e.g. the token budget went on thinking
            raise GenerationTruncated(f"Gemini stopped before any text: {finish}", details=details)
        raise GenerationEmpty(f"Gemini's candidate has no text (finish reason {finish})", details=details)
    try:
        return _loads(text)
    except ValueError as exc:
        details["chars"] = len(text)
        if finish in _TRUNCATED_FINISH:
            raise GenerationTruncated(f"Gemini's JSON was cut off: {finish}", details=details) from exc
        raise GenerationInvalidJson(f"Gemini's answer is not JSON: {exc}", details=details) from exc


def _loads(text: str) -> Any:
    """json.loads, once more without a Markdown code fence (a model habit even in JSON mode)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        fenced = _FENCE.match(text.strip())
        if fenced is None:
            raise
        return json.loads(fenced.group(1))
