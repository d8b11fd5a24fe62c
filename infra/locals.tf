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
    alerts   = "regrag-alerts"
  }

  # Who may call query's /admin/* (REGRAG_ADMIN_PRINCIPALS): the function trusts the caller identity that Cloud
  # Run IAM verified, so with query open to allUsers (no verification) there are none and no eval job.
  eval_scheduled   = var.functions_deployed && !var.allow_unauthenticated_query
  admin_principals = var.allow_unauthenticated_query ? [] : concat([google_service_account.scheduler.email], var.admin_principals)
  # the scheduled check of every watch calls query's /admin/watches/check under the same admin rule as the eval
  watch_check_scheduled = local.eval_scheduled && var.watch_check_schedule != ""

  pubsub_agent  = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
  storage_agent = "serviceAccount:${data.google_storage_project_service_account.this.email_address}"
}

data "google_project" "this" {}

locals {
  # projects/<project>/locations/<location>/processors/<id>/processorVersions/<version>: what every OCR request names
  documentai_processor_version = "${google_document_ai_processor.ocr.id}/processorVersions/${var.documentai_processor_version}"
  # projects/<number>/locations/<region>/indexEndpoints/<id>: the name the Vertex AI API itself returns
  index_endpoint_name = "projects/${data.google_project.this.number}/locations/${var.region}/indexEndpoints/${google_vertex_ai_index_endpoint.chunks.name}"
}
