"""rerank: POST {question, candidates: [{id}], top_n?} → candidates reordered, with rerank_status."""

import functions_framework

from regrag.api.routes import dispatch_one
from regrag.wiring import get_services


@functions_framework.http
def rerank(request):
    return dispatch_one(get_services(), request, "rerank")
