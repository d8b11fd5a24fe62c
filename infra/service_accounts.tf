# One identity per function (its runtime and, for event functions, its Eventarc trigger identity), and one for
# Cloud Scheduler. What each may do is in iam.tf.
resource "google_service_account" "function" {
  for_each     = toset(local.functions)
  account_id   = "regrag-${each.value}"
  display_name = "regrag ${each.value} function"
}

resource "google_service_account" "scheduler" {
  account_id   = "regrag-scheduler"
  display_name = "regrag Cloud Scheduler (calls reconcile and query /admin/eval with OIDC)"
}
