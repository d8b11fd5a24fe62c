"""query: POST {question, filters?, corpora?, top_k?} → hybrid retrieval → rerank → compose → cited verbatim answer.

The same function serves the search page (GET /) and the routes it reads (GET /corpora, /documents/{id}), and
records feedback (POST /feedback): see regrag.server.dispatch.
"""

import functions_framework

from regrag.server import dispatch
from regrag.wiring import get_app


@functions_framework.http
def query(request):
    return dispatch(get_app(), request)
