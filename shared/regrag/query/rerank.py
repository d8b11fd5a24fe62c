"""rerank: reorder retrieval candidates for the question; on any failure, keep the retrieval order.

`rerank_status` says what happened: "ok" (a model scored the candidates), "skipped" (reranking is off, no model
is configured, or there are no more candidates than top_n) or "fallback:<reason>" (the model call or its answer
failed; the candidates keep the retrieval order). Reasons: timeout, connection, rate_limited, server_error,
client_error, blocked, empty, invalid_json, truncated (from regrag.domain.generation), invalid_output (JSON
without a single usable item) and error (an unexpected exception, logged with its traceback).

What "keep the top n" means after an "ok" rerank: the top_n candidates with the highest model scores come first,
best first (equal scores keep retrieval order); every other candidate follows in retrieval order, whether the
model scored it lower or did not score it (missing, unknown or duplicate indices; beyond `max_candidates`).
Nothing is dropped: the query response lists every candidate and compose takes the first compose_top_n. Each
candidate the model scored carries rerank_score and rerank_reason wherever it lands.

`LlmReranker` is pure pipeline code over the `Generator` port: prompt building, validation, ordering and the
cache are here; the Gemini client is in regrag.adapters.gcp.generator.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from typing import Any

from regrag import logs
from regrag.domain.generation import GenerationError
from regrag.domain.results import Candidate
from regrag.lru import LruCache
from regrag.ports import Generator
from regrag.prompts import Prompt
from regrag.prompts.prompted import PromptedModel, prompt_json
from regrag.query.rerank_output import (
    InvalidRerankOutput,
    Scores,
    apply_scores,
    parse_scores,
    response_schema,
)

# What is sent, measured in infra/README.md "Rerank deadline": each candidate adds its text (cut to 300 characters)
# to the prompt and ≈ 60 characters to the answer, which decoding pays for. The 12 candidates of REGRAG_TOP_K fit the
# 6 s deadline; 20, the most a caller asking for up to 100 gets scored, need ≈ 9 s.
MAX_CANDIDATES = 20
TEXT_CHARS = 300

STATUS_OK = "ok"
STATUS_SKIPPED = "skipped"
FALLBACK = "fallback:"

log = logs.get("rerank")


class RetrievalOrderReranker:
    """The fallback: keeps the fused retrieval order. Used when no model is configured."""

    def __init__(self, reason: str = STATUS_SKIPPED) -> None:
        self.reason = reason

    def rerank(self, question: str, candidates: Sequence[Candidate], top_n: int) -> tuple[list[Candidate], str]:
        return list(candidates), self.reason


def rerank_candidates(
    question: str, candidates: Sequence[Candidate], reranker: object, *, top_n: int, enabled: bool = True
) -> tuple[list[Candidate], str]:
    """Apply `reranker` unless disabled or pointless (no more candidates than `top_n`: nothing to choose)."""
    if not enabled or len(candidates) <= top_n:
        return list(candidates), STATUS_SKIPPED
    reordered, status = reranker.rerank(question, candidates, top_n)  # type: ignore[attr-defined]
    return list(reordered), status


def candidate_line(index: int, candidate: Candidate, text_chars: int = TEXT_CHARS) -> str:
    """One candidate as one JSON line: 1-based index, title, article label and the text cut to `text_chars`.

    JSON encoding is what keeps document text data: quotes and newlines in it are escaped, so a candidate
    cannot end its own line, add fields or impersonate another index.
    """
    chunk = candidate.chunk
    return prompt_json(
        {"index": index, "title": chunk.meta.title, "article": chunk.article, "text": chunk.text[:text_chars]}
    )


class LlmReranker(PromptedModel):
    """The `Reranker` port on a text model: one scored JSON answer per question, retrieval order on failure.

    Args:
        generator: the model (`Generator` port); its typed errors become "fallback:<reason>".
        model_id: the model's name, part of the cache key and the logs.
        prompt: a prompt with `## system` and `## user` sections; the user template takes $question,
            $count and $candidates.
        timeout_s: the deadline passed to every model call (REGRAG_RERANK_TIMEOUT_S).
        cache_size: how many answers the in-memory LRU keeps (0: no cache; REGRAG_RERANK_CACHE_SIZE). Only
            successful answers are cached, so a failure is retried by the next identical request.
        max_candidates: how many candidates are sent; the rest are appended unscored (bounds prompt size and
            latency when a caller asks for up to 100).
        text_chars: how much of each candidate's text is sent.
    """

    def __init__(
        self,
        generator: Generator,
        model_id: str,
        prompt: Prompt,
        *,
        timeout_s: float,
        cache_size: int,
        max_candidates: int = MAX_CANDIDATES,
        text_chars: int = TEXT_CHARS,
    ) -> None:
        super().__init__(
            generator, model_id, prompt, placeholders={"question", "count", "candidates"}, timeout_s=timeout_s
        )
        self.max_candidates = max_candidates
        self.text_chars = text_chars
        # public: /healthz reports its hit/miss counters (wiring registers it in Services.caches)
        self.cache: LruCache[Scores] = LruCache(cache_size)

    def build_prompt(self, question: str, lines: Sequence[str]) -> str:
        """The user turn: the question and the candidate lines, both JSON-encoded, in the prompt's template."""
        return self.user_turn(question=prompt_json(question), count=len(lines), candidates="\n".join(lines))

    def rerank(self, question: str, candidates: Sequence[Candidate], top_n: int) -> tuple[list[Candidate], str]:
        candidates = list(candidates)
        if not candidates:
            return [], STATUS_SKIPPED
        started = time.perf_counter()
        sent = candidates[: self.max_candidates]
        lines = [candidate_line(i, c, self.text_chars) for i, c in enumerate(sent, 1)]
        # The ids name the candidates; the digest of what was sent catches a chunk whose text changed under
        # the same id (a document re-uploaded under its doc_id), which must be scored again.
        digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
        key = (self.model_id, self.prompt.sha256, question, tuple(c.chunk.id for c in sent), digest)
        scores = self.cache.get(key)
        cached = scores is not None
        if scores is None:
            try:
                raw = self.ask(self.build_prompt(question, lines), response_schema(len(sent)))
                scores = parse_scores(raw, len(sent))
            except GenerationError as exc:
                return self._fallback(candidates, exc.reason, str(exc), exc.details, started)
            except InvalidRerankOutput as exc:
                return self._fallback(candidates, "invalid_output", str(exc), {}, started)
            except Exception:
                # The port promises never to fail: a bug here must cost the ordering, not the answer.
                log.error(
                    "rerank failed unexpectedly; keeping the retrieval order",
                    exc_info=True,
                    extra={"fields": self._fields(candidates, sent, started, status=FALLBACK + "error")},
                )
                return candidates, FALLBACK + "error"
            self.cache.put(key, scores)
        logs.event(
            log,
            logging.INFO,
            "reranked",
            **self._fields(candidates, sent, started, status=STATUS_OK, scored=len(scores), cached=cached),
        )
        return apply_scores(candidates, scores, top_n), STATUS_OK

    def _fallback(
        self, candidates: list[Candidate], reason: str, error: str, details: dict[str, Any], started: float
    ) -> tuple[list[Candidate], str]:
        status = FALLBACK + reason
        fields = self._fields(candidates, candidates[: self.max_candidates], started, status=status)
        logs.event(
            log, logging.WARNING, "rerank fell back to the retrieval order", error=error, details=details, **fields
        )
        return candidates, status

    def _fields(
        self, candidates: Sequence[Candidate], sent: Sequence[Candidate], started: float, **extra: Any
    ) -> dict[str, Any]:
        return self.call_fields(started, candidates=len(candidates), sent=len(sent), **extra)
