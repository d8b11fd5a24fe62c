"""reconcile: POST {dry_run?} (Cloud Scheduler with OIDC) → re-publish missing documents, remove orphans."""

import functions_framework

from regrag.api import flask_handle
from regrag.wiring import get_app


@functions_framework.http
def reconcile(request):
    return flask_handle(get_app().reconcile, request)
