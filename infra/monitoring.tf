# The scheduled eval logs one ERROR line when nDCG@10 drops by more than 3 points against the previous report
# (shared/regrag/ops/admin.py REGRESSION_MESSAGE; tests/gcp/test_gcp_infra.py checks this filter matches
# it). The function's JSON log lines become structured entries: `severity` sets the entry's severity and
# `message` stays in jsonPayload. Lines of one filter are ANDed.
resource "google_logging_metric" "eval_regression" {
  name        = "regrag-eval-regression"
  description = "regrag scheduled eval: nDCG@10 dropped by more than 3 points against the previous report"
  filter      = <<-EOT
    resource.type="cloud_run_revision"
    resource.labels.service_name="query"
    severity=ERROR
    jsonPayload.message="eval regression: nDCG@10 dropped by more than 3 points"
  EOT

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
  }

  depends_on = [google_project_service.this]
}

resource "google_monitoring_alert_policy" "eval_regression" {
  display_name          = "regrag: eval nDCG@10 regression"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "eval regression logged by query"
    condition_threshold {
      filter          = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.eval_regression.name}\" AND resource.type=\"cloud_run_revision\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period   = "300s"
        per_series_aligner = "ALIGN_SUM"
      }

      trigger {
        count = 1
      }
    }
  }

  alert_strategy {
    auto_close = "86400s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = "The scheduled eval (Cloud Scheduler job regrag-eval → query /admin/eval) scored more than 3 nDCG@10 points below its previous report. The ERROR log line names both reports (jsonPayload.report, previous_report) in the state bucket; compare their `context` (index version, embedding model, prompts)."
  }

  depends_on = [google_project_service.this]
}

# Rerank falling back: every answer logs `answered` with its rerank_status (api/endpoints.py). A retired or
# refused Gemini model makes every rerank fall back to the retrieval order while answers keep coming; this
# counts answers by status so the alert can compare fallbacks with all answers.
resource "google_logging_metric" "answers" {
  name        = "regrag-answers"
  description = "regrag answers by rerank_status (ok, skipped, fallback:<reason>)"
  filter      = <<-EOT
    resource.type="cloud_run_revision"
    resource.labels.service_name="query"
    jsonPayload.message="answered"
  EOT

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
    labels {
      key         = "rerank_status"
      value_type  = "STRING"
      description = "ok | skipped | fallback:<reason>"
    }
  }
  label_extractors = {
    rerank_status = "EXTRACT(jsonPayload.rerank_status)"
  }

  depends_on = [google_project_service.this]
}

resource "google_monitoring_alert_policy" "rerank_fallback" {
  display_name          = "regrag: rerank falling back on more than ${var.rerank_fallback_alert_percent} % of answers"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "rerank fallback rate over 10 minutes"
    # PromQL (Monitoring's recommended query language for ratios; MQL is the older one): fallbacks / answers that
    # asked Gemini (skipped = nothing to rerank), over 10 minutes. Log-based metric names map to PromQL as
    # logging.googleapis.com/user/regrag-answers → logging_googleapis_com:user_regrag_answers.
    condition_prometheus_query_language {
      query               = <<-EOT
        100 * sum(increase(logging_googleapis_com:user_regrag_answers{monitored_resource="cloud_run_revision",rerank_status=~"fallback.*"}[10m]))
          / sum(increase(logging_googleapis_com:user_regrag_answers{monitored_resource="cloud_run_revision",rerank_status!="skipped"}[10m]))
          > ${var.rerank_fallback_alert_percent}
      EOT
      duration            = "0s"
      evaluation_interval = "60s"
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = "More than ${var.rerank_fallback_alert_percent} % of answers in 10 minutes were not reranked by Gemini (rerank_status fallback:<reason> in the `answered` log lines of query). Common causes: the Gemini model (REGRAG_GEMINI_MODEL) retired or not served in REGRAG_GEMINI_LOCATION (fallback:client_error), quota (fallback:rate_limited), the deadline (fallback:timeout). Run `regrag doctor` with the deployment's settings."
  }

  depends_on = [google_project_service.this]
}
