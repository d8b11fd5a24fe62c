"""HTTP plumbing shared by the Cloud Functions and the local server: JSON in, JSON out, errors mapped once."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from regrag import logs
from regrag.domain.errors import Forbidden, InvalidInput, NotFound, PermanentError, TransientError, Unauthorized

log = logs.get("api")

MAX_BODY_BYTES = 1_000_000


def error_body(status: int, code: str, message: str, **extra: Any) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message, **extra}}


def call(fn: Callable[[Any], dict[str, Any]], body: Any) -> tuple[int, dict[str, Any]]:
    """Run a handler; map our errors to HTTP statuses with a JSON body (never a stack trace)."""
    try:
        return 200, fn(body)
    except InvalidInput as exc:
        return error_body(400, exc.code, str(exc), **exc.details)
    except NotFound as exc:
        return error_body(404, exc.code, str(exc), **exc.details)
    except Unauthorized as exc:
        return error_body(401, exc.code, str(exc), **exc.details)
    except Forbidden as exc:
        return error_body(403, exc.code, str(exc), **exc.details)
    except PermanentError as exc:
        return error_body(422, exc.code, str(exc), **exc.details)
    except TransientError as exc:
        return error_body(503, exc.code, str(exc), **exc.details)
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into a 500
        logs.event(log, logging.ERROR, "unhandled error", error=repr(exc), exc_info=True)
        return error_body(500, "internal", "internal error; see the server log")


def parse_json_body(raw: bytes, content_type: str | None) -> Any:
    """Decode a request body; InvalidInput if it is too large, not UTF-8 or not JSON."""
    if len(raw) > MAX_BODY_BYTES:
        raise InvalidInput(f"request body larger than {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        raise InvalidInput("request body is empty; send a JSON object")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"request body is not valid UTF-8 JSON: {exc}") from exc


def dumps(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


def handle_request(
    fn: Callable[[Any], dict[str, Any]],
    method: str,
    raw: bytes,
    content_type: str | None,
    allowed: tuple[str, ...] = ("POST",),
) -> tuple[int, dict[str, Any]]:
    """Method check, JSON decoding and error mapping for one POST handler."""
    if method == "OPTIONS":
        return 204, {}
    if method not in allowed:
        return error_body(405, "method_not_allowed", f"use {' or '.join(allowed)}")
    try:
        body = parse_json_body(raw, content_type)
    except InvalidInput as exc:
        return error_body(400, exc.code, str(exc))
    return call(fn, body)


def flask_response(status: int, body: dict[str, Any]) -> Any:
    """A Flask response with UTF-8 JSON (Chinese unescaped) and permissive CORS for the search page."""
    from flask import Response

    headers = {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Headers": "Content-Type, Authorization",
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    }
    if status == 204:
        return Response(status=204, headers=headers)
    return Response(dumps(body), status=status, mimetype="application/json", headers=headers)


def flask_handle(fn: Callable[[Any], dict[str, Any]], request: Any, allowed: tuple[str, ...] = ("POST",)) -> Any:
    status, body = handle_request(fn, request.method, request.get_data(cache=False), request.content_type, allowed)
    return flask_response(status, body)
