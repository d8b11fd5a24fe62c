# The reconcile job (bucket against index), called with an OIDC token of the scheduler's service account.
# Created once the function exists (var.functions_deployed), since it needs the function's URL.
data "google_cloud_run_v2_service" "reconcile" {
  count    = var.functions_deployed ? 1 : 0
  name     = "reconcile"
  location = var.region
}

resource "google_cloud_scheduler_job" "reconcile" {
  count            = var.functions_deployed ? 1 : 0
  name             = "regrag-reconcile"
  region           = var.region
  schedule         = var.reconcile_schedule
  time_zone        = var.reconcile_time_zone
  attempt_deadline = "900s"

  retry_config {
    retry_count = 1
  }

  http_target {
    uri         = data.google_cloud_run_v2_service.reconcile[0].uri
    http_method = "POST"
    body        = base64encode("{}")
    headers = {
      "Content-Type" = "application/json"
    }

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = data.google_cloud_run_v2_service.reconcile[0].uri
    }
  }

  depends_on = [google_project_service.this]
}
