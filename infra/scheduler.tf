# Jobs called with an OIDC token of the scheduler's service account (audience = the function's URL): reconcile
# (bucket against index) and the daily eval (query's /admin/eval). Created once the functions exist
# (var.functions_deployed), since they need the functions' URLs.
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

# The daily evaluation: query's /admin/eval runs the question file (a name under the state bucket's prefix) and
# writes the report beside it; a drop of more than 3 nDCG@10 points logs the ERROR that monitoring.tf alerts on.
# The scheduler's service account is an admin principal (outputs.tf deploy_env, REGRAG_ADMIN_PRINCIPALS), and
# may invoke query (iam.tf). Not created when allow_unauthenticated_query opens query to everyone: Cloud Run
# then verifies no token, so admin endpoints stay disabled (see shared/regrag/ops/admin.py).
data "google_cloud_run_v2_service" "query" {
  count    = local.eval_scheduled ? 1 : 0
  name     = "query"
  location = var.region
}

resource "google_cloud_scheduler_job" "eval" {
  count     = local.eval_scheduled ? 1 : 0
  name      = "regrag-eval"
  region    = var.region
  schedule  = var.eval_schedule
  time_zone = var.eval_time_zone
  # the whole question file runs in one request: query's timeout in deploy.sh is 600s to match
  attempt_deadline = "600s"

  retry_config {
    retry_count = 1
  }

  http_target {
    uri         = "${data.google_cloud_run_v2_service.query[0].uri}/admin/eval"
    http_method = "POST"
    body        = base64encode(jsonencode({ questions = var.eval_questions }))
    headers = {
      "Content-Type" = "application/json"
    }

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = data.google_cloud_run_v2_service.query[0].uri
    }
  }

  depends_on = [google_project_service.this]
}

# The daily check of every watch: query's /admin/watches/check compares each watch with the index and asks every
# saved question again, which catches what no ingest announces (a successor entering into force changes what a
# question cites) and the saved questions the upsert stage left for later (REGRAG_WATCH_MAX_REASKS). Alerts are
# recorded once whichever run finds them first, so a retried or overlapping run adds none.
resource "google_cloud_scheduler_job" "watch_check" {
  count            = local.watch_check_scheduled ? 1 : 0
  name             = "regrag-watch-check"
  region           = var.region
  schedule         = var.watch_check_schedule
  time_zone        = var.watch_check_time_zone
  attempt_deadline = "600s"

  retry_config {
    retry_count = 1
  }

  http_target {
    uri         = "${data.google_cloud_run_v2_service.query[0].uri}/admin/watches/check"
    http_method = "POST"
    headers = {
      "Content-Type" = "application/json"
    }

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = data.google_cloud_run_v2_service.query[0].uri
    }
  }

  depends_on = [google_project_service.this]
}
