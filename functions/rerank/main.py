"""rerank: POST {question, candidates: [{id}], top_n?} → candidates reordered, with rerank_status."""

import functions_framework

from regrag.api import flask_handle
from regrag.wiring import get_app


@functions_framework.http
def rerank(request):
    return flask_handle(get_app().rerank, request)
