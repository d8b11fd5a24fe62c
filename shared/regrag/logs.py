"""JSON log lines on stdout with a `severity` field, the shape Cloud Logging parses into structured entries."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

_CONFIGURED = False


class JsonFormatter(logging.Formatter):
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
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(level: str = "INFO", stream: Any = None) -> None:
    """Install the JSON formatter on the `regrag` logger once (idempotent; no import-time side effects)."""
    global _CONFIGURED
    logger = logging.getLogger("regrag")
    if _CONFIGURED:
        return  # the first caller (the CLI, or a function's cold start) decides level and stream
    logger.setLevel(level)
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    logger.propagate = False
    _CONFIGURED = True


def get(name: str) -> logging.Logger:
    return logging.getLogger(f"regrag.{name}")


def event(logger: logging.Logger, level: int, message: str, **fields: Any) -> None:
    """Log `message` with structured fields (ids, counts, timings) merged into the JSON entry."""
    logger.log(level, message, extra={"fields": fields})
