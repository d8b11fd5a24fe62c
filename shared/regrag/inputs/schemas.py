"""The request bodies the API accepts, declared once as JSON Schema (2020-12, the dialect of OpenAPI 3.1).

The same definitions validate every request (`check`, with errors that name the field and suggest the closest
valid name for a misspelt one), bound every string and list, and are published as the OpenAPI document
(`GET /openapi.json`, regrag.api.openapi). Only the keywords used here are implemented: type, enum, pattern,
minLength/maxLength, minimum/maximum, minItems/maxItems, maxProperties, items, properties, required,
additionalProperties, anyOf, format "date". Every string is also checked for unpaired surrogates ("\\ud800" is
valid JSON but not text), which would otherwise fail later, far from the input.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from typing import Any

from regrag.domain.errors import InvalidInput
from regrag.domain.ids import CORPUS_RE, DOC_ID_RE, QUERY_ID_RE
from regrag.text.inference import PROVINCES

ASSETS = ("solar", "wind", "coal", "hydro", "nuclear", "grid", "general")
DOC_CLASSES = ("grid", "permit", "technical", "energy", "environment", "land", "safety", "general")
LEVELS = ("national_law", "administrative_regulation", "departmental_rule", "local_regulation", "unknown")
PROVINCE_CODES = ("national", *sorted(PROVINCES.values()))

MAX_QUESTION_CHARS = 2000
MAX_TOP_K = 100
MAX_CORPORA = 20
MAX_CANDIDATES = 100
MAX_COMMENT_CHARS = 2000
MAX_REPUBLISH = 10_000
DEFAULT_MAX_REPUBLISH = 200  # per reconcile run: bounds embedding cost and run time; the rest waits for the next
MAX_FILTER_VALUES = 50

_SURROGATE_RE = re.compile(r"[\ud800-\udfff]")


def _one_or_many(item: dict[str, Any], description: str) -> dict[str, Any]:
    """A value or a list of values (also "a,b" as one comma-separated string)."""
    return {
        "description": description,
        "anyOf": [
            {"type": "string", "maxLength": 2000},
            {"type": "array", "items": item, "maxItems": MAX_FILTER_VALUES},
        ],
    }


def _codes(values: tuple[str, ...], description: str) -> dict[str, Any]:
    # x-case-insensitive: "SOLAR" is accepted as "solar" (people type codes as they please)
    item = {"type": "string", "enum": list(values), "x-case-insensitive": True}
    return _one_or_many(item, f"{description}: {', '.join(values)}")


DATE = {"type": "string", "format": "date", "maxLength": 10, "description": "YYYY-MM-DD"}
CORPUS_NAME = {"type": "string", "pattern": CORPUS_RE.pattern, "maxLength": 40, "title": "corpus name"}
DOC_ID = {"type": "string", "pattern": DOC_ID_RE.pattern, "maxLength": 128, "title": "document id"}
QUESTION = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_QUESTION_CHARS,
    # a letter or a figure of any script: ？？？ or …… asks nothing, and was told to ask in Chinese
    "pattern": r"[^\W_]",
    "title": "question (it has no words or figures)",
    "description": "the question, in Chinese",
}

_FILTER_FIELDS: dict[str, Any] = {
    "province": _codes(PROVINCE_CODES, "province codes"),
    "asset": _codes(ASSETS, "asset types"),
    "doc_class": _codes(DOC_CLASSES, "document classes"),
    "regulation_level": _codes(LEVELS, "regulation levels"),
    "corpus": _one_or_many(CORPUS_NAME, "corpus names"),
    "doc_id": _one_or_many(DOC_ID, "document ids"),
    "date_from": {**DATE, "description": "versions that took effect on or after this day"},
    "date_to": {**DATE, "description": "versions that took effect on or before this day"},
    "as_of": {
        **DATE,
        "description": "only the versions in force that day (default: today, or a date the question names)",
    },
    "include_superseded": {"type": "boolean", "description": "every version, in force or not"},
}
# accepted spellings of the fields above
FILTER_ALIASES = {
    "level": "regulation_level",
    "corpora": "corpus",
    "effective_from": "date_from",
    "effective_to": "date_to",
}
FILTERS: dict[str, Any] = {
    "type": "object",
    "description": "Metadata filters, applied inside the index search (before top-k). OR within a field, AND across.",
    "additionalProperties": False,
    "properties": {**_FILTER_FIELDS, **{alias: _FILTER_FIELDS[name] for alias, name in FILTER_ALIASES.items()}},
}

QUERY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["question"],
    "properties": {
        "question": QUESTION,
        "filters": FILTERS,
        "corpora": {
            "anyOf": [CORPUS_NAME, {"type": "array", "items": CORPUS_NAME, "minItems": 1, "maxItems": MAX_CORPORA}],
            "description": "corpora to search (default: every corpus)",
        },
        "corpus_timeout_s": {"type": "number", "minimum": 0.05, "maximum": 60},
        "corpus_weights": {
            "type": "object",
            "maxProperties": MAX_CORPORA,
            "additionalProperties": {"type": "number", "minimum": 0, "maximum": 100},
        },
        "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K},
        "context": {"type": "string", "enum": ["article", "section"]},
    },
}

_CANDIDATE = {
    "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": 64},
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["id"],
            "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 64}, "score": {"type": "number"}},
        },
    ]
}
CANDIDATES: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["question", "candidates"],
    "properties": {
        "question": QUESTION,
        "candidates": {"type": "array", "items": _CANDIDATE, "minItems": 1, "maxItems": MAX_CANDIDATES},
        "filters": FILTERS,
        "top_n": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K},
    },
}

FEEDBACK: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["query_id", "helpful"],
    "properties": {
        "query_id": {
            "type": "string",
            "pattern": QUERY_ID_RE.pattern,
            "title": "query id",
            "description": "the 32-hex-digit id a /query response returned",
        },
        "helpful": {"type": "boolean"},
        "citation": {
            "type": "object",
            "required": ["doc_id"],
            "maxProperties": 20,
            "properties": {"doc_id": DOC_ID, "article": {"type": "string", "maxLength": 40}},
        },
        "comment": {"type": "string", "maxLength": MAX_COMMENT_CHARS},
    },
}

RECONCILE: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "dry_run": {"type": "boolean"},
        "max_republish": {"type": "integer", "minimum": 0, "maximum": MAX_REPUBLISH},
    },
}

EVAL: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["questions"],
    "properties": {
        "questions": {
            "type": "string",
            "pattern": r"^[A-Za-z0-9._/-]+\.jsonl$",
            "maxLength": 256,
            "title": "question file name (a .jsonl object)",
        },
        "k": {"type": "integer", "minimum": 1, "maximum": 50},
    },
}

MAX_OWNER_CHARS = 200
WATCH_ID = {"type": "string", "pattern": r"^w[0-9a-f]{23}$", "maxLength": 24, "title": "watch id"}
WATCH: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "description": "What to watch: a document ({doc_id}), one of its articles ({doc_id, article}), or a saved "
    "question ({question, filters?}). `owner` (an email, a team): who the alerts are for; it travels as an "
    "attribute of each alert's Pub/Sub message, which a subscription can filter on.",
    "properties": {
        "doc_id": DOC_ID,
        "article": {
            "type": "string",
            "minLength": 1,
            "maxLength": 40,
            "description": "the article: 第三条, 第十条之一, 第3条 or 3",
        },
        "question": QUESTION,
        "filters": FILTERS,
        "owner": {"type": "string", "minLength": 1, "maxLength": MAX_OWNER_CHARS, "pattern": r"^[^\x00-\x1f]+$"},
    },
}
MAX_ALERTS = 1000
ALERTS_QUERY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "description": "GET /alerts query parameters",
    "properties": {
        "since": {
            "type": "string",
            "pattern": r"^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$",
            "maxLength": 40,
            "title": "date or time (YYYY-MM-DD or ISO 8601)",
        },
        "watch_id": WATCH_ID,
        "limit": {"type": "string", "pattern": r"^[0-9]{1,4}$", "title": f"number from 1 to {MAX_ALERTS}"},
        "format": {"type": "string", "enum": ["json", "atom"]},
    },
}
DOCUMENTS_QUERY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "description": "GET /documents query parameters",
    "properties": {
        "province": {"type": "string", "maxLength": 400, "title": "province codes, comma-separated (gd,national)"},
        "title": {"type": "string", "maxLength": 100, "title": "words of the title"},
    },
}
EXPORT_QUERY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"format": {"type": "string", "enum": ["docx", "md"]}},
}

MAX_CHECK_TEXT_CHARS = 2_000_000  # the body limit (REGRAG_CHECK_MAX_BYTES) and REGRAG_CHECK_MAX_CHARS bound it first
CHECK_AS_OF = {
    **DATE,
    "description": "the day citations are checked as of (default: the document's own date, else today)",
}
CHECK: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text"],
    "properties": {
        "text": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_CHECK_TEXT_CHARS,
            "description": "the document whose citations to check (a memo, an opinion, a filing), as plain text",
        },
        "as_of": CHECK_AS_OF,
    },
}
# multipart/form-data: the uploaded document and, optionally, the as-of day
CHECK_UPLOAD: dict[str, Any] = {
    "type": "object",
    "required": ["file"],
    "properties": {
        "file": {"type": "string", "format": "binary", "description": ".docx, .pdf (with a text layer), .md or .txt"},
        "as_of": CHECK_AS_OF,
    },
}


# --- validation ---------------------------------------------------------------------------------------------


def check(schema: dict[str, Any], value: Any, path: str = "") -> None:
    """InvalidInput naming the first place where `value` does not match `schema`."""
    _check(schema, value, path)


def _where(path: str) -> str:
    return path or "request body"


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _is(kind: str, value: Any) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False
    return isinstance(value, _TYPES[kind])


def _check(schema: dict[str, Any], value: Any, path: str) -> None:
    if "anyOf" in schema:
        _check_any(schema, value, path)
        return
    kind = schema.get("type")
    if kind and not _is(kind, value):
        raise InvalidInput(f"{_where(path)} must be {_article(kind)}, got {_json_type(value)}")
    if isinstance(value, str):
        _check_string(schema, value, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_number(schema, value, path)
    elif isinstance(value, list):
        _check_array(schema, value, path)
    elif isinstance(value, dict):
        _check_object(schema, value, path)
    compared = value.lower() if isinstance(value, str) and schema.get("x-case-insensitive") else value
    if "enum" in schema and compared not in schema["enum"]:
        raise InvalidInput(f"{_where(path)}: unknown value {value!r}; allowed: {', '.join(map(str, schema['enum']))}")


def _check_any(schema: dict[str, Any], value: Any, path: str) -> None:
    options = schema["anyOf"]
    matching = [o for o in options if "type" not in o or _is(o["type"], value)]
    if not matching:
        kinds = " or ".join(_article(o["type"]) for o in options if "type" in o)
        raise InvalidInput(f"{_where(path)} must be {kinds}, got {_json_type(value)}")
    _check(matching[0], value, path)  # the options here differ by type, so the first match decides


def _check_string(schema: dict[str, Any], value: str, path: str) -> None:
    if _SURROGATE_RE.search(value):
        raise InvalidInput(f"{_where(path)} contains an unpaired surrogate (\\ud800–\\udfff): not valid text")
    if len(value) < schema.get("minLength", 0) or (not value.strip() and schema.get("minLength")):
        raise InvalidInput(f"{_where(path)} must be a non-empty string")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise InvalidInput(f"{_where(path)} is longer than {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        raise InvalidInput(f"{_where(path)}: {value[:80]!r} is not a valid {schema.get('title', 'value')}")
    if schema.get("format") == "date":
        try:
            dt.date.fromisoformat(value.strip())
        except ValueError as exc:
            raise InvalidInput(f"{_where(path)}={value!r} is not a valid date (YYYY-MM-DD)") from exc


def _check_number(schema: dict[str, Any], value: float, path: str) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if (low is not None and value < low) or (high is not None and value > high) or value != value:
        what = "an integer" if schema.get("type") == "integer" else "a number"
        raise InvalidInput(f"{_where(path)} must be {what} between {low} and {high}")


def _check_array(schema: dict[str, Any], value: list[Any], path: str) -> None:
    if len(value) < schema.get("minItems", 0):
        raise InvalidInput(f"{_where(path)} is empty: give at least {schema['minItems']} item(s)")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        raise InvalidInput(f"{_where(path)} has {len(value)} items; at most {schema['maxItems']} are allowed")
    for i, item in enumerate(value):
        _check(schema.get("items", {}), item, f"{path}[{i}]")


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: str) -> None:
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        raise InvalidInput(f"{_where(path)} has {len(value)} fields; at most {schema['maxProperties']} are allowed")
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            raise InvalidInput(f"{_join(path, name)} is required")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if _SURROGATE_RE.search(key):
            raise InvalidInput(f"{_where(path)} has a field name with an unpaired surrogate")
        if key in props:
            _check(props[key], item, _join(path, key))
        elif extra is False:
            raise InvalidInput(_unknown(path, key, list(props)))
        elif isinstance(extra, dict):
            _check(extra, item, _join(path, key))


def _unknown(path: str, key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else f"; allowed: {', '.join(known)}"
    where = f" in {path}" if path else ""
    return f"unknown field {key[:60]!r}{where}{hint}"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _article(kind: str) -> str:
    names = {"integer": "an integer", "array": "a list", "object": "a JSON object", "boolean": "true or false"}
    return names.get(kind, f"a {kind}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__
    )
