"""A question not in Chinese, put into Chinese by the model before it is analysed.

The corpus is Chinese regulations and the lexical search reads Chinese words: an English question finds little
and is refused with a note asking for Chinese (query/render.py). Where Gemini is configured (on GCP, or locally
with GEMINI_API_KEY) the question is first translated, and the answer says what was searched: the translation
is a search query, shown to the user so that they can judge it, never quoted or cited. Every quote stays
verbatim from the regulations, so a poor translation costs relevance, never a wrong quotation.

`Translation.status`: "ok" (a Chinese question to search), "skipped" (the question is in Chinese, or no
translator is configured), or "fallback:<reason>" (the question is analysed as asked, with the note asking for
Chinese). Reasons: those of regrag.domain.generation (timeout, connection, rate_limited, server_error,
client_error, blocked, empty, invalid_json, truncated), invalid_output (JSON without a usable Chinese
"question_zh") and error (an unexpected exception, logged with its traceback).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from regrag import logs
from regrag.domain.generation import GenerationError
from regrag.lru import LruCache
from regrag.ports import Generator
from regrag.prompts import Prompt
from regrag.prompts.prompted import PromptedModel, prompt_json, string_field, string_field_schema
from regrag.query.question import in_chinese
from regrag.query.rerank import FALLBACK, STATUS_OK, STATUS_SKIPPED

log = logs.get("translate")

# the prompt asks for at most 150 characters; a question is rarely longer than 100 (dev, lay dev: the longest
# 120), so anything past 300 is not a translation of it
MAX_CHARS = 300

RESPONSE_SCHEMA = string_field_schema("question_zh")

TRANSLATED_NOTE = "原问题不是中文，已由模型译为中文后检索：「{zh}」。引文均为法规原文，请核对译文是否符合原意。"


class InvalidTranslation(ValueError):
    """The model's JSON parsed but holds no usable Chinese "question_zh"."""


def parse_translation(raw: Any) -> str:
    """The translated question, whitespace collapsed; InvalidTranslation when it is missing, not Chinese (the
    model echoed the question) or too long to be a translation of a question."""
    text = string_field(raw, "question_zh", InvalidTranslation)
    if not in_chinese(text):
        raise InvalidTranslation("the translation is not Chinese")
    if len(text) > MAX_CHARS:
        raise InvalidTranslation(f"the translation is {len(text)} characters (at most {MAX_CHARS})")
    return text


@dataclass(frozen=True)
class Translation:
    status: str
    text: str | None = None  # the Chinese question searched (status ok)

    @property
    def note(self) -> str | None:
        """What the answer says about it: the question searched, when it is not the one asked."""
        return TRANSLATED_NOTE.format(zh=self.text) if self.text else None


NOT_TRANSLATED = Translation(STATUS_SKIPPED)


class QuestionTranslator(PromptedModel):
    """Question in another language → the same question in Chinese (the `Generator` port).

    Args:
        generator: the model; its typed errors become "fallback:<reason>".
        model_id: the model's name, part of the cache key and the logs.
        prompt: a prompt with `## system` and `## user` sections; the user template takes $question.
        timeout_s: the deadline of every call (REGRAG_TRANSLATE_TIMEOUT_S); it adds to the query's latency.
        cache_size: how many translations the in-memory LRU keeps (REGRAG_TRANSLATE_CACHE_SIZE); only successes
            are cached.
    """

    def __init__(
        self, generator: Generator, model_id: str, prompt: Prompt, *, timeout_s: float, cache_size: int
    ) -> None:
        super().__init__(generator, model_id, prompt, placeholders={"question"}, timeout_s=timeout_s)
        self.cache: LruCache[str] = LruCache(cache_size)

    def translate(self, question: str) -> Translation:
        """The question in Chinese, or why not; never raises. A question already in Chinese is not sent."""
        if in_chinese(question):
            return NOT_TRANSLATED
        started = time.perf_counter()
        key = (self.model_id, self.prompt.sha256, " ".join(question.split()))
        found = self.cache.get(key)
        if found is not None:
            self._log(logging.INFO, "question translation reused", started, status=STATUS_OK, cached=True)
            return Translation(STATUS_OK, found)
        try:
            text = parse_translation(self.ask(self.user_turn(question=prompt_json(question)), RESPONSE_SCHEMA))
        except GenerationError as exc:
            return self._fallback(exc.reason, str(exc), started)
        except InvalidTranslation as exc:
            return self._fallback("invalid_output", str(exc), started)
        except Exception:
            # a translation is an aid: a bug here must cost the translation, never the query
            log.error(
                "question translation failed unexpectedly; the question is searched as asked",
                exc_info=True,
                extra={"fields": self.call_fields(started, status=FALLBACK + "error")},
            )
            return Translation(FALLBACK + "error")
        self.cache.put(key, text)
        self._log(logging.INFO, "question translated", started, status=STATUS_OK, cached=False, chars=len(text))
        return Translation(STATUS_OK, text)

    def _fallback(self, reason: str, error: str, started: float) -> Translation:
        status = FALLBACK + reason
        self._log(
            logging.WARNING, "question translation fell back: searched as asked", started, status=status, error=error
        )
        return Translation(status)

    def _log(self, level: int, message: str, started: float, **fields: Any) -> None:
        logs.event(log, level, message, **self.call_fields(started, **fields))


def translate_question(question: str, translator: QuestionTranslator | None) -> Translation:
    """What the read path searches for `question`: its translation when one is configured and needed."""
    if translator is None:
        return NOT_TRANSLATED
    return translator.translate(question)
