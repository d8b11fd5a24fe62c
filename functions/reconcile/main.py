"""reconcile: POST {dry_run?} (Cloud Scheduler with OIDC) → re-publish missing documents, remove orphans."""

import functions_framework

from regrag.api.routes import dispatch_one
from regrag.wiring import get_services


@functions_framework.http
def reconcile(request):
    return dispatch_one(get_services(), request, "reconcile")
