locals {
  docs_bucket  = coalesce(var.docs_bucket, "${var.project}-regrag-docs")
  state_bucket = coalesce(var.state_bucket, "${var.project}-regrag-state")

  # The functions, as deploy.sh's table lists them (a test checks the two agree).
  event_functions = ["ingest", "embed", "upsert"]
  http_functions  = ["query", "rerank", "compose", "reconcile"]
  functions       = concat(local.event_functions, local.http_functions)

  topics = {
    chunked  = "regrag-chunked"
    embedded = "regrag-embedded"
  }

  pubsub_agent  = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
  storage_agent = "serviceAccount:${data.google_storage_project_service_account.this.email_address}"
}

data "google_project" "this" {}
