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


def _as_list(key: str, value: str | list[str]) -> list[str]:
    """ "a, b" or ["a", "b"] → ["a", "b"] (stripped, duplicates dropped, order kept)."""
    items = value.split(",") if isinstance(value, str) else value
    out = [item.strip() for item in items]
    if not all(out):
        raise InvalidInput(f"filters.{key} must contain non-empty strings, got {value!r}")
    return list(dict.fromkeys(out))


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
            items = _as_list(key, value)
            if name in _VOCAB:
                items = [v.lower() for v in items]
                bad = [v for v in items if v not in _VOCAB[name]]
                if bad:
                    raise InvalidInput(f"filters.{key}: unknown value(s) {bad}; allowed: {', '.join(_VOCAB[name])}")
            else:
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
