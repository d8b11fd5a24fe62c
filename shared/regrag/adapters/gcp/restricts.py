"""Document metadata and query filters as Vector Search restricts (pure; no Google imports).

Datapoint side: one token `Restriction` per namespace (the service rejects a repeated namespace,
DUPLICATE_NAMESPACE) and one `value_int` numeric restrict per date. Dates are YYYYMMDD integers: `value_float`
is float32 and stores 20240101 as 20240100, so it must never carry a date.

Query side, the same semantics as the local index (`filter_sql` in regrag.adapters.local.chunk_store): every
list in `Filters` is an allow-list (OR within a namespace, AND across namespaces); `date_from`/`date_to` bound
`eff`; `as_of` (unless `include_superseded`) keeps versions with eff ≤ day < eff_to, where `eff_to` is the
successor's effective date or 99991231 while a version is in force.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrag.domain.errors import InvalidInput
from regrag.domain.models import OPEN_END, DocumentMeta, Filters, date_int

# Filters field → token namespace. `regulation_level` keeps its field name (the local index calls it `level`).
TOKEN_NAMESPACES: dict[str, str] = {
    "province": "province",
    "asset": "asset",
    "doc_class": "doc_class",
    "regulation_level": "regulation_level",
    "corpus": "corpus",
    "doc_id": "doc_id",
}
EFFECTIVE = "eff"
EFFECTIVE_TO = "eff_to"

# Operator names of IndexDatapoint.NumericRestriction.Operator, used only on the query side.
LESS_EQUAL = "LESS_EQUAL"
GREATER_EQUAL = "GREATER_EQUAL"
GREATER = "GREATER"


@dataclass(frozen=True)
class DatapointRestricts:
    """What a datapoint carries: one token per namespace, one integer per numeric namespace."""

    tokens: dict[str, str]
    numbers: dict[str, int]


@dataclass(frozen=True)
class NumericCondition:
    """One numeric query restrict: datapoints whose `namespace` value satisfies `op value` are eligible."""

    namespace: str
    op: str
    value: int


@dataclass(frozen=True)
class QueryRestricts:
    """What a query carries: allow-lists per namespace (AND across them) and numeric conditions (all hold)."""

    allow: dict[str, tuple[str, ...]]
    numeric: tuple[NumericCondition, ...]


def _token(namespace: str, value: str) -> str:
    if not value or not value.isascii() or not value.isprintable():
        # Codes and doc ids are validated ASCII at ingest; a non-ASCII token would be a bug upstream, and the
        # service's acceptance of one is unknown (INVALID_TOKEN_VALUE exists), so refuse it here.
        raise InvalidInput(f"restrict token {namespace}={value!r} must be non-empty printable ASCII")
    return value


def datapoint_restricts(meta: DocumentMeta) -> DatapointRestricts:
    """The restricts of every chunk of a document version, from its (linked) metadata."""
    tokens = {space: _token(space, getattr(meta, name)) for name, space in TOKEN_NAMESPACES.items()}
    numbers = {
        EFFECTIVE: date_int(meta.effective_date) or 0,
        EFFECTIVE_TO: date_int(meta.effective_to) or OPEN_END,
    }
    return DatapointRestricts(tokens, numbers)


def query_restricts(filters: Filters) -> QueryRestricts:
    """The restricts of a search, so that filtering happens inside the index before top-k."""
    allow: dict[str, tuple[str, ...]] = {}
    for field_name, namespace in TOKEN_NAMESPACES.items():
        values: tuple[str, ...] = getattr(filters, field_name)
        if values:
            allow[namespace] = tuple(_token(namespace, v) for v in dict.fromkeys(values))
    numeric: list[NumericCondition] = []
    if filters.date_from:
        numeric.append(NumericCondition(EFFECTIVE, GREATER_EQUAL, _day(filters.date_from)))
    if filters.date_to:
        numeric.append(NumericCondition(EFFECTIVE, LESS_EQUAL, _day(filters.date_to)))
    if filters.as_of and not filters.include_superseded:
        day = _day(filters.as_of)
        numeric.append(NumericCondition(EFFECTIVE, LESS_EQUAL, day))
        numeric.append(NumericCondition(EFFECTIVE_TO, GREATER, day))
    return QueryRestricts(allow, tuple(numeric))


def _day(value: str) -> int:
    day = date_int(value)
    if day is None:
        raise InvalidInput(f"date {value!r} is empty")
    return day
