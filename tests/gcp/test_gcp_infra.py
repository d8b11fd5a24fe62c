"""infra/*.tf, parsed with python-hcl2 (Terraform itself cannot plan without a project): the invariants the
deployment relies on. `terraform fmt -check` runs too when a terraform binary is on PATH."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
from dataclasses import fields
from pathlib import Path
from typing import Any

import hcl2
import pytest

from regrag import logs
from regrag.adapters.gcp.embedders import NATIVE_DIMENSIONS
from regrag.config import Settings

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
# the functions and their triggers, from the two places that define them: functions/ and deploy.sh's table
FUNCTIONS = sorted(p.name for p in (ROOT / "functions").iterdir() if (p / "main.py").exists())
_TABLE = re.search(r'FUNCTIONS_TABLE="\n(.*?)"', (ROOT / "deploy.sh").read_text(), re.S).group(1)  # type: ignore[union-attr]
EVENT_FUNCTIONS = [row.split()[0] for row in _TABLE.strip().splitlines() if row.split()[1] != "http"]

# file → the resource types it may hold (one file per resource kind)
KINDS = {
    "apis.tf": {"google_project_service"},
    "storage.tf": {"google_storage_bucket", "google_storage_notification"},
    "pubsub.tf": {"google_pubsub_topic", "google_pubsub_subscription"},
    "vertex.tf": {
        "google_vertex_ai_index",
        "google_vertex_ai_index_endpoint",
        "google_vertex_ai_index_endpoint_deployed_index",
    },
    "service_accounts.tf": {"google_service_account"},
    "secrets.tf": {"google_secret_manager_secret"},
    "documentai.tf": {"google_document_ai_processor", "google_document_ai_processor_default_version"},
    "scheduler.tf": {"google_cloud_scheduler_job"},
    "monitoring.tf": {"google_logging_metric", "google_monitoring_alert_policy"},
    "iam.tf": {
        "google_storage_bucket_iam_member",
        "google_pubsub_topic_iam_member",
        "google_project_iam_member",
        "google_secret_manager_secret_iam_member",
        "google_cloud_run_v2_service_iam_member",
    },
}

# The least-privilege policy, as (function, role, resource): a grant not listed here fails the test.
EXPECTED_GRANTS = {
    ("ingest", "roles/storage.objectViewer", "docs"),
    ("ingest", "roles/storage.objectCreator", "state"),
    ("embed", "roles/storage.objectCreator", "state"),
    ("upsert", "roles/storage.objectUser", "state"),
    ("query", "roles/storage.objectUser", "state"),  # reads the chunk map; writes feedback, query log, eval reports
    ("rerank", "roles/storage.objectViewer", "state"),
    ("compose", "roles/storage.objectViewer", "state"),
    ("reconcile", "roles/storage.objectViewer", "docs"),
    ("reconcile", "roles/storage.objectUser", "state"),
    ("ingest", "roles/pubsub.publisher", "chunked"),
    ("embed", "roles/pubsub.publisher", "embedded"),
    ("reconcile", "roles/pubsub.publisher", "chunked"),
    ("reconcile", "roles/pubsub.publisher", "embedded"),
    ("upsert", "roles/pubsub.publisher", "alerts"),  # alerts on watches, recorded by the upsert stage
    ("query", "roles/pubsub.publisher", "alerts"),  # … and by the scheduled check of every watch
    ("ingest", "roles/eventarc.eventReceiver", "project"),
    ("embed", "roles/eventarc.eventReceiver", "project"),
    ("upsert", "roles/eventarc.eventReceiver", "project"),
    ("embed", "roles/aiplatform.user", "project"),
    ("upsert", "roles/aiplatform.user", "project"),
    ("query", "roles/aiplatform.user", "project"),
    ("rerank", "roles/aiplatform.user", "project"),  # Gemini through Vertex AI, the default (no API key)
    ("ingest", "roles/documentai.apiUser", "project"),  # OCR of scans; nothing else of Document AI
    ("reconcile", "roles/documentai.apiUser", "project"),  # re-ingests what the index misses, scans included
}


def unquote(value: Any) -> Any:
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def parse() -> dict[str, dict[str, Any]]:
    return {p.name: hcl2.loads(p.read_text(encoding="utf-8")) for p in sorted(INFRA.glob("*.tf"))}


@pytest.fixture(scope="module")
def tf() -> dict[str, dict[str, Any]]:
    return parse()


def blocks(tf: dict[str, dict[str, Any]], kind: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(type, name) → body of every `kind` block (resource, data) across files."""
    out = {}
    for doc in tf.values():
        for entry in doc.get(kind, []):
            for rtype, named in entry.items():
                for name, body in named.items():
                    out[(unquote(rtype), unquote(name))] = body
    return out


def variables_of(tf: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {unquote(n): body for doc in tf.values() for e in doc.get("variable", []) for n, body in e.items()}


def locals_of(tf: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for doc in tf.values():
        for entry in doc.get("locals", []):
            out.update(entry)
    return out


def test_one_file_per_resource_kind(tf):
    for name, doc in tf.items():
        for entry in doc.get("resource", []):
            for rtype in entry:
                assert unquote(rtype) in KINDS.get(name, set()), f"{unquote(rtype)} does not belong in {name}"
    found = {unquote(t) for doc in tf.values() for e in doc.get("resource", []) for t in e}
    assert found == set().union(*KINDS.values())


def test_buckets_are_private_and_removals_are_notified_to_the_embedded_topic(tf):
    resources = blocks(tf, "resource")
    for name in ("docs", "state"):
        bucket = resources[("google_storage_bucket", name)]
        assert bucket["uniform_bucket_level_access"] is True
        assert unquote(bucket["public_access_prevention"]) == "enforced"
    notification = resources[("google_storage_notification", "removals")]
    assert unquote(notification["payload_format"]) == "JSON_API_V1"
    assert [unquote(e) for e in notification["event_types"]] == ["OBJECT_DELETE", "OBJECT_ARCHIVE"]
    assert "google_pubsub_topic.embedded" in notification["topic"]


def test_the_failed_delivery_counters_expire_and_match_the_recorders_prefix(tf):
    from regrag.adapters.gcp.failures import GcsFailureRecorder

    state = blocks(tf, "resource")[("google_storage_bucket", "state")]
    [rule] = state["lifecycle_rule"]
    condition = rule["condition"][0] if isinstance(rule["condition"], list) else rule["condition"]
    action = rule["action"][0] if isinstance(rule["action"], list) else rule["action"]
    prefix = [unquote(p) for p in condition["matches_prefix"]]
    assert condition["age"] == 7 and unquote(action["type"]) == "Delete"
    recorder = GcsFailureRecorder(None, "failures/")  # type: ignore[arg-type]
    assert prefix == [recorder.attempts_prefix]  # wiring.gcp's prefix with an empty REGRAG_STATE_PREFIX


def test_stage_topics_dead_letter_topics_and_their_subscriptions(tf):
    resources, local = blocks(tf, "resource"), locals_of(tf)
    defaults = Settings.from_env({})  # the topic names the functions use unless told otherwise
    assert {k: unquote(v) for k, v in local["topics"].items()} == {
        "chunked": defaults.topic_chunked,
        "embedded": defaults.topic_embedded,
        "alerts": defaults.topic_alerts,
    }
    dead = resources[("google_pubsub_topic", "dead")]
    assert "local.event_functions" in dead["for_each"] and unquote(dead["name"]) == "regrag-${each.value}-dead"
    assert [unquote(f) for f in local["event_functions"]] == EVENT_FUNCTIONS
    kept = resources[("google_pubsub_subscription", "dead")]
    assert "google_pubsub_topic.dead" in kept["for_each"] and unquote(kept["message_retention_duration"]) == "604800s"
    deploy = (ROOT / "deploy.sh").read_text()
    assert '--dead-letter-topic="regrag-$fn-dead"' in deploy  # the same names


def test_vector_search_index_streams_and_matches_the_embedder(tf):
    resources, variables = blocks(tf, "resource"), variables_of(tf)
    index = resources[("google_vertex_ai_index", "chunks")]
    assert unquote(index["index_update_method"]) == "STREAM_UPDATE"
    config = index["metadata"][0]["config"][0]
    assert config["dimensions"] == "${var.embedding_dimension}"
    assert unquote(config["distance_measure_type"]) == "DOT_PRODUCT_DISTANCE"
    model = Settings.from_env({}).embedding_model  # the index's size is the default model's native dimension
    assert variables["embedding_dimension"]["default"] == NATIVE_DIMENSIONS[model]
    assert resources[("google_vertex_ai_index_endpoint", "chunks")]["public_endpoint_enabled"] is True
    deployed = resources[("google_vertex_ai_index_endpoint_deployed_index", "chunks")]
    assert deployed["deployed_index_id"] == "${var.deployed_index_id}"
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", unquote(variables["deployed_index_id"]["default"]))


def test_one_service_account_per_function_as_deploy_sh_names_them(tf):
    resources, local = blocks(tf, "resource"), locals_of(tf)
    accounts = resources[("google_service_account", "function")]
    assert "local.functions" in accounts["for_each"] and unquote(accounts["account_id"]) == "regrag-${each.value}"
    assert sorted(unquote(f) for f in local["http_functions"]) == sorted(set(FUNCTIONS) - set(EVENT_FUNCTIONS))
    table = re.search(r'FUNCTIONS_TABLE="\n(.*?)"', (ROOT / "deploy.sh").read_text(), re.S).group(1)
    rows = [line.split() for line in table.strip().splitlines()]
    assert sorted(r[0] for r in rows) == FUNCTIONS and all(r[5] == f"regrag-{r[0]}" for r in rows)


def test_grants_are_least_privilege(tf):
    text = "\n".join(p.read_text() for p in INFRA.glob("*.tf"))
    assert not re.search(r"roles/(owner|editor|viewer|storage\.admin|storage\.objectAdmin|pubsub\.admin)\b", text)
    local = locals_of(tf)
    grants = set()
    for spec in local["bucket_grants"].values():
        grants.add((unquote(spec["fn"]), unquote(spec["role"]), unquote(spec["bucket"])))
    for spec in local["topic_grants"].values():
        grants.add((unquote(spec["fn"]), "roles/pubsub.publisher", unquote(spec["topic"])))
    # project_grants is one expression: {for fn in <list> : … => {role = "<role>", fn = fn}} per role
    pairs = re.findall(
        r'for fn in (local\.event_functions|\[[^\]]*\]) : "[^"]*" => \{role = "([^"]+)"', local["project_grants"]
    )
    assert len(pairs) == 3
    for functions, role in pairs:
        names = EVENT_FUNCTIONS if functions == "local.event_functions" else re.findall(r'"(\w+)"', functions)
        grants |= {(fn, role, "project") for fn in names}
    assert grants == EXPECTED_GRANTS
    resources = blocks(tf, "resource")
    project_members = [b for (t, _), b in resources.items() if t == "google_project_iam_member"]
    assert {b["role"] for b in project_members} == {"${each.value.role}", '"roles/pubsub.publisher"'}
    storage_agent = resources[("google_project_iam_member", "storage_agent_publishes_events")]
    assert storage_agent["member"] == "${local.storage_agent}"  # the only project-wide publisher


def test_the_gemini_secret_is_created_without_its_value_and_readable_by_query_and_rerank_only(tf):
    resources = blocks(tf, "resource")
    assert ("google_secret_manager_secret", "gemini") in resources
    assert not [t for t, _ in resources if t == "google_secret_manager_secret_version"]  # no key in state
    accessor = resources[("google_secret_manager_secret_iam_member", "gemini")]
    assert accessor["for_each"] == '${toset(["query", "rerank"])}'
    assert unquote(accessor["role"]) == "roles/secretmanager.secretAccessor"


def test_only_query_is_invocable_from_outside_and_only_when_authenticated_unless_opened(tf):
    resources, local = blocks(tf, "resource"), locals_of(tf)
    invoker = resources[("google_cloud_run_v2_service_iam_member", "invoker")]
    assert invoker["for_each"] == "${var.functions_deployed ? local.invokers : {}}"
    assert unquote(invoker["role"]) == "roles/run.invoker"
    assert (
        local["query_members"] == '${concat(var.query_invokers, var.allow_unauthenticated_query ? ["allUsers"] : [])}'
    )
    invokers = local["invokers"]
    assert "local.query_members" in invokers and '"query"' in invokers
    # query's invokers: the query_invokers (or allUsers when opened on purpose) and the scheduler, nobody else
    assert re.findall(r'fn = "query", member = ([\w.\[\]]+)', invokers) == ["m", "local.scheduler"]
    # no other grant on query, in whatever shape (the other two: query's own account invoking rerank, compose)
    assert invokers.count('fn = "query"') == 2 and invokers.count('local.sa["query"]') == 2
    assert re.search(r"for m in local\.query_members : ", invokers)
    assert unquote(local["scheduler"]) == "serviceAccount:${google_service_account.scheduler.email}"
    assert "local.event_functions" in invokers and "local.sa[fn]" in invokers  # own trigger identity
    assert '{fn = "reconcile", member = local.scheduler}' in invokers
    # rerank and compose: query's service account and nobody else (query calls them with its ID token)
    assert re.findall(r'fn = "(rerank|compose)", member = ([\w.\[\]"]+)', invokers) == [
        ("rerank", 'local.sa["query"]'),
        ("compose", 'local.sa["query"]'),
    ]
    variables = variables_of(tf)
    assert variables["allow_unauthenticated_query"]["default"] is False
    assert variables["query_invokers"]["default"] == []
    text = "\n".join(p.read_text() for p in INFRA.glob("*.tf"))
    assert text.count('"allUsers"') == 1 and "allAuthenticatedUsers" not in text


def test_the_scheduler_calls_reconcile_with_oidc(tf):
    job = blocks(tf, "resource")[("google_cloud_scheduler_job", "reconcile")]
    target = job["http_target"][0]
    oidc = target["oidc_token"][0]
    assert oidc["service_account_email"] == "${google_service_account.scheduler.email}"
    assert oidc["audience"] == target["uri"] == "${data.google_cloud_run_v2_service.reconcile[0].uri}"
    assert unquote(target["http_method"]) == "POST" and target["body"] == '${base64encode("{}")}'
    assert job["schedule"] == "${var.reconcile_schedule}"


def test_the_scheduler_runs_the_eval_on_query_admin_eval_with_oidc(tf):
    resources, local, variables = blocks(tf, "resource"), locals_of(tf), variables_of(tf)
    job = resources[("google_cloud_scheduler_job", "eval")]
    target = job["http_target"][0]
    oidc = target["oidc_token"][0]
    query = blocks(tf, "data")[("google_cloud_run_v2_service", "query")]
    assert unquote(query["name"]) == "query"
    assert oidc["service_account_email"] == "${google_service_account.scheduler.email}"
    assert oidc["audience"] == "${data.google_cloud_run_v2_service.query[0].uri}"  # the service URL, not the path
    assert unquote(target["uri"]) == "${data.google_cloud_run_v2_service.query[0].uri}/admin/eval"
    assert unquote(target["http_method"]) == "POST"
    assert target["body"] == "${base64encode(jsonencode({questions = var.eval_questions}))}"
    assert unquote(variables["eval_questions"]["default"]) == "evals/dev.jsonl"
    assert (job["schedule"], job["time_zone"]) == ("${var.eval_schedule}", "${var.eval_time_zone}")
    # like reconcile, it needs the deployed function; and not when query is open to allUsers, since Cloud Run then
    # verifies no token and the admin identity check would trust anyone (ops/admin.py caller_email)
    assert job["count"] == query["count"] == "${local.eval_scheduled ? 1 : 0}"
    assert local["eval_scheduled"] == "${var.functions_deployed && !var.allow_unauthenticated_query}"


def test_alerts_have_a_topic_that_keeps_them_a_subscription_and_routes_with_filters(tf):
    resources, variables = blocks(tf, "resource"), variables_of(tf)
    topic = resources[("google_pubsub_topic", "alerts")]
    assert topic["name"] == "${local.topics.alerts}" and unquote(topic["message_retention_duration"]) == "604800s"
    kept = resources[("google_pubsub_subscription", "alerts")]
    assert kept["topic"] == "${google_pubsub_topic.alerts.id}"
    assert unquote(kept["message_retention_duration"]) == "604800s"
    route = resources[("google_pubsub_subscription", "alert_route")]
    assert route["for_each"] == "${var.alert_routes}" and route["filter"] == "${each.value.filter}"
    assert route["push_config"][0]["push_endpoint"] == "${each.value.endpoint}"
    assert variables["alert_routes"]["default"] == {}
    outputs = {unquote(n): body for doc in tf.values() for e in doc.get("output", []) for n, body in e.items()}
    assert '"export REGRAG_TOPIC_ALERTS=${google_pubsub_topic.alerts.name}"' in outputs["deploy_env"]["value"]


def test_the_scheduler_checks_every_watch_on_query_with_oidc_under_the_admin_rule(tf):
    resources, local, variables = blocks(tf, "resource"), locals_of(tf), variables_of(tf)
    job = resources[("google_cloud_scheduler_job", "watch_check")]
    target = job["http_target"][0]
    oidc = target["oidc_token"][0]
    assert unquote(target["uri"]) == "${data.google_cloud_run_v2_service.query[0].uri}/admin/watches/check"
    assert oidc["audience"] == "${data.google_cloud_run_v2_service.query[0].uri}"
    assert oidc["service_account_email"] == "${google_service_account.scheduler.email}"
    assert unquote(target["http_method"]) == "POST"
    assert job["count"] == "${local.watch_check_scheduled ? 1 : 0}"
    assert local["watch_check_scheduled"] == '${local.eval_scheduled && var.watch_check_schedule != ""}'
    assert (job["schedule"], job["time_zone"]) == ("${var.watch_check_schedule}", "${var.watch_check_time_zone}")
    assert unquote(variables["watch_check_schedule"]["default"])
    from regrag.api.routes import URL_MAP

    assert "/admin/watches/check" in {rule.rule for rule in URL_MAP.iter_rules()}


def test_the_scheduler_is_the_admin_principal_deploy_sh_passes_to_query(tf):
    local = locals_of(tf)
    # the scheduler's service account and var.admin_principals; none when query is open to allUsers
    assert local["admin_principals"] == (
        "${var.allow_unauthenticated_query ? [] : "
        "concat([google_service_account.scheduler.email], var.admin_principals)}"
    )
    outputs = {unquote(n): body for doc in tf.values() for e in doc.get("output", []) for n, body in e.items()}
    assert '"export REGRAG_ADMIN_PRINCIPALS=${join(",", local.admin_principals)}"' in outputs["deploy_env"]["value"]
    # the OCR processor that infra creates, at its pinned version, is the one deploy.sh hands to ingest and
    # reconcile: each request names the version, so each OCR'd page records it
    exported = outputs["deploy_env"]["value"]
    assert '"export REGRAG_DOCUMENTAI_PROCESSOR=${local.documentai_processor_version}"' in exported
    processor = blocks(tf, "resource")[("google_document_ai_processor", "ocr")]
    assert unquote(processor["type"]) == "OCR_PROCESSOR" and processor["location"] == "${var.documentai_location}"
    deploy = (ROOT / "deploy.sh").read_text()
    assert "[[ $fn == query && -n ${REGRAG_ADMIN_PRINCIPALS:-} ]]" in deploy  # tests/gcp/test_gcp_deploy.py runs it


def test_the_regression_alert_matches_the_line_the_eval_logs(tf):
    from regrag import logs
    from regrag.ops.admin import REGRESSION_MESSAGE

    resources = blocks(tf, "resource")
    metric = resources[("google_logging_metric", "eval_regression")]
    lines = [line.strip() for line in unquote(metric["filter"]).splitlines()[1:-1]]  # inside the heredoc
    assert lines == [
        'resource.type="cloud_run_revision"',  # Cloud Functions 2nd gen log as Cloud Run revisions
        'resource.labels.service_name="query"',
        "severity=ERROR",
        f'jsonPayload.message="{REGRESSION_MESSAGE}"',
    ]
    # the JSON line the function prints carries those two fields at the top level: Cloud Logging takes
    # `severity` as the entry's severity and keeps `message` in jsonPayload
    record = logging.LogRecord("regrag.admin", logging.ERROR, __file__, 1, REGRESSION_MESSAGE, None, None)
    entry = json.loads(logs.JsonFormatter().format(record))
    assert (entry["severity"], entry["message"]) == ("ERROR", REGRESSION_MESSAGE)
    assert metric["metric_descriptor"][0]["metric_kind"] == '"DELTA"'
    policy = resources[("google_monitoring_alert_policy", "eval_regression")]
    condition = policy["conditions"][0]["condition_threshold"][0]
    assert "logging.googleapis.com/user/${google_logging_metric.eval_regression.name}" in condition["filter"]
    assert unquote(condition["comparison"]) == "COMPARISON_GT" and condition["threshold_value"] == 0
    assert policy["notification_channels"] == "${var.alert_notification_channels}"
    apis = resources[("google_project_service", "this")]["for_each"]
    assert "logging.googleapis.com" in apis and "monitoring.googleapis.com" in apis


def test_the_rerank_fallback_alert_counts_the_line_each_answer_logs(tf, tmp_path):
    from regrag.api import endpoints
    from regrag.api.routes import call
    from regrag.wiring import build_services

    from conftest import ingest_sample, make_settings

    resources = blocks(tf, "resource")
    metric = resources[("google_logging_metric", "answers")]
    lines = [line.strip() for line in unquote(metric["filter"]).splitlines()[1:-1]]
    assert lines[-1] == f'jsonPayload.message="{endpoints.ANSWERED_MESSAGE}"'
    assert unquote(metric["label_extractors"]["rerank_status"]) == "EXTRACT(jsonPayload.rerank_status)"
    query = unquote(resources[("google_monitoring_alert_policy", "rerank_fallback")]["conditions"][0][
        "condition_prometheus_query_language"][0]["query"])  # fmt: skip
    assert query.count("logging_googleapis_com:user_regrag_answers") == 2  # the metric's name, PromQL-mapped
    assert unquote(metric["name"]) == "regrag-answers" and "${var.rerank_fallback_alert_percent}" in query
    assert variables_of(tf)["rerank_fallback_alert_percent"]["default"] == 20

    # what query logs: one JSON line per answer whose message and rerank_status field the filter reads
    services = build_services(make_settings(tmp_path))
    ingest_sample(services, ["nat-reg-0088"])
    handler, api_log = _Capture(), logging.getLogger("regrag.api")
    level = api_log.level
    api_log.addHandler(handler)
    api_log.setLevel(logging.INFO)  # whatever LOG_LEVEL an earlier test configured: the line is INFO
    try:
        status, body = call(endpoints.query, services, {"question": "停电要提前几天通知用户？"})
    finally:
        api_log.removeHandler(handler)
        api_log.setLevel(level)
        services.close()
    entry = json.loads(logs.JsonFormatter().format(handler.records[-1]))
    assert status == 200 and entry["message"] == endpoints.ANSWERED_MESSAGE
    assert entry["rerank_status"] == body["rerank_status"] and "question" not in entry


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        if record.getMessage() == "answered":
            self.records.append(record)


def test_the_index_endpoint_is_exported_with_the_project_number(tf):
    from regrag.config import Settings

    locals_ = {unquote(k): v for doc in tf.values() for entry in doc.get("locals", []) for k, v in entry.items()}
    name = unquote(locals_["index_endpoint_name"])
    assert name.startswith("projects/${data.google_project.this.number}/locations/${var.region}/indexEndpoints/")
    outputs = {unquote(k): v for doc in tf.values() for e in doc.get("output", []) for k, v in e.items()}
    assert outputs["vertex_index_endpoint"]["value"] == "${local.index_endpoint_name}"
    assert "export REGRAG_VERTEX_INDEX_ENDPOINT=${local.index_endpoint_name}" in str(outputs["deploy_env"]["value"])
    pattern = next(f for f in fields(Settings) if f.name == "vertex_index_endpoint").metadata["pattern"]
    assert re.fullmatch(pattern, "projects/123456789012/locations/europe-west4/indexEndpoints/456")


def test_terraform_fmt(tmp_path):
    terraform = shutil.which("terraform")
    if terraform is None:
        pytest.skip("terraform is not installed (not available from PyPI, npm or Debian): fmt check skipped")
    result = subprocess.run(
        [terraform, "fmt", "-check", "-diff", "-no-color", str(INFRA)],
        env={**os.environ, "TF_CLI_CONFIG_FILE": "/dev/null", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_ocr_processor_version_is_pinned_and_named_in_every_request(tf):
    local = locals_of(tf)
    assert unquote(local["documentai_processor_version"]) == (
        "${google_document_ai_processor.ocr.id}/processorVersions/${var.documentai_processor_version}"
    )
    pinned = blocks(tf, "resource")[("google_document_ai_processor_default_version", "ocr")]
    assert pinned["processor"] == "${google_document_ai_processor.ocr.id}"
    assert pinned["version"] == "${local.documentai_processor_version}" and "lifecycle" not in pinned
    outputs = {unquote(n): body for doc in tf.values() for e in doc.get("output", []) for n, body in e.items()}
    assert outputs["documentai_processor"]["value"] == "${local.documentai_processor_version}"
    default = unquote(variables_of(tf)["documentai_processor_version"]["default"])
    # what the terraform output will look like, as the settings read it
    name = f"projects/regrag-prod/locations/us/processors/4f1c2e/processorVersions/{default}"
    settings = Settings.from_env({"REGRAG_DOCUMENTAI_PROCESSOR": name, "REGRAG_DOCUMENTAI_LOCATION": "us"})
    assert settings.documentai_processor == name and default.startswith("pretrained-ocr-v")


def test_document_ai_locations_are_those_google_lists_for_ocr_in_both_terraform_and_the_settings(tf):
    from regrag.cloud_facts import DOCUMENTAI_OCR_LOCATIONS

    condition = variables_of(tf)["documentai_location"]["validation"][0]["condition"]
    assert re.findall(r'"([a-z0-9-]+)"', condition) == list(DOCUMENTAI_OCR_LOCATIONS)
    choices = next(f for f in fields(Settings) if f.name == "documentai_location").metadata["choices"]
    assert choices == DOCUMENTAI_OCR_LOCATIONS and "asia-southeast1" in choices and "us-central1" not in choices


def test_the_google_provider_is_pinned_to_its_current_major_and_the_upgrades_touch_nothing_used(tf):
    (required,) = tf["versions.tf"]["terraform"][0]["required_providers"]
    assert unquote(required["google"]["version"]) == "~> 8.0"
    resources = blocks(tf, "resource")
    # 7.0.0: the notification's topic in the projects/P/topics/T form, which is google_pubsub_topic's id
    assert resources[("google_storage_notification", "removals")]["topic"] == "${google_pubsub_topic.embedded.id}"
    # 7.0.0: disable_on_destroy has no default any more; ours is explicit
    assert resources[("google_project_service", "this")]["disable_on_destroy"] is False
    # 8.0.0 removes resources and arguments none of ours use (the upgrade guide's list)
    removed_in_8 = {
        "google_beyondcorp_app_connection", "google_beyondcorp_app_connector", "google_beyondcorp_app_gateway",
        "google_iap_brand", "google_iap_client", "google_ml_engine_model", "google_notebooks_environment",
        "google_notebooks_instance", "google_notebooks_runtime", "google_vertex_ai_schedule",
    }  # fmt: skip
    assert not removed_in_8 & {rtype for rtype, _ in resources}
