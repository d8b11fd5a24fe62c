"""Request filters: parsed and validated in one place, with errors a user can act on."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.models import Filters
from regrag.text.metadata import PROVINCES

ASSETS = ("solar", "wind", "coal", "hydro", "nuclear", "grid", "general")
DOC_CLASSES = ("grid", "permit", "technical", "energy", "environment", "land", "safety", "general")
LEVELS = ("national_law", "administrative_regulation", "departmental_rule", "local_regulation", "unknown")
PROVINCE_CODES = ("national", *sorted(PROVINCES.values()))
_CORPUS_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_DOC_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_VOCAB: dict[str, tuple[str, ...]] = {
    "province": PROVINCE_CODES,
    "asset": ASSETS,
    "doc_class": DOC_CLASSES,
    "regulation_level": LEVELS,
}
_ALIASES = {"level": "regulation_level", "corpora": "corpus", "effective_from": "date_from", "effective_to": "date_to"}
_KEYS = (
    "province",
    "asset",
    "doc_class",
    "regulation_level",
    "corpus",
    "doc_id",
    "date_from",
    "date_to",
    "as_of",
    "include_superseded",
)


def _as_list(key: str, value: Any) -> list[str]:
    items: list[Any]
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise InvalidInput(f"filters.{key} must be a string or a list of strings, got {type(value).__name__}")
    out = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise InvalidInput(f"filters.{key} must contain non-empty strings, got {item!r}")
        out.append(item.strip())
    return list(dict.fromkeys(out))


def _date(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"filters.{key} must be a date string YYYY-MM-DD, got {value!r}")
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError as exc:
        raise InvalidInput(f"filters.{key}={value!r} is not a valid date (YYYY-MM-DD)") from exc


def parse_filters(raw: Any) -> Filters:
    """Turn the request's `filters` object into Filters; raise InvalidInput on anything unexpected."""
    if raw is None:
        return Filters()
    if not isinstance(raw, dict):
        raise InvalidInput(f"filters must be a JSON object, got {type(raw).__name__}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = _ALIASES.get(key, key)
        if name not in _KEYS:
            raise InvalidInput(f"unknown filter {key!r}; allowed: {', '.join(_KEYS)}")
        if value is None or value == "" or value == []:
            continue
        if name in _VOCAB:
            items = [v.lower() for v in _as_list(key, value)]
            bad = [v for v in items if v not in _VOCAB[name]]
            if bad:
                raise InvalidInput(f"filters.{key}: unknown value(s) {bad}; allowed: {', '.join(_VOCAB[name])}")
            values[name] = tuple(items)
        elif name == "corpus":
            items = _as_list(key, value)
            bad = [v for v in items if not _CORPUS_RE.match(v)]
            if bad:
                raise InvalidInput(f"filters.{key}: invalid corpus name(s) {bad}")
            values[name] = tuple(items)
        elif name == "doc_id":
            items = _as_list(key, value)
            bad = [v for v in items if not _DOC_RE.match(v)]
            if bad:
                raise InvalidInput(f"filters.doc_id: invalid id(s) {bad}")
            values[name] = tuple(items)
        elif name == "include_superseded":
            if not isinstance(value, bool):
                raise InvalidInput(f"filters.include_superseded must be true or false, got {value!r}")
            values[name] = value
        else:
            values[name] = _date(key, value)
    if values.get("date_from") and values.get("date_to") and values["date_from"] > values["date_to"]:
        raise InvalidInput(f"filters.date_from {values['date_from']} is after date_to {values['date_to']}")
    return Filters(**values)
