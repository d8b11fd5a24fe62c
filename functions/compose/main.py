"""compose: POST {question, candidates: [{id}], filters?} → verbatim quotes with 〔《title》，生效：date〕."""

import functions_framework

from regrag.api.routes import dispatch_one
from regrag.wiring import get_services


@functions_framework.http
def compose(request):
    return dispatch_one(get_services(), request, "compose")
