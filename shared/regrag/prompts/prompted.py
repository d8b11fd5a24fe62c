"""A versioned prompt answered by a text model as JSON: what HyDE (query/aids/hyde.py), the questions-answered index
(ingest/questions.py), the reranker (query/rerank.py) and the question translator (query/translate.py) share.

Each binds one prompt file (`## system` and a `## user` template) to the `Generator` port with one deadline, builds
its user turn from JSON-encoded data (`prompt_json`), and logs the model, prompt and prompt digest with every
call, never the question or document text. What each asks, validates and caches is its own.
"""

from __future__ import annotations

import json
import time
from typing import Any

from regrag.ports import Generator
from regrag.prompts import Prompt


def string_field_schema(name: str) -> dict[str, Any]:
    """The response schema of an answer that is one JSON object with one string: {"answer": string}."""
    return {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}


def string_field(raw: Any, name: str, invalid: type[ValueError]) -> str:
    """The non-empty string `name` of the model's JSON object (`string_field_schema`), whitespace collapsed;
    `invalid` when the answer is not such an object."""
    if not isinstance(raw, dict):
        raise invalid(f"expected a JSON object, got {type(raw).__name__}")
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise invalid(f'no non-empty "{name}" string')
    return " ".join(value.split())


def prompt_json(value: Any) -> str:
    """JSON for the prompt, with `<` and `>` escaped (still valid JSON) so no document text can write a tag
    such as </candidates> that would end the data block it sits in."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")


class PromptedModel:
    """A prompt on a model: the system turn, the user template and the deadline of every call.

    Args:
        generator: the model (`Generator` port); it raises regrag.domain.generation errors, which the subclass
            turns into its fallback.
        model_id: the model's name, for logs and cache keys.
        prompt: a prompt with `## system` and `## user` sections.
        placeholders: what the user template must take ($question, $count …); a prompt without one of them fails
            when the app is built, not on the first call.
        timeout_s: the deadline passed to every model call.
    """

    def __init__(
        self, generator: Generator, model_id: str, prompt: Prompt, *, placeholders: set[str], timeout_s: float
    ) -> None:
        self.generator = generator
        self.model_id = model_id
        self.prompt = prompt
        self.timeout_s = timeout_s
        self.system = prompt.section("system")
        self._user = prompt.template("user", placeholders)

    def user_turn(self, **values: Any) -> str:
        """The user template with `values` in (substitute does not rescan what it inserts, so a `$name` inside
        document text stays literal)."""
        return self._user.substitute(**values)

    def ask(self, user_turn: str, schema: dict[str, Any]) -> Any:
        """The model's JSON answer to `user_turn` under `schema`; raises GenerationError."""
        return self.generator.generate_json(user_turn, schema, system=self.system, timeout_s=self.timeout_s)

    def call_fields(self, started: float, **extra: Any) -> dict[str, Any]:
        """What a call's log line names: the model and prompt (`log_fields`), the time since `started`
        (time.perf_counter) and `extra`; never the question or document text."""
        return {**self.log_fields(), "elapsed_ms": round((time.perf_counter() - started) * 1000, 2), **extra}

    def log_fields(self) -> dict[str, Any]:
        """What every log line of a call names: the model and the exact prompt text (key and digest)."""
        return {"model": self.model_id, "prompt": self.prompt.key, "prompt_sha256": self.prompt.sha256[:12]}
