"""query: POST {question, filters?, corpora?, top_k?} → hybrid retrieval → rerank → compose → cited verbatim answer.

The same function serves the search page (GET /) and the routes it reads (GET /corpora, /documents/{id}),
records feedback (POST /feedback) and answers the admin routes: see regrag.api.routes.
"""

import functions_framework

from regrag.api.routes import dispatch
from regrag.wiring import get_services


@functions_framework.http
def query(request):
    return dispatch(get_services(), request)
