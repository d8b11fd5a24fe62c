"""The questions-answered index: at ingest, questions each article answers; at query time, one more leg.

The embed stage asks the `Generator` port, once per article chunk, for up to n questions the article answers
(prompt questions_v1), embeds them as queries (they are questions, compared with the user's question) and
stores them in the `QuestionIndex`, pointing to their chunk. At query time the retriever searches them with the
question's vector: each chunk ranks by its best-matching question (regrag.query.retrieve).

Generation never blocks ingestion: a failed chunk is logged and counted and keeps whatever questions it had (a
redelivered message loses nothing); after `max_consecutive_failures` failures in a row the rest of the message
is skipped, so a model that is down costs a few timeouts per document, not one per article. The generated
questions are never shown or quoted; they only rank chunks.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from regrag import logs
from regrag.domain.generation import GenerationError
from regrag.domain.models import Chunk
from regrag.ports import Embedder, Generator, QuestionIndex
from regrag.prompts import Prompt
from regrag.prompts.prompted import PromptedModel, prompt_json

log = logs.get("questions")

# a generated question is one sentence; anything longer is the model restating the article, cut to one
MAX_QUESTION_CHARS = 100
# the article as the model reads it: 600 characters hold 99.7 % of the corpus's 26,545 articles whole (median 108)
TEXT_CHARS = 600
# a model that is down costs three deadlines per document (30 s at REGRAG_QUESTIONS_TIMEOUT_S = 10), not one per
# article, while a failure or two (a blocked or truncated answer) does not stop the document's other articles
MAX_CONSECUTIVE_FAILURES = 3
SKIPPED_AFTER_FAILURES = "skipped_after_failures"


def response_schema(count: int) -> dict[str, Any]:
    """{"questions": [string, …]} with at most `count` items (the service enforces it; `parse_questions` checks)."""
    return {
        "type": "object",
        "properties": {"questions": {"type": "array", "maxItems": count, "items": {"type": "string"}}},
        "required": ["questions"],
    }


class InvalidQuestionsOutput(ValueError):
    """The model's JSON parsed but is not {"questions": [...]}."""


def parse_questions(raw: Any, max_questions: int) -> list[str]:
    """The distinct non-empty questions, whitespace collapsed, each cut to MAX_QUESTION_CHARS, at most
    `max_questions`. An empty list is a valid answer (an article without substance)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("questions"), list):
        raise InvalidQuestionsOutput('expected a JSON object with a "questions" array')
    found: dict[str, None] = {}
    for item in raw["questions"]:
        if isinstance(item, str) and item.strip():
            found.setdefault(" ".join(item.split())[:MAX_QUESTION_CHARS], None)
    return list(found)[:max_questions]


def article_json(chunk: Chunk, text_chars: int = TEXT_CHARS) -> str:
    """The article as the model reads it: one JSON object, so its text stays data (see rerank.prompt_json)."""
    return prompt_json(
        {
            "title": chunk.meta.title,
            "heading_path": list(chunk.heading_path),
            "article": chunk.article,
            "text": chunk.text[:text_chars],
        }
    )


@dataclass
class QuestionsIndexed:
    """What one `index_chunks` call did (logged by the embed stage)."""

    chunks: int = 0  # chunks handed over
    asked: int = 0  # model calls made
    indexed: int = 0  # chunks whose questions were stored (possibly none)
    questions: int = 0  # question vectors stored
    failed: Counter[str] = field(default_factory=Counter)  # reason → chunks

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunks": self.chunks,
            "asked": self.asked,
            "indexed": self.indexed,
            "questions": self.questions,
            "failed": dict(self.failed),
        }


class QuestionsIndexer(PromptedModel):
    """Generates, embeds and stores the questions of article chunks; never raises.

    Args:
        generator: the model (`Generator` port).
        model_id: the model's name, for logs.
        prompt: a prompt with `## system` and `## user` sections; the user template takes $count and $article.
        embedder: embeds each question with `embed_query` (pass one without a query cache: ingest questions
            would evict users' questions from it).
        index: where the vectors go.
        timeout_s: the deadline of each model call (REGRAG_QUESTIONS_TIMEOUT_S).
        max_questions: at most this many questions per chunk (REGRAG_QUESTIONS_PER_CHUNK).
        text_chars: how much of the article's text the model reads.
        kinds: chunk kinds that get questions (articles; paragraphs of documents without articles are left out).
        max_consecutive_failures: after this many failed chunks in a row, the rest of the call is skipped.
    """

    def __init__(
        self,
        generator: Generator,
        model_id: str,
        prompt: Prompt,
        embedder: Embedder,
        index: QuestionIndex,
        *,
        timeout_s: float,
        max_questions: int,
        text_chars: int = TEXT_CHARS,
        kinds: tuple[str, ...] = ("article",),
        max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
    ) -> None:
        super().__init__(generator, model_id, prompt, placeholders={"count", "article"}, timeout_s=timeout_s)
        self.embedder = embedder
        self.index = index
        self.max_questions = max_questions
        self.text_chars = text_chars
        self.kinds = kinds
        self.max_consecutive_failures = max_consecutive_failures

    def build_prompt(self, chunk: Chunk) -> str:
        return self.user_turn(count=self.max_questions, article=article_json(chunk, self.text_chars))

    def questions_for(self, chunk: Chunk) -> list[str]:
        """The model's questions for one chunk; raises GenerationError or InvalidQuestionsOutput."""
        raw = self.ask(self.build_prompt(chunk), response_schema(self.max_questions))
        return parse_questions(raw, self.max_questions)

    def index_chunks(self, chunks: Sequence[Chunk]) -> QuestionsIndexed:
        """Questions for every eligible chunk, stored in one write; failures are counted, never raised."""
        started = time.perf_counter()
        report = QuestionsIndexed(chunks=len(chunks))
        done: list[tuple[Chunk, list[np.ndarray]]] = []
        in_a_row = 0
        eligible = [c for c in chunks if c.kind in self.kinds]
        for position, chunk in enumerate(eligible):
            if in_a_row >= self.max_consecutive_failures:
                report.failed[SKIPPED_AFTER_FAILURES] += len(eligible) - position
                break
            report.asked += 1
            try:
                questions = self.questions_for(chunk)
                vectors = [np.asarray(self.embedder.embed_query(q), dtype=np.float32) for q in questions]
            except GenerationError as exc:
                reason = exc.reason
            except InvalidQuestionsOutput:
                reason = "invalid_output"
            except Exception:
                # an aid must never fail ingestion: a bug here costs this chunk's questions
                log.error(
                    "question generation failed unexpectedly", exc_info=True, extra={"fields": {"chunk": chunk.id}}
                )
                reason = "error"
            else:
                done.append((chunk, vectors))
                in_a_row = 0
                continue
            report.failed[reason] += 1
            in_a_row += 1
            logs.event(log, logging.DEBUG, "no questions for a chunk", chunk=chunk.id, reason=reason)
        if done:
            try:
                self.index.upsert([c for c, _ in done], [v for _, v in done])
            except Exception:
                log.error("storing question vectors failed", exc_info=True, extra={"fields": {"chunks": len(done)}})
                report.failed["store_error"] += len(done)
            else:
                report.indexed = len(done)
                report.questions = sum(len(v) for _, v in done)
        logs.event(
            log,
            logging.WARNING if report.failed else logging.INFO,
            "questions indexed",
            **self.log_fields(),
            ms=round((time.perf_counter() - started) * 1000, 1),
            **report.to_dict(),
        )
        return report
