"""Request filters: validated against their schema (regrag.inputs.schemas), then normalised into Filters."""

from __future__ import annotations

import datetime as dt
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.models import LIST_FILTERS, Filters
from regrag.inputs import schemas
from regrag.inputs.schemas import ASSETS, DOC_CLASSES, LEVELS, PROVINCE_CODES

__all__ = ["ASSETS", "DOC_CLASSES", "LEVELS", "PROVINCE_CODES", "parse_filters"]

_VOCAB: dict[str, tuple[str, ...]] = {
    "province": PROVINCE_CODES,
    "asset": ASSETS,
    "doc_class": DOC_CLASSES,
    "regulation_level": LEVELS,
}
_DATES = ("date_from", "date_to", "as_of")


def _as_list(path: str, value: str | list[str]) -> list[str]:
    """ "a, b" or ["a", "b"] → ["a", "b"] (stripped, duplicates dropped, order kept)."""
    items = value.split(",") if isinstance(value, str) else value
    out = [item.strip() for item in items]
    if not all(out):
        raise InvalidInput(f"{path} must contain non-empty strings, got {value!r}")
    return list(dict.fromkeys(out))


def vocabulary_codes(name: str, value: str | list[str], path: str) -> tuple[str, ...]:
    """The codes of a filter with a fixed vocabulary (province, asset …): "SH, national" or ["sh"] → ("sh", …);
    InvalidInput naming `path` for an empty entry or an unknown code."""
    items = [v.lower() for v in _as_list(path, value)]
    bad = [v for v in items if v not in _VOCAB[name]]
    if bad:
        raise InvalidInput(f"{path}: unknown value(s) {bad}; allowed: {', '.join(_VOCAB[name])}")
    return tuple(items)


def parse_filters(raw: Any) -> Filters:
    """Turn the request's `filters` object into Filters; InvalidInput on anything unexpected."""
    if raw is None:
        return Filters()
    schemas.check(schemas.FILTERS, raw, "filters")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = schemas.FILTER_ALIASES.get(key, key)
        if value is None or value == "" or value == []:
            continue
        if name in LIST_FILTERS:
            if name in _VOCAB:
                values[name] = vocabulary_codes(name, value, f"filters.{key}")
                continue
            items = _as_list(f"filters.{key}", value)
            field = schemas.FILTERS["properties"][name]["anyOf"][1]["items"]
            for item in items:
                schemas.check(field, item, f"filters.{key}")
            values[name] = tuple(items)
        elif name in _DATES:
            values[name] = dt.date.fromisoformat(value.strip()).isoformat()
        else:
            values[name] = value
    if values.get("date_from") and values.get("date_to") and values["date_from"] > values["date_to"]:
        raise InvalidInput(f"filters.date_from {values['date_from']} is after date_to {values['date_to']}")
    return Filters(**values)
