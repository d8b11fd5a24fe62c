"""`regrag serve`: the same routes as the query function, as a WSGI application on a local server."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.wrappers import Request

from regrag.api.routes import dispatch
from regrag.services import Services

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def wsgi_app(services: Services) -> WsgiApp:
    """The API and the search page as a WSGI callable (what any WSGI server, or a test client, runs)."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        return dispatch(services, Request(environ))(environ, start_response)

    return app


def serve(services: Services, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Serve until interrupted (threaded; one request per thread)."""
    from werkzeug.serving import make_server

    server = make_server(host, port, wsgi_app(services), threaded=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
