"""Operating the service: who may, what the index holds, which prompts are active, scheduled evaluation."""

from __future__ import annotations

import base64
import datetime as dt
import hmac
import json
import logging
import re
from collections.abc import Callable, Collection
from typing import Any

from regrag import logs
from regrag.domain.errors import Forbidden, InvalidInput, NotFound, Unauthorized
from regrag.ports import BlobStore

log = logs.get("admin")

REGRESSION_POINTS = 0.03  # an nDCG@10 drop larger than 3 points is an ERROR a log-based alert matches
# The alert's log-based metric (infra/monitoring.tf) matches this message exactly; tests/gcp/test_gcp_infra.py
# checks the two agree, so change both together.
REGRESSION_MESSAGE = "eval regression: nDCG@10 dropped by more than 3 points"
# The Google ID token an admin call carries (Cloud Scheduler's OIDC token for the scheduled jobs, or an
# operator's `gcloud auth print-identity-token --include-email`), in one place:
# - audience: the called service's run.app URL. Cloud Run checks it; infra/scheduler.tf sets each job's
#   `oidc_token.audience` to its target's URI (tests/gcp/test_gcp_infra.py checks they agree);
# - issuer: one of GOOGLE_ISSUERS; signature and expiry: checked by Cloud Run, which forwards the token with
#   its signature removed (caller_email explains why it is not re-verified here);
# - the claims read here: ADMIN_CLAIMS, `email` (the service account for Scheduler) and `email_verified`.
GOOGLE_ISSUERS = frozenset({"https://accounts.google.com", "accounts.google.com"})
ADMIN_CLAIMS = ("iss", "email", "email_verified")
_QUESTIONS_RE = re.compile(r"^[A-Za-z0-9._/-]+\.jsonl$")


def require_admin(
    mode: str,
    admin_token: str | None,
    admin_principals: Collection[str],
    authorization: str | None,
    serverless_authorization: str | None = None,
) -> str:
    """Who is calling an admin endpoint; Unauthorized (401) or Forbidden (403) with a clear message otherwise.

    Locally (`mode` "local"): `Authorization: Bearer <REGRAG_ADMIN_TOKEN>`. On GCP (`mode` "gcp"): the email of
    the Google ID token that Cloud Run IAM verified, which must be one of `admin_principals`
    (REGRAG_ADMIN_PRINCIPALS): being allowed to invoke `query` is not enough, since query_invokers may too.

    Args:
        mode: Settings.mode.
        admin_token: REGRAG_ADMIN_TOKEN (local mode).
        admin_principals: lower-case emails from REGRAG_ADMIN_PRINCIPALS (GCP mode).
        authorization: the request's Authorization header.
        serverless_authorization: its X-Serverless-Authorization header (GCP mode; see caller_email).

    Returns:
        The caller: its email on GCP, "admin token" locally (for the audit log line).
    """
    if mode == "gcp":
        if not admin_principals:
            raise Forbidden("admin endpoints are disabled: set REGRAG_ADMIN_PRINCIPALS on the function to enable them")
        email = caller_email(authorization, serverless_authorization)
        if email not in admin_principals:
            raise Forbidden(f"admin endpoint: {email} is not in REGRAG_ADMIN_PRINCIPALS")
        return email
    if not admin_token:
        raise Forbidden("admin endpoints are disabled: set REGRAG_ADMIN_TOKEN on the server to enable them")
    if not authorization:
        raise Unauthorized("admin endpoint: send 'Authorization: Bearer <admin token>'")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("admin endpoint: the Authorization header must be 'Bearer <admin token>'")
    if not hmac.compare_digest(token.strip().encode(), admin_token.encode()):
        raise Forbidden("admin endpoint: the token is not valid")
    return "admin token"


def caller_email(authorization: str | None, serverless_authorization: str | None = None) -> str:
    """The lower-case `email` claim of the Google ID token Cloud Run verified before the request reached us.

    Trust: `query` is deployed with --no-allow-unauthenticated, so Cloud Run's front end admits a request only
    with a Google-signed ID token (signature, expiry, issuer, audience = the service URL) of a principal holding
    roles/run.invoker; a forged or expired token never reaches the function. Re-verifying the signature here
    would add nothing, and cannot be done anyway: Cloud Run passes the token on with its signature removed
    (https://cloud.google.com/run/docs/troubleshooting#signature-removed). What remains is WHO, which only the
    payload says, so it is decoded without verification.

    Cloud Run checks X-Serverless-Authorization instead of Authorization when a request carries both, and then
    hands Authorization through untouched
    (https://cloud.google.com/run/docs/authenticating/service-to-service#acquire-token): so the identity comes
    from X-Serverless-Authorization whenever it is present, never from an Authorization header nobody verified.

    If ingress ever bypassed Cloud Run IAM (allUsers as invoker, which infra/ allows with
    allow_unauthenticated_query; a load balancer or proxy in front that does not check Google ID tokens; or
    `regrag serve` run in gcp mode), anyone could send a payload naming an admin: the token would have to be
    verified here instead, with its signature intact (google.oauth2.id_token.verify_oauth2_token against
    Google's certificates, audience = the service URL). That is why infra/ sets no REGRAG_ADMIN_PRINCIPALS when
    allow_unauthenticated_query is on; leave it unset wherever Cloud Run IAM is not in front.
    """
    header = serverless_authorization or authorization
    if not header:
        raise Unauthorized(
            "admin endpoint: send 'Authorization: Bearer <Google ID token>' (gcloud auth print-identity-token)"
        )
    scheme, _, token = header.strip().partition(" ")
    parts = token.strip().split(".")
    if scheme.lower() != "bearer" or len(parts) != 3:
        raise Unauthorized("admin endpoint: the Authorization header must be 'Bearer <Google ID token>' (a JWT)")
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError as exc:  # binascii.Error, UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise Unauthorized("admin endpoint: the bearer token is not a JWT with a JSON payload") from exc
    if not isinstance(payload, dict) or payload.get("iss") not in GOOGLE_ISSUERS:
        raise Unauthorized("admin endpoint: the bearer token is not a Google ID token")
    email = payload.get("email")
    if not isinstance(email, str) or "@" not in email or payload.get("email_verified") is False:
        raise Unauthorized(
            "admin endpoint: the ID token carries no verified email claim; request one that includes it "
            "(gcloud auth print-identity-token --include-email, or the metadata server's format=full)"
        )
    return email.strip().lower()


def prompt_versions() -> list[dict[str, Any]]:
    from regrag.prompts import list_prompts

    return [{"name": p.name, "version": p.version, "key": p.key, "sha256": p.sha256} for p in list_prompts()]


def active_prompts(reranker: Any, *, hyde: Any = None, questions: Any = None) -> dict[str, str]:
    """The prompt each model-backed component runs with ({component: prompt key}), for reports and /admin.

    `hyde` and `questions` are the retrieval aids when they are wired (None when switched off).
    """
    out = {}
    for component, part in (("rerank", reranker), ("hyde", hyde), ("questions", questions)):
        prompt = getattr(part, "prompt", None)
        if prompt is not None and hasattr(prompt, "key"):
            out[component] = prompt.key
    return out


def index_info(store: Any, embedder: Any) -> dict[str, Any]:
    stats = store.stats()
    return {
        "documents": stats.get("documents"),
        "chunks": stats.get("chunks"),
        "corpora": stats.get("corpora"),
        "embedding_model": embedder.model_id,
        "dimension": embedder.dimension,
        "index_version": stats.get("index_version"),
        "last_ingest": stats.get("last_ingest"),
    }


def _reports_prefix(questions_name: str) -> str:
    return questions_name.rsplit(".", 1)[0] + ".report-"


def run_scheduled_eval(
    name: str, *, blobs: BlobStore, evaluate: Callable[[list[dict[str, Any]]], dict[str, Any]], context: dict[str, Any]
) -> dict[str, Any]:
    """Evaluate the question file `name` (a .jsonl object) from the bucket, write the report beside it, and
    compare with the previous one.

    The report is `<name>.report-<UTC time>.json` (and `.md`). A drop of more than 3 nDCG@10 points against the
    previous report logs an ERROR line (`eval regression`) that a log-based alert can match.
    """
    if not _QUESTIONS_RE.match(name) or ".." in name:
        raise InvalidInput(f"questions must name a .jsonl object in the bucket, got {name!r}")
    blob = blobs.read_optional(name)
    if blob is None:
        raise NotFound(f"no question file {name!r} in the bucket")
    try:
        questions = [json.loads(line) for line in blob.data.decode("utf-8").splitlines() if line.strip()]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{name}: not UTF-8 JSON lines ({exc})") from exc
    if not questions or not all(isinstance(q, dict) and isinstance(q.get("question"), str) for q in questions):
        raise InvalidInput(f"{name}: every line must be an object with a 'question'")

    prefix = _reports_prefix(name)
    previous_names = sorted(b.name for b in blobs.list(prefix) if b.name.endswith(".json"))
    report = evaluate(questions)
    report["context"] = context
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    report_name = f"{prefix}{stamp}.json"
    blobs.write(report_name, json.dumps(report, ensure_ascii=False, indent=1).encode("utf-8"))
    from regrag.ops.evaluation import format_table

    blobs.write(report_name[:-5] + ".md", (format_table(report) + "\n").encode("utf-8"))

    ndcg = report["metrics"].get("ndcg@10")
    result: dict[str, Any] = {
        "report": report_name,
        "metrics": report["metrics"],
        "previous": None,
        "regression": False,
    }
    if previous_names:
        previous = blobs.read(previous_names[-1])
        prev_ndcg = json.loads(previous.data)["metrics"].get("ndcg@10")
        result["previous"] = {"report": previous_names[-1], "ndcg@10": prev_ndcg}
        if isinstance(prev_ndcg, float) and isinstance(ndcg, float) and prev_ndcg - ndcg > REGRESSION_POINTS:
            result["regression"] = True
            logs.event(
                log,
                logging.ERROR,
                REGRESSION_MESSAGE,
                questions=name,
                ndcg=ndcg,
                previous_ndcg=prev_ndcg,
                report=report_name,
                previous_report=previous_names[-1],
            )
    logs.event(log, logging.INFO, "scheduled eval done", questions=name, report=report_name, ndcg=ndcg)
    return result
