"""The local server: the same handlers as the Cloud Functions behind one Flask app, plus the search page."""

from __future__ import annotations

from importlib import resources
from typing import Any

from regrag.api import call, error_body, flask_handle, flask_response


def create_server_app(app: Any) -> Any:
    """A Flask app routing /query, /rerank, /compose, /healthz and the page to `app` (a regrag.app.Regrag)."""
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

    @web.route("/", methods=["GET"])
    def page() -> Any:
        html = resources.files("regrag.web").joinpath("index.html").read_text(encoding="utf-8")
        return Response(html, mimetype="text/html; charset=utf-8")

    @web.errorhandler(404)
    def not_found(_: Any) -> Any:
        return flask_response(*error_body(404, "not_found", f"no route {request.method} {request.path}"))

    @web.errorhandler(405)
    def not_allowed(_: Any) -> Any:
        return flask_response(
            *error_body(405, "method_not_allowed", f"{request.method} is not allowed on {request.path}")
        )

    return web


def serve(app: Any, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Serve until interrupted (threaded; one request per thread)."""
    from werkzeug.serving import make_server

    server = make_server(host, port, create_server_app(app), threaded=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
