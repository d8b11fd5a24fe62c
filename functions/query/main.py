"""query: POST {question, filters?, top_k?} → hybrid retrieval → rerank → compose → cited verbatim answer."""

import functions_framework

from regrag.api import flask_handle
from regrag.wiring import get_app


@functions_framework.http
def query(request):
    return flask_handle(get_app().query, request)
