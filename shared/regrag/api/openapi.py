"""The OpenAPI 3.1 document of the API (GET /openapi.json), built from the request schemas the server validates
with (regrag.inputs.schemas), so what is published and what is enforced cannot drift apart."""

from __future__ import annotations

from functools import cache
from typing import Any

from regrag.check.findings import STATUSES
from regrag.inputs import schemas
from regrag.version import __version__

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        }
    },
}
_CITATION = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "effective_date": {"type": ["string", "null"], "description": "施行: the day the cited article took effect"},
        "promulgated": {"type": ["string", "null"], "description": "公布: the day this version was adopted"},
        "marker": {"type": "string", "description": "〔《title》，生效：date〕"},
        "doc_id": {"type": "string"},
        "article": {"type": "string"},
        "url": {"type": ["string", "null"], "description": "the source; a PDF's opens at the quote's page (#page=N)"},
        "pages": {"type": "array", "items": {"type": "integer"}, "description": "pages of a PDF or scan quoted"},
        "low_confidence": {"type": "boolean", "description": "a quoted page was OCR'd with low confidence"},
        "note": {"type": ["string", "null"], "description": "what the reader must know about the OCR'd text"},
        "corpus": {"type": "string"},
        "corpora": {"type": "array", "items": {"type": "string"}},
        "version_status": {
            "type": "string",
            "enum": ["in_force", "upcoming", "superseded_since", "superseded", "not_yet_in_force"],
        },
        "successor": {"type": ["object", "null"]},
        "counterpart": {"type": ["object", "null"], "description": "the corresponding article of the other version"},
    },
}
_CANDIDATE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "doc_id": {"type": "string"},
        "article": {"type": "string"},
        "title": {"type": "string"},
        "score": {"type": "number"},
        "text": {"type": "string"},
        "corpus": {"type": "string"},
        "corpora": {"type": "array", "items": {"type": "string"}},
        "metadata": {"type": "object"},
    },
}
_ANSWER = {
    "type": "object",
    "properties": {
        "answer_zh": {"type": "string"},
        "title": {"type": "string"},
        "bullets": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "span": {
                        "type": "string",
                        "description": "verbatim pieces of the stored regulation, …… where text is left out",
                    },
                    "pieces": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the verbatim slices of the stored text the span shows",
                    },
                    "lines": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the span as the source lays it out: a line per 款, lead-in or item",
                    },
                    "text": {"type": "string"},
                    "chunk_id": {"type": "string"},
                    "citation": {"$ref": "#/components/schemas/Citation"},
                },
            },
        },
        "citations": {"type": "array", "items": {"$ref": "#/components/schemas/Citation"}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "caution": {
            "type": ["string", "null"],
            "description": "shown before the quotes when the confidence is low: they may not answer the question",
        },
        "abstained": {"type": "boolean"},
        "dropped_spans": {"type": "integer"},
    },
}
_QUERY_RESPONSE = {
    "allOf": [{"$ref": "#/components/schemas/Answer"}],
    "type": "object",
    "properties": {
        "query_id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
        "candidates": {"type": "array", "items": {"$ref": "#/components/schemas/Candidate"}},
        "confidence": {"type": "object"},
        "rerank_status": {"type": "string"},
        "translation_status": {
            "type": "string",
            "description": "a question not in Chinese: ok (searched as question_zh) | skipped | fallback:<reason>",
        },
        "question_zh": {"type": "string", "description": "the Chinese question searched, when it was translated"},
        "corpus_stats": {"type": "array", "items": {"type": "object"}},
        "filters": {"type": "object"},
        "scope": {"type": "object"},
        "temporal": {"type": "object", "description": "the day the answer is about, and where that came from"},
        "timings_ms": {"type": "object", "additionalProperties": {"type": "number"}},
    },
}

_CHECKED = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "the reference exactly as written in the document"},
        "start": {"type": "integer", "description": "offset of `text` in the document's text (characters)"},
        "end": {"type": "integer"},
        "doc_id": {"type": ["string", "null"], "description": "the stored version the citation was checked against"},
        "title": {"type": ["string", "null"]},
        "article": {"type": "string", "description": "the cited article's label (第十条); a range gives one each"},
        "paragraph": {"type": ["integer", "null"], "description": "第N款 when cited"},
        "item": {"type": ["integer", "null"], "description": "第（N）项 when cited"},
        "status": {"type": "string", "enum": list(STATUSES)},
        "caution": {
            "type": "boolean",
            "description": "an ok citation to check all the same: its evidence has unstated_figures (the document's "
            "own words give the article a figure it does not state) or renumbered (the number now names another rule)",
        },
        "message": {"type": "string", "description": "the finding in Chinese, quoting only the corpus's text"},
        "evidence": {
            "type": "object",
            "description": "by status: version, article_text, cited_part; successor, counterpart, diff "
            "(superseded); in_force_then (not_yet_in_force); articles, last_article (article_missing); "
            "candidates (ambiguous); catalogue, in_catalogue, suggestion (unknown_law, wrong_title); "
            "unstated_figures {said, article}, renumbered (ok)",
        },
        "quotes": {
            "type": "array",
            "items": {
                "type": "object",
                "description": "a quotation attributed to the reference: match verbatim | elsewhere (found_in) | "
                "mismatch (closest span, diff [{op, quote, law}])",
            },
        },
        "also": {"type": "array", "items": {"type": "string"}, "description": "a second problem of the citation"},
        "written": {"type": "string", "description": "how the document named the law (《条例》, 本法, 《电力法》)"},
        "form": {"type": "string", "enum": ["title", "alias", "back"]},
        "cited_title": {"type": ["string", "null"], "description": "the title the reference names or refers to"},
        "antecedent": {"type": ["array", "null"], "description": "[start, end) of that title in the document"},
        "version_named": {"type": ["string", "null"], "description": "a revision the reference names (YYYY[-MM])"},
    },
}
_CHECK_RESPONSE = {
    "type": "object",
    "properties": {
        "as_of": {"type": "string", "format": "date"},
        "as_of_source": {"type": "string", "enum": ["request", "document", "today"]},
        "document_date": {"type": ["object", "null"], "description": "the date the document states, and where"},
        "summary": {
            "type": "object",
            "description": "references, citations, ok, cautions (ok to check), problems, unverifiable, by_status",
        },
        "citations": {"type": "array", "items": _CHECKED},
        "catalogue": {"type": "object", "description": "the bundled catalogue of national titles: source, as_of"},
        "document": {"type": "object", "description": "name, format, chars; an upload's extracted `text`"},
    },
}

_WATCH = {
    "type": "object",
    "properties": {
        "watch_id": {"type": "string"},
        "kind": {"type": "string", "enum": ["document", "article", "question"]},
        "doc_id": {"type": ["string", "null"]},
        "article": {"type": ["string", "null"]},
        "question": {"type": ["string", "null"]},
        "filters": {"type": "object"},
        "owner": {"type": ["string", "null"]},
        "title": {"type": "string"},
        "created": {"type": "string"},
        "following": {"type": ["object", "null"], "description": "the version (and article) the watch is on now"},
        "cited": {"type": ["array", "null"], "description": "the articles the saved question's answer cites now"},
        "checked": {"type": "string"},
    },
}
_WATCH_RESPONSE = {
    "type": "object",
    "required": ["watch_id"],
    "properties": {
        "watch_id": {"type": "string"},
        "created": {"type": "boolean", "description": "false: the same watch existed already (HTTP 200, not 201)"},
        "watch": {"$ref": "#/components/schemas/Watch"},
        "version": {"type": "object", "description": "the followed version's status today (in force, superseded …)"},
        "alerts": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/Alert"},
            "description": "what the watched version already missed (a successor, an end), told when the watch is made",
        },
    },
}
_ALERT = {
    "type": "object",
    "required": ["alert_id", "watch_id", "doc_id", "kind", "dates", "diff", "created"],
    "properties": {
        "alert_id": {"type": "string"},
        "watch_id": {"type": "string"},
        "doc_id": {
            "type": ["string", "null"],
            "description": "the version watched (a question: the document ingested)",
        },
        "successor_id": {"type": ["string", "null"], "description": "the newer version, when there is one"},
        "kind": {
            "type": "string",
            "enum": ["new_version", "repealed", "article_changed", "article_removed", "question_changed"],
        },
        "dates": {
            "type": "object",
            "description": "watched / current: each version's promulgated, effective_from, effective_to; "
            "entry_into_force: when the change takes effect; in_force: whether it has (questions: asked_on)",
        },
        "diff": {
            "type": "object",
            "description": "an article: change, old, new (and related: where a split article's lines went); a "
            "document: the versions' summary and changed articles; a question: added, removed, before, after",
        },
        "created": {"type": "string", "description": "when the alert was recorded (UTC)"},
        "message": {"type": "string", "description": "the change in one Chinese sentence"},
        "link": {"type": ["string", "null"], "description": "the page at the document and article concerned"},
    },
}
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_FORMAT = {
    "name": "format",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "enum": ["docx", "md"], "default": "docx"},
}
_FILES = {
    _DOCX: {"schema": {"type": "string", "format": "binary"}},
    "text/markdown": {"schema": {"type": "string"}},
}

_ERRORS = {
    "400": "invalid request (the message names the field)",
    "413": "request body too large",
    "415": "the body is not sent as application/json",
    "503": "no corpus or backend could answer; retry",
}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _responses(ok: dict[str, Any], *codes: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"200": {"description": "OK", "content": _json(ok)}}
    for code in codes:
        out[code] = {"description": _ERRORS.get(code, (extra or {}).get(code, "error")), "content": _json(_ERROR)}
    for code, text in (extra or {}).items():
        out[code] = {"description": text, "content": _json(_ERROR)}
    return out


def _post(summary: str, request: str, ok: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "requestBody": {"required": True, "content": _json({"$ref": f"#/components/schemas/{request}"})},
            "responses": _responses(ok, "400", "413", "415", extra=extra.pop("errors", None)),
            **extra,
        }
    }


def _get(summary: str, ok: dict[str, Any], **extra: Any) -> dict[str, Any]:
    errors = extra.pop("errors", None)
    return {"get": {"summary": summary, "responses": _responses(ok, extra=errors), **extra}}


_LIBRARY = {
    "type": "object",
    "required": ["documents", "in_force_by_province"],
    "properties": {
        "documents": {
            "type": "array",
            "items": {
                "type": "object",
                "description": "doc_id, title, corpus, province, doc_class, regulation_level, promulgated, "
                "effective_date, effective_date_uncertain (the text does not record when this version took "
                "effect: cited （待核）), status (in_force | superseded | not_yet_in_force), superseded_by",
            },
        },
        "in_force_by_province": {"type": "object", "additionalProperties": {"type": "integer"}},
    },
}
_WATCH_RESPONSE_REF = {"$ref": "#/components/schemas/WatchResponse"}
_DOC_ID = [{"name": "doc_id", "in": "path", "required": True, "schema": schemas.DOC_ID}]
_ADMIN: list[dict[str, list[str]]] = [{"bearer": []}]
_ADMIN_ERRORS = {"401": "no credentials", "403": "not an admin"}


@cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (built once per process)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "regrag",
            "version": __version__,
            "description": "Questions on Chinese energy regulations, answered with verbatim quotes cited as "
            "〔《title》，生效：date〕 (生效: the day the cited version took effect).",
        },
        "paths": {
            **_public_paths(),
            **_admin_paths(),
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "QueryRequest": schemas.QUERY,
                "CandidatesRequest": schemas.CANDIDATES,
                "FeedbackRequest": schemas.FEEDBACK,
                "EvalRequest": schemas.EVAL,
                "CheckRequest": schemas.CHECK,
                "CheckUpload": schemas.CHECK_UPLOAD,
                "CheckResponse": _CHECK_RESPONSE,
                "Filters": schemas.FILTERS,
                "QueryResponse": _QUERY_RESPONSE,
                "Answer": _ANSWER,
                "Citation": _CITATION,
                "Candidate": _CANDIDATE,
                "WatchRequest": schemas.WATCH,
                "Watch": _WATCH,
                "WatchResponse": _WATCH_RESPONSE,
                "Alert": _ALERT,
                "Error": _ERROR,
            },
        },
    }


def _public_paths() -> dict[str, Any]:
    query = _post(
        "Ask a question: verbatim quotes with citations", "QueryRequest", {"$ref": "#/components/schemas/QueryResponse"}
    )
    query["post"]["responses"]["503"] = {"description": _ERRORS["503"], "content": _json(_ERROR)}
    return {
        "/query": query,
        "/rerank": _post(
            "Reorder named candidates",
            "CandidatesRequest",
            {"type": "object"},
            errors={"404": "unknown candidate id"},
        ),
        "/compose": _post(
            "Quote named candidates",
            "CandidatesRequest",
            {"$ref": "#/components/schemas/Answer"},
            errors={"404": "unknown candidate id"},
        ),
        "/feedback": _post(
            "Say whether an answer helped",
            "FeedbackRequest",
            {"type": "object"},
            errors={"404": "unknown query id"},
        ),
        "/check": _check_path(),
        "/corpora": _get("Corpora with document and chunk counts", {"type": "object"}),
        "/documents": _get(
            "The library's documents (of some provinces, with words in their title), each with its status today; "
            "and the documents in force in each province",
            _LIBRARY,
            parameters=[
                {"name": name, "in": "query", "required": False, "schema": spec}
                for name, spec in schemas.DOCUMENTS_QUERY["properties"].items()
            ],
            errors={"400": "an unknown province or parameter"},
        ),
        "/documents/{doc_id}": _get(
            "A document's text, metadata, dates and article anchors",
            {"type": "object"},
            parameters=_DOC_ID,
            errors={"404": "no such document"},
        ),
        "/documents/{doc_id}/versions": _get(
            "The version chain and what changed between versions",
            {"type": "object"},
            parameters=_DOC_ID,
            errors={"404": "no such document"},
        ),
        **_watch_paths(),
        "/healthz": _get("Health, index size and cache counters", {"type": "object"}),
        "/openapi.json": _get("This document", {"type": "object"}),
    }


def _file(summary: str, parameters: list[dict[str, Any]], errors: dict[str, str]) -> dict[str, Any]:
    get = _get(summary, {"type": "object"}, parameters=[*parameters, _FORMAT], errors={"400": "bad format", **errors})
    get["get"]["responses"]["200"] = {"description": "the file (Content-Disposition: attachment)", "content": _FILES}
    return get


def _watch_paths() -> dict[str, Any]:
    watch = {**_post("Watch a document, an article or a saved question", "WatchRequest", _WATCH_RESPONSE_REF)}
    watch["post"]["responses"]["201"] = {"description": "watching", "content": _json(_WATCH_RESPONSE_REF)}
    watch["post"]["responses"]["404"] = {"description": "no such document or article", "content": _json(_ERROR)}
    watch.update(
        _get(
            "Every watch",
            {
                "type": "object",
                "properties": {"watches": {"type": "array", "items": {"$ref": "#/components/schemas/Watch"}}},
            },
        )
    )
    alerts = _get(
        "Alerts, newest first: JSON, or Atom (?format=atom or Accept: application/atom+xml)",
        {
            "type": "object",
            "properties": {"alerts": {"type": "array", "items": {"$ref": "#/components/schemas/Alert"}}},
        },
        parameters=[
            {"name": k, "in": "query", "required": False, "schema": v}
            for k, v in schemas.ALERTS_QUERY["properties"].items()
        ],
        errors={"400": "a bad parameter (named)"},
    )
    alerts["get"]["responses"]["200"]["content"]["application/atom+xml"] = {"schema": {"type": "string"}}
    query_id = [
        {"name": "query_id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"}}
    ]
    return {
        "/watches": watch,
        "/watches/{watch_id}": {
            "delete": {
                "summary": "Stop watching (the alerts recorded stay)",
                "parameters": [{"name": "watch_id", "in": "path", "required": True, "schema": schemas.WATCH_ID}],
                "responses": _responses({"type": "object"}, extra={"404": "no such watch"}),
            }
        },
        "/alerts": alerts,
        "/query/{query_id}/export": _file(
            "An answer as a .docx or Markdown file for a memo (quotes verbatim with their complete citations)",
            query_id,
            {"404": "unknown query id"},
        ),
        "/documents/{doc_id}/versions/export": _file(
            "A document's versions and 修订对照 as a .docx or Markdown file", _DOC_ID, {"404": "no such document"}
        ),
    }


def _check_path() -> dict[str, Any]:
    path = _post(
        "Check a document's citations against the law in force on its date",
        "CheckRequest",
        {"$ref": "#/components/schemas/CheckResponse"},
    )
    path["post"]["requestBody"]["content"]["multipart/form-data"] = {
        "schema": {"$ref": "#/components/schemas/CheckUpload"}
    }
    path["post"]["parameters"] = [
        {**_FORMAT, "schema": {"type": "string", "enum": ["docx", "md"]}, "description": "the report as a file"}
    ]
    path["post"]["responses"]["200"]["content"].update(_FILES)
    path["post"]["responses"]["413"]["description"] = "the document is over REGRAG_CHECK_MAX_BYTES"
    path["post"]["responses"]["415"]["description"] = "send JSON or multipart/form-data"
    return path


def _admin_paths() -> dict[str, Any]:
    return {
        "/admin/prompts": _get(
            "Prompt versions (admin)",
            {"type": "object"},
            security=_ADMIN,
            errors=_ADMIN_ERRORS,
        ),
        "/admin/index": _get(
            "Index facts (admin)",
            {"type": "object"},
            security=_ADMIN,
            errors=_ADMIN_ERRORS,
        ),
        "/admin/audit": _get(
            "Documents whose metadata ingest corrected or doubts: dates, amendments, provinces (admin)",
            {"type": "object"},
            security=_ADMIN,
            errors=_ADMIN_ERRORS,
        ),
        "/admin/watches/check": {
            "post": {
                "summary": "Compare every watch with the index and ask every saved question again (admin)",
                "security": _ADMIN,
                "responses": _responses({"type": "object"}, extra=_ADMIN_ERRORS),
            }
        },
        "/admin/eval": _post(
            "Evaluate a question file (admin)",
            "EvalRequest",
            {"type": "object"},
            security=_ADMIN,
            errors={**_ADMIN_ERRORS, "404": "no such question file"},
        ),
    }
