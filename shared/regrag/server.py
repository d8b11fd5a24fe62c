"""The local server: the same handlers as the Cloud Functions behind one Flask app, plus the search page."""

from __future__ import annotations

import io
import re
from importlib import resources
from typing import Any

from regrag.api import call, error_body, flask_handle, flask_response

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


def _web_file(name: str) -> str | None:
    """The text of shared/regrag/web/<name>, or None when it does not exist."""
    path = resources.files("regrag.web").joinpath(name)
    return path.read_text(encoding="utf-8") if path.is_file() else None


def create_server_app(app: Any) -> Any:
    """A Flask app serving the API, the search page (/) and its script and stylesheet (/assets/<name>).

    Args:
        app: a regrag.app.Regrag; /query, /rerank, /compose, /corpora, /documents and /healthz call it.
    """
    from flask import Flask, Response, request

    web = Flask("regrag", static_folder=None)
    web.json.ensure_ascii = False  # type: ignore[attr-defined]

    @web.route("/query", methods=["POST", "OPTIONS", "GET"])
    def query() -> Any:
        return flask_handle(app.query, request)

    @web.route("/rerank", methods=["POST", "OPTIONS", "GET"])
    def rerank() -> Any:
        return flask_handle(app.rerank, request)

    @web.route("/compose", methods=["POST", "OPTIONS", "GET"])
    def compose() -> Any:
        return flask_handle(app.compose, request)

    @web.route("/corpora", methods=["GET"])
    def corpora() -> Any:
        return flask_response(*call(app.corpora, None))

    @web.route("/documents/<doc_id>", methods=["GET"])
    def document(doc_id: str) -> Any:
        return flask_response(*call(app.document, doc_id))

    @web.route("/documents/<doc_id>/versions", methods=["GET"])
    def versions(doc_id: str) -> Any:
        return flask_response(*call(app.versions, doc_id))

    @web.route("/healthz", methods=["GET"])
    def healthz() -> Any:
        return flask_response(200, app.health())

    @web.route("/feedback", methods=["POST", "OPTIONS"])
    def feedback() -> Any:
        return flask_handle(app.feedback, request)

    # Admin credentials: Authorization, and on GCP X-Serverless-Authorization (which Cloud Run IAM checks instead
    # when present): pipeline/admin.py decides which one to trust.
    def credentials() -> tuple[str | None, str | None]:
        return request.headers.get("Authorization"), request.headers.get("X-Serverless-Authorization")

    @web.route("/admin/prompts", methods=["GET"])
    def admin_prompts() -> Any:
        return flask_response(*call(lambda _: app.admin_prompts(*credentials()), None))

    @web.route("/admin/index", methods=["GET"])
    def admin_index() -> Any:
        return flask_response(*call(lambda _: app.admin_index(*credentials()), None))

    @web.route("/admin/eval", methods=["POST"])
    def admin_eval() -> Any:
        return flask_handle(lambda body: app.admin_eval(body, *credentials()), request)

    @web.route("/", methods=["POST", "OPTIONS"])
    def query_at_root() -> Any:
        # the query Cloud Function answers at its own root URL
        return flask_handle(app.query, request)

    @web.route("/", methods=["GET"])
    def page() -> Any:
        headers = {
            "Content-Security-Policy": _PAGE_CSP,
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-cache",
        }
        return Response(_web_file("index.html"), content_type="text/html; charset=utf-8", headers=headers)

    @web.route("/assets/<name>", methods=["GET"])
    def static(name: str) -> Any:
        match = _STATIC_RE.match(name)
        body = _web_file(name) if match else None
        if match is None or body is None:
            return flask_response(*error_body(404, "not_found", f"no static file {name!r}"))
        # no-cache: revalidate each load so an upgraded server never runs with a stale script.
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
        return Response(body, content_type=_STATIC_TYPES[match.group(1)], headers=headers)

    @web.errorhandler(404)
    def not_found(_: Any) -> Any:
        return flask_response(*error_body(404, "not_found", f"no route {request.method} {request.path}"))

    @web.errorhandler(405)
    def not_allowed(_: Any) -> Any:
        return flask_response(
            *error_body(405, "method_not_allowed", f"{request.method} is not allowed on {request.path}")
        )

    return web


_apps: dict[int, Any] = {}


def dispatch(app: Any, request: Any) -> Any:
    """Serve one request of the `query` Cloud Function with the same routes as the local server.

    POST / answers a question; GET / is the search page (so the page can be served by `query` itself), and the
    page's GET routes (/corpora, /documents/…, /assets/…), POST /feedback and the /admin/ routes (for the
    principals in REGRAG_ADMIN_PRINCIPALS; the eval scheduler job calls /admin/eval) work too.
    """
    web = _apps.get(id(app))
    if web is None:
        web = _apps.setdefault(id(app), create_server_app(app))
    # functions-framework reads the body again after we return, so the inner app gets a copy of the stream
    data = request.get_data()
    environ = {**request.environ, "wsgi.input": io.BytesIO(data), "CONTENT_LENGTH": str(len(data))}
    with web.request_context(environ):
        return web.full_dispatch_request()


def serve(app: Any, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Serve until interrupted (threaded; one request per thread)."""
    from werkzeug.serving import make_server

    server = make_server(host, port, create_server_app(app), threaded=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
