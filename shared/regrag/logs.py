"""JSON log lines on stdout with a `severity` field, the shape Cloud Logging parses into structured entries.

An exception's traceback goes in `stack_trace` (the field Cloud Logging and Error Reporting read). Questions can
carry personal data, so a `question` field is redacted from ERROR lines unless REGRAG_LOG_QUESTIONS allows it.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

_CONFIGURED = False
_REDACTED_FIELDS = ("question", "comment")


class JsonFormatter(logging.Formatter):
    def __init__(self, log_questions: bool = False) -> None:
        super().__init__()
        self.log_questions = log_questions

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "severity": record.levelname,
            "message": record.getMessage(),
            "logger": record.name,
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.levelno >= logging.ERROR and not self.log_questions:
            for name in _REDACTED_FIELDS:
                if isinstance(entry.get(name), str):
                    entry[name] = f"[redacted: {len(entry[name])} characters; REGRAG_LOG_QUESTIONS=true logs it]"
        if record.exc_info:
            entry["stack_trace"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(level: str = "INFO", stream: Any = None, log_questions: bool = False) -> None:
    """Install the JSON formatter on the `regrag` logger once (idempotent; no import-time side effects)."""
    global _CONFIGURED
    logger = logging.getLogger("regrag")
    if _CONFIGURED:
        return  # the first caller (the CLI, or a function's cold start) decides level and stream
    logger.setLevel(level)
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(JsonFormatter(log_questions))
    logger.addHandler(handler)
    logger.propagate = False
    _CONFIGURED = True


def get(name: str) -> logging.Logger:
    return logging.getLogger(f"regrag.{name}")


def event(logger: logging.Logger, level: int, message: str, *, exc_info: bool = False, **fields: Any) -> None:
    """Log `message` with structured fields (ids, counts, timings) merged into the JSON entry; with `exc_info`,
    the exception being handled goes in `stack_trace`."""
    logger.log(level, message, exc_info=exc_info, extra={"fields": fields})
