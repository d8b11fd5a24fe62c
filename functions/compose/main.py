"""compose: POST {question, candidates: [{id}], filters?} → verbatim quotes with 〔《title》，生效：date〕."""

import functions_framework

from regrag.api import flask_handle
from regrag.wiring import get_app


@functions_framework.http
def compose(request):
    return flask_handle(get_app().compose, request)
