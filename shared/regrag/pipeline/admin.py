"""Operating the service: who may, what the index holds, which prompts are active, scheduled evaluation."""

from __future__ import annotations

import datetime as dt
import hmac
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from regrag import logs
from regrag.domain.errors import Forbidden, InvalidInput, NotFound, Unauthorized
from regrag.ports import BlobStore

log = logs.get("admin")

REGRESSION_POINTS = 0.03  # an nDCG@10 drop larger than 3 points is an ERROR a log-based alert matches
_QUESTIONS_RE = re.compile(r"^[A-Za-z0-9._/-]+\.jsonl$")


def require_admin(configured_token: str | None, authorization: str | None) -> None:
    """Locally, admin endpoints need `Authorization: Bearer <REGRAG_ADMIN_TOKEN>`.

    On GCP the same endpoints sit behind IAM (only the scheduler's and operators' identities may invoke the
    function); the token check stays as a second lock.
    """
    if not configured_token:
        raise Forbidden("admin endpoints are disabled: set REGRAG_ADMIN_TOKEN on the server to enable them")
    if not authorization:
        raise Unauthorized("admin endpoint: send 'Authorization: Bearer <admin token>'")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("admin endpoint: the Authorization header must be 'Bearer <admin token>'")
    if not hmac.compare_digest(token.strip().encode(), configured_token.encode()):
        raise Forbidden("admin endpoint: the token is not valid")


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
    body: Any, *, blobs: BlobStore, evaluate: Callable[[list[dict[str, Any]]], dict[str, Any]], context: dict[str, Any]
) -> dict[str, Any]:
    """Evaluate a question file from the bucket, write the report beside it, compare with the previous one.

    Body: {"questions": "<object name>.jsonl", "k"?: int}. The report is `<name>.report-<UTC time>.json` (and
    `.md`). A drop of more than 3 nDCG@10 points against the previous report logs an ERROR line
    (`eval regression`) that a log-based alert can match.
    """
    if not isinstance(body, dict) or not isinstance(body.get("questions"), str):
        raise InvalidInput('body must be {"questions": "<object name>.jsonl"}')
    name = body["questions"]
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
    from regrag.evaluation import format_table

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
                "eval regression: nDCG@10 dropped by more than 3 points",
                questions=name,
                ndcg=ndcg,
                previous_ndcg=prev_ndcg,
                report=report_name,
                previous_report=previous_names[-1],
            )
    logs.event(log, logging.INFO, "scheduled eval done", questions=name, report=report_name, ndcg=ndcg)
    return result
