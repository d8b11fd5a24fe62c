"""HTTP: one routing table, one JSON body reader, one mapping from errors to statuses.

The deployed `query` function and `regrag serve` dispatch every request through `dispatch` (the function gets
functions-framework's request; the local server a plain WSGI one); `rerank`, `compose` and `reconcile` answer
their one endpoint at any path through `dispatch_one`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

from werkzeug.exceptions import HTTPException, RequestEntityTooLarge, RequestURITooLarge, UnsupportedMediaType
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from regrag import logs
from regrag.api import endpoints
from regrag.domain.errors import (
    Forbidden,
    InvalidInput,
    NotFound,
    PermanentError,
    StorageError,
    TransientError,
    Unauthorized,
)
from regrag.inputs import parse as requests
from regrag.services import Services

if TYPE_CHECKING:
    from regrag.ops.exports.files import Export

log = logs.get("api")

MAX_BODY_BYTES = 1_000_000
MAX_URL_CHARS = 8192  # no route needs more; the longest real one is a document id
JSON_TYPE = "application/json"
# The page's own files: a flat allow-list by name pattern, so /assets/ can never reach outside regrag/web.
# Not /static/: functions-framework's Flask app owns that prefix, and the query function serves the page too.
_STATIC_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*\.(js|css)$")
_STATIC_TYPES = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}
# The page loads only its own script and stylesheet and never uses inline code; the API may live on another
# origin (a separate Cloud Run service), hence the open connect-src.
_PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src *; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_CORS = {
    "Access-Control-Allow-Headers": "Content-Type, Authorization",
    "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
    "Access-Control-Expose-Headers": "Content-Disposition",
    "Access-Control-Max-Age": "600",
}
_ERRORS: tuple[tuple[type[Exception], int], ...] = (
    (InvalidInput, 400),
    (NotFound, 404),
    (Unauthorized, 401),
    (Forbidden, 403),
    (PermanentError, 422),
    (TransientError, 503),
    (StorageError, 503),  # a full disk or a damaged index: the server cannot answer until an operator acts
)

# --- the routes -------------------------------------------------------------------------------------------

Route = Callable[..., Response]


def _json_route(fn: Callable[[Services, Any], dict[str, Any]]) -> Route:
    """A POST endpoint: the JSON body in, the endpoint's dict out."""
    return lambda services, request: json_response(200, fn(services, read_json(request)))


def _openapi(services: Services, request: Request) -> Response:
    from regrag.api.openapi import document

    return json_response(200, document())


def _get_route(fn: Callable[..., dict[str, Any]]) -> Route:
    """A GET endpoint whose path parameters are its arguments."""
    return lambda services, request, **args: json_response(200, fn(services, **args))


def _admin_route(action: str, fn: Callable[..., dict[str, Any]], with_body: bool = False) -> Route:
    """Admin credentials: Authorization, and on GCP X-Serverless-Authorization (which Cloud Run IAM checks
    instead when present): ops/admin.py decides which one to trust. The caller is checked before the
    body is read."""

    def route(services: Services, request: Request) -> Response:
        headers = request.headers
        endpoints.require_admin(
            services, action, headers.get("Authorization"), headers.get("X-Serverless-Authorization")
        )
        return json_response(200, fn(services, read_json(request)) if with_body else fn(services))

    return route


def _check(services: Services, request: Request) -> Response:
    """POST /check: the text as JSON {text, as_of?}, or the document uploaded as multipart/form-data (`file`,
    `as_of`), up to REGRAG_CHECK_MAX_BYTES either way; refused before it is read when it says it is larger.
    ?format=docx | md answers with the report as a file for a memo instead of JSON."""
    if "format" in request.args:
        from regrag.ops.exports.files import check_export  # python-docx: only the query function ships it

        fmt = requests.parse_export_format(request.args)
        report, name = _checked(services, request)
        return file_response(check_export(report, name, fmt, page_url(services, request)))
    report, _ = _checked(services, request)
    return json_response(200, report)


def _checked(services: Services, request: Request) -> tuple[dict[str, Any], str]:
    """The check's report of the request's text or upload, and the document's name."""
    limit = services.settings.check_max_bytes
    too_large = f"the document is larger than {limit:,} bytes (REGRAG_CHECK_MAX_BYTES)"
    if request.content_length is not None and request.content_length > limit:
        raise RequestEntityTooLarge(too_large)
    if request.mimetype != "multipart/form-data":
        return endpoints.check(services, read_json(request, max_bytes=limit)), "文书"
    request.max_content_length = limit  # a body sent without a length is cut off at the limit as well
    upload = request.files.get("file")
    if upload is None:
        raise InvalidInput("file: send the document as the form field 'file' (.docx, .pdf, .md or .txt)")
    data = upload.stream.read(limit + 1)
    if len(data) > limit:
        raise RequestEntityTooLarge(too_large)
    parsed = requests.parse_check_upload(upload.filename, data, request.form.get("as_of"))
    return endpoints.check_upload(services, parsed), str(upload.filename)


# --- watches, alerts and exports ------------------------------------------------------------------------------

ATOM_TYPE = "application/atom+xml"


def page_url(services: Services, request: Request) -> str:
    """The page's address for links back to a document: REGRAG_PUBLIC_URL, else this service's root (the query
    function serves the page at its root URL)."""
    return services.settings.public_url or request.host_url


def _add_watch(services: Services, request: Request) -> Response:
    body = endpoints.add_watch(services, read_json(request))
    return json_response(201 if body["created"] else 200, body)


def _library(services: Services, request: Request) -> Response:
    return json_response(200, endpoints.library(services, requests.parse_documents_query(request.args)))


def _remove_watch(services: Services, request: Request, watch_id: str) -> Response:
    return json_response(200, endpoints.remove_watch(services, watch_id))


def _alerts(services: Services, request: Request) -> Response:
    """GET /alerts: JSON, or Atom for ?format=atom or a client that accepts Atom rather than JSON."""
    query = requests.parse_alerts_query(request.args)
    accept = request.accept_mimetypes
    wants_atom = query.format == "atom" or (
        "format" not in request.args and accept.quality(ATOM_TYPE) > accept.quality(JSON_TYPE)
    )
    if not wants_atom:
        return json_response(200, endpoints.alerts(services, query, page_url(services, request)))
    body = endpoints.alerts_atom(services, query, page_url(services, request), request.url)
    return Response(body, content_type=f"{ATOM_TYPE}; charset=utf-8")


def _answer_export(services: Services, request: Request, query_id: str) -> Response:
    fmt = requests.parse_export_format(request.args)
    return file_response(endpoints.answer_export(services, query_id, fmt, page_url(services, request)))


def _versions_export(services: Services, request: Request, doc_id: str) -> Response:
    fmt = requests.parse_export_format(request.args)
    return file_response(endpoints.versions_export(services, doc_id, fmt, page_url(services, request)))


def file_response(export: Export) -> Response:
    headers = {"Content-Disposition": export.disposition(), "X-Content-Type-Options": "nosniff"}
    return Response(export.data, content_type=export.media_type, headers=headers)


def _page(services: Services, request: Request) -> Response:
    headers = {"Content-Security-Policy": _PAGE_CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
    return Response(_web_file("index.html"), content_type="text/html; charset=utf-8", headers=headers)


def _asset(services: Services, request: Request, name: str) -> Response:
    match = _STATIC_RE.match(name)
    body = _web_file(name) if match else None
    if match is None or body is None:
        raise NotFound(f"no static file {name!r}")
    # no-cache: revalidate each load so an upgraded server never runs with a stale script.
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
    return Response(body, content_type=_STATIC_TYPES[match.group(1)], headers=headers)


def _web_file(name: str) -> str | None:
    """The text of shared/regrag/web/<name>, or None when it does not exist."""
    path = resources.files("regrag.web").joinpath(name)
    return path.read_text(encoding="utf-8") if path.is_file() else None


ROUTES: dict[str, Route] = {
    "query": _json_route(endpoints.query),
    "rerank": _json_route(endpoints.rerank),
    "compose": _json_route(endpoints.compose),
    "feedback": _json_route(endpoints.feedback),
    "check": _check,
    "reconcile": _json_route(endpoints.reconcile),
    "corpora": _get_route(endpoints.corpora),
    "library": _library,
    "document": _get_route(endpoints.document),
    "versions": _get_route(endpoints.versions),
    "health": _get_route(endpoints.health),
    "admin_prompts": _admin_route("prompts", endpoints.admin_prompts),
    "admin_index": _admin_route("index", endpoints.admin_index),
    "admin_eval": _admin_route("eval", endpoints.admin_eval, with_body=True),
    "admin_audit": _admin_route("audit", endpoints.admin_audit),
    "admin_watches_check": _admin_route("watches_check", endpoints.admin_watches_check),
    "add_watch": _add_watch,
    "watches": _get_route(endpoints.watches),
    "remove_watch": _remove_watch,
    "alerts": _alerts,
    "answer_export": _answer_export,
    "versions_export": _versions_export,
    "page": _page,
    "asset": _asset,
    "openapi": _openapi,
}

# What the query function and `regrag serve` answer. POST / answers a question: the query Cloud Function is
# called at its own root URL. The reconcile endpoint is its own function (Cloud Scheduler), not routed here.
URL_MAP = Map(
    [
        Rule("/", methods=["POST"], endpoint="query"),
        Rule("/", methods=["GET"], endpoint="page"),
        Rule("/query", methods=["POST"], endpoint="query"),
        Rule("/rerank", methods=["POST"], endpoint="rerank"),
        Rule("/compose", methods=["POST"], endpoint="compose"),
        Rule("/feedback", methods=["POST"], endpoint="feedback"),
        Rule("/check", methods=["POST"], endpoint="check"),
        Rule("/corpora", methods=["GET"], endpoint="corpora"),
        Rule("/documents", methods=["GET"], endpoint="library"),
        Rule("/documents/<doc_id>", methods=["GET"], endpoint="document"),
        Rule("/documents/<doc_id>/versions", methods=["GET"], endpoint="versions"),
        Rule("/documents/<doc_id>/versions/export", methods=["GET"], endpoint="versions_export"),
        Rule("/query/<query_id>/export", methods=["GET"], endpoint="answer_export"),
        Rule("/watches", methods=["POST"], endpoint="add_watch"),
        Rule("/watches", methods=["GET"], endpoint="watches"),
        Rule("/watches/<watch_id>", methods=["DELETE"], endpoint="remove_watch"),
        Rule("/alerts", methods=["GET"], endpoint="alerts"),
        Rule("/healthz", methods=["GET"], endpoint="health"),
        Rule("/admin/prompts", methods=["GET"], endpoint="admin_prompts"),
        Rule("/admin/index", methods=["GET"], endpoint="admin_index"),
        Rule("/admin/eval", methods=["POST"], endpoint="admin_eval"),
        Rule("/admin/audit", methods=["GET"], endpoint="admin_audit"),
        Rule("/admin/watches/check", methods=["POST"], endpoint="admin_watches_check"),
        Rule("/assets/<name>", methods=["GET"], endpoint="asset"),
        Rule("/openapi.json", methods=["GET"], endpoint="openapi"),
    ],
    strict_slashes=False,
)


def dispatch(services: Services, request: Request) -> Response:
    """Route one request and answer it; every failure becomes a JSON error response."""
    try:
        if len(request.full_path) > MAX_URL_CHARS:
            raise RequestURITooLarge(f"the URL is longer than {MAX_URL_CHARS} characters")
        if request.method == "OPTIONS":
            response = Response(status=204)
        else:
            endpoint, args = URL_MAP.bind_to_environ(request.environ).match()
            response = ROUTES[str(endpoint)](services, request, **args)
    except Exception as exc:  # noqa: BLE001 - error_response is the one place that maps every failure
        response = error_response(exc, request)
    return with_cors(response, request, services.settings.allowed_origins)


def dispatch_one(services: Services, request: Request, endpoint: str) -> Response:
    """A function that serves one POST endpoint at any path (rerank, compose, reconcile)."""
    try:
        if request.method == "OPTIONS":
            response = Response(status=204)
        elif request.method != "POST":
            response = json_response(*error_body(405, "method_not_allowed", "use POST"))
        else:
            response = ROUTES[endpoint](services, request)
    except Exception as exc:  # noqa: BLE001 - error_response is the one place that maps every failure
        response = error_response(exc, request)
    return with_cors(response, request, services.settings.allowed_origins)


def with_cors(response: Response, request: Request, allowed: frozenset[str]) -> Response:
    """CORS headers for an origin REGRAG_CORS_ORIGINS allows; none otherwise (the browser then keeps other
    pages from reading or preflighting the API: same origin only, by default)."""
    origin = request.headers.get("Origin")
    if origin and ("*" in allowed or origin.rstrip("/") in allowed):
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers.update(_CORS)
    response.vary.add("Origin")
    return response


# --- JSON in, JSON out, errors ------------------------------------------------------------------------------


def read_json(request: Request, max_bytes: int = MAX_BODY_BYTES) -> Any:
    """The request body as JSON, read only up to `max_bytes` (MAX_BODY_BYTES unless the route allows more).

    Refused: a body over the limit (413, before it is read), a content type other than JSON (415: a web page
    can send text/plain across origins without a preflight, JSON it cannot), an empty body, bytes that are not
    UTF-8 JSON, and JSON nested deeper than the parser's recursion allows (400).
    """
    if request.content_length is not None and request.content_length > max_bytes:
        raise RequestEntityTooLarge(f"request body larger than {max_bytes} bytes")
    if request.mimetype != JSON_TYPE:
        raise UnsupportedMediaType(f"send the body as JSON with Content-Type: {JSON_TYPE}")
    raw = request.stream.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise RequestEntityTooLarge(f"request body larger than {max_bytes} bytes")
    if not raw.strip():
        raise InvalidInput("request body is empty; send a JSON object")
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"request body is not valid UTF-8 JSON: {exc}") from exc
    except ValueError as exc:  # NaN / Infinity, which Python's json reads but JSON does not have
        raise InvalidInput(f"request body: {exc}") from exc
    except RecursionError as exc:
        raise InvalidInput("request body is nested too deeply") from exc


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def dumps(body: Any) -> str:
    """JSON with Chinese unescaped; escaped instead when some text is not encodable (an unpaired surrogate
    echoed back from a request), so a response can always be sent."""
    text = json.dumps(body, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body)
    return text


def json_response(status: int, body: dict[str, Any]) -> Response:
    return Response(dumps(body), status=status, mimetype=JSON_TYPE)


def error_body(status: int, code: str, message: str, **extra: Any) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": code, "message": message, **extra}}


def error_status(exc: Exception) -> tuple[int, dict[str, Any]]:
    """The status and JSON body for any failure: our errors by class, HTTP ones by code, the rest a logged 500
    (never a stack trace in the body)."""
    for cls, status in _ERRORS:
        if isinstance(exc, cls):
            return error_body(status, exc.code, str(exc), **exc.details)  # type: ignore[attr-defined]
    if isinstance(exc, HTTPException) and exc.code is not None:
        code = (exc.name or "error").lower().replace(" ", "_")
        return error_body(exc.code, code, exc.description or exc.name)
    logs.event(log, logging.ERROR, "unhandled error", error=repr(exc), exc_info=True)
    return error_body(500, "internal", "internal error; see the server log")


def error_response(exc: Exception, request: Request | None = None) -> Response:
    status, body = error_status(exc)
    if request is not None and isinstance(exc, HTTPException) and status == 404:
        body["error"]["message"] = f"no route {request.method} {request.path}"
    elif request is not None and isinstance(exc, HTTPException) and status == 405:
        body["error"]["message"] = f"{request.method} is not allowed on {request.path}"
    return json_response(status, body)


def call(fn: Callable[..., dict[str, Any]], *args: Any) -> tuple[int, dict[str, Any]]:
    """Run an endpoint in process (the CLI, the evaluation): (status, body) as HTTP would answer."""
    try:
        return 200, fn(*args)
    except Exception as exc:  # noqa: BLE001 - error_status is the one place that maps every failure
        return error_status(exc)
