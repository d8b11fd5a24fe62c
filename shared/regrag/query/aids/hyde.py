"""HyDE: a hypothetical answer, embedded as a passage, searched beside the question (one more retrieval leg).

Gao, Ma, Lin & Callan, "Precise Zero-Shot Dense Retrieval without Relevance Labels" (ACL 2023): a model writes
a passage that would answer the question; its embedding sits among real passages in the document space, where a
short question often does not. The passage may be wrong and is used only as a search vector: it is never
quoted, cited or shown as an answer (the query response carries it under `debug` at most).

`HydeResult.status` says what happened: "ok" (a vector), or "fallback:<reason>" (no vector; retrieval runs as
without HyDE). Reasons: those of regrag.domain.generation (timeout, connection, rate_limited, server_error,
client_error, blocked, empty, invalid_json, truncated), invalid_output (JSON without a usable "answer") and
error (an unexpected exception, logged with its traceback). "skipped" (HyDE off) is the retriever's.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from regrag import logs
from regrag.domain.generation import GenerationError
from regrag.lru import LruCache
from regrag.ports import Embedder, Generator
from regrag.prompts import Prompt
from regrag.prompts.prompted import PromptedModel, prompt_json, string_field, string_field_schema
from regrag.query.rerank import FALLBACK, STATUS_OK

log = logs.get("hyde")

# The passage is embedded as one e5 passage, and a hypothetical answer is one article: 400 characters are longer
# than 98.7 % of the corpus's 26,545 articles (median 108) and ≈ 260–330 e5 tokens (0.66 median, 0.83 max tokens a
# character over 362 of them), inside e5's 512-token window
MAX_CHARS = 400

RESPONSE_SCHEMA = string_field_schema("answer")


class InvalidHydeOutput(ValueError):
    """The model's JSON parsed but holds no non-empty "answer" string."""


def parse_passage(raw: Any, max_chars: int) -> str:
    """The hypothetical passage from the model's answer, whitespace collapsed and cut to `max_chars`."""
    return string_field(raw, "answer", InvalidHydeOutput)[:max_chars]


@dataclass(frozen=True)
class HydeResult:
    status: str
    vector: np.ndarray | None = None
    passage: str | None = None  # for debugging only: never a source, never quoted
    cached: bool = False


class Hyde(PromptedModel):
    """Question → hypothetical passage (the `Generator` port) → its document-side embedding.

    Args:
        generator: the model; its typed errors become "fallback:<reason>".
        model_id: the model's name, part of the cache key and the logs.
        prompt: a prompt with `## system` and `## user` sections; the user template takes $question.
        embedder: embeds the passage with `embed_documents` (it imitates a passage, not a question).
        timeout_s: the deadline passed to every model call (REGRAG_HYDE_TIMEOUT_S); it adds to the query's
            latency when the model is slow, so keep it short.
        cache_size: how many (passage, vector) pairs the in-memory LRU keeps (REGRAG_HYDE_CACHE_SIZE); only
            successes are cached.
        max_chars: the passage is cut to this length before embedding.
    """

    def __init__(
        self,
        generator: Generator,
        model_id: str,
        prompt: Prompt,
        embedder: Embedder,
        *,
        timeout_s: float,
        cache_size: int,
        max_chars: int = MAX_CHARS,
    ) -> None:
        super().__init__(generator, model_id, prompt, placeholders={"question"}, timeout_s=timeout_s)
        self.embedder = embedder
        self.max_chars = max_chars
        self.cache: LruCache[tuple[str, np.ndarray]] = LruCache(cache_size)

    def build_prompt(self, question: str) -> str:
        return self.user_turn(question=prompt_json(question))

    def expand(self, question: str) -> HydeResult:
        """The hypothetical passage's vector, or a fallback status; never raises."""
        started = time.perf_counter()
        # The embedder is part of the key: a vector from another model must never be served.
        key = (self.model_id, self.prompt.sha256, self.embedder.model_id, " ".join(question.split()))
        found = self.cache.get(key)
        if found is not None:
            self._log(logging.INFO, "hyde passage reused", started, status=STATUS_OK, cached=True)
            return HydeResult(STATUS_OK, found[1], found[0], cached=True)
        try:
            raw = self.ask(self.build_prompt(question), RESPONSE_SCHEMA)
            passage = parse_passage(raw, self.max_chars)
            vector = np.asarray(self.embedder.embed_documents([passage])[0], dtype=np.float32)
        except GenerationError as exc:
            return self._fallback(exc.reason, str(exc), exc.details, started)
        except InvalidHydeOutput as exc:
            return self._fallback("invalid_output", str(exc), {}, started)
        except Exception:
            # HyDE is an aid: a bug here (or an embedder failure) must cost the extra leg, never the query.
            log.error(
                "hyde failed unexpectedly; no hypothetical-answer leg",
                exc_info=True,
                extra={"fields": self.call_fields(started, status=FALLBACK + "error")},
            )
            return HydeResult(FALLBACK + "error")
        self.cache.put(key, (passage, vector))
        self._log(logging.INFO, "hyde passage generated", started, status=STATUS_OK, cached=False, chars=len(passage))
        return HydeResult(STATUS_OK, vector, passage)

    def _fallback(self, reason: str, error: str, details: dict[str, Any], started: float) -> HydeResult:
        status = FALLBACK + reason
        self._log(
            logging.WARNING,
            "hyde fell back: no hypothetical-answer leg",
            started,
            status=status,
            error=error,
            details=details,
        )
        return HydeResult(status)

    def _log(self, level: int, message: str, started: float, **fields: Any) -> None:
        logs.event(log, level, message, **self.call_fields(started, **fields))
