# The scheduled eval logs one ERROR line when nDCG@10 drops by more than 3 points against the previous report
# (shared/regrag/pipeline/admin.py REGRESSION_MESSAGE; tests/gcp/test_gcp_infra.py checks this filter matches
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
