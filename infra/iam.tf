# Least privilege. Every grant is on the resource it concerns (a bucket, a topic, the secret, a function's
# Cloud Run service), except four that have no narrower resource: Eventarc's event receiver role, Vertex AI
# use (embeddings, index upserts and queries), Document AI use (documentai.apiUser: process documents on the
# processors, nothing else; for ingest, and reconcile, which re-ingests what the index misses), and the Cloud
# Storage agent publishing to the transport topics that Eventarc creates for the ingest trigger.

locals {
  sa = { for name, account in google_service_account.function : name => "serviceAccount:${account.email}" }

  bucket_grants = {
    ingest_reads_docs        = { bucket = "docs", role = "roles/storage.objectViewer", fn = "ingest" }
    ingest_records_failures  = { bucket = "state", role = "roles/storage.objectCreator", fn = "ingest" }
    embed_records_failures   = { bucket = "state", role = "roles/storage.objectCreator", fn = "embed" }
    upsert_writes_chunk_map  = { bucket = "state", role = "roles/storage.objectUser", fn = "upsert" }
    query_writes_state       = { bucket = "state", role = "roles/storage.objectUser", fn = "query" } # + feedback, query log, eval reports
    rerank_reads_chunk_map   = { bucket = "state", role = "roles/storage.objectViewer", fn = "rerank" }
    compose_reads_chunk_map  = { bucket = "state", role = "roles/storage.objectViewer", fn = "compose" }
    reconcile_reads_docs     = { bucket = "docs", role = "roles/storage.objectViewer", fn = "reconcile" }
    reconcile_writes_lexicon = { bucket = "state", role = "roles/storage.objectUser", fn = "reconcile" }
  }

  topic_grants = {
    ingest_publishes_chunked     = { topic = "chunked", fn = "ingest" }
    embed_publishes_embedded     = { topic = "embedded", fn = "embed" }
    reconcile_publishes_chunked  = { topic = "chunked", fn = "reconcile" }
    reconcile_publishes_embedded = { topic = "embedded", fn = "reconcile" }
    upsert_publishes_alerts      = { topic = "alerts", fn = "upsert" }
    query_publishes_alerts       = { topic = "alerts", fn = "query" } # the scheduled check of every watch
  }
  topic_ids = {
    chunked  = google_pubsub_topic.chunked.id
    embedded = google_pubsub_topic.embedded.id
    alerts   = google_pubsub_topic.alerts.id
  }

  project_grants = merge(
    { for fn in local.event_functions : "${fn}_receives_events" => { role = "roles/eventarc.eventReceiver", fn = fn } },
    { for fn in ["embed", "upsert", "query", "rerank"] : "${fn}_uses_vertex_ai" => { role = "roles/aiplatform.user", fn = fn } },
    { for fn in ["ingest", "reconcile"] : "${fn}_uses_document_ai" => { role = "roles/documentai.apiUser", fn = fn } },
  )

  # Who may invoke which function (roles/run.invoker on its Cloud Run service). Only query is for people;
  # event functions are invoked by their own trigger identity (deploy.sh grants that right after deploying each
  # one, since events can arrive before this step; the binding here keeps it in state), reconcile by Cloud
  # Scheduler, which also calls query's /admin/eval (an internal identity: people still reach query only
  # through query_invokers); rerank and compose by query alone (REGRAG_RERANK_URL / REGRAG_COMPOSE_URL, with
  # query's ID token).
  query_members = concat(var.query_invokers, var.allow_unauthenticated_query ? ["allUsers"] : [])
  scheduler     = "serviceAccount:${google_service_account.scheduler.email}"
  invokers = merge(
    { for m in local.query_members : "query:${m}" => { fn = "query", member = m } },
    { for fn in local.event_functions : "${fn}:trigger" => { fn = fn, member = local.sa[fn] } },
    {
      "reconcile:scheduler" = { fn = "reconcile", member = local.scheduler }
      "query:scheduler"     = { fn = "query", member = local.scheduler }
      "rerank:query"        = { fn = "rerank", member = local.sa["query"] }
      "compose:query"       = { fn = "compose", member = local.sa["query"] }
    },
  )
}

resource "google_storage_bucket_iam_member" "function" {
  for_each = local.bucket_grants
  bucket   = each.value.bucket == "docs" ? google_storage_bucket.docs.name : google_storage_bucket.state.name
  role     = each.value.role
  member   = local.sa[each.value.fn]
}

resource "google_pubsub_topic_iam_member" "function" {
  for_each = local.topic_grants
  topic    = local.topic_ids[each.value.topic]
  role     = "roles/pubsub.publisher"
  member   = local.sa[each.value.fn]
}

resource "google_project_iam_member" "function" {
  for_each = local.project_grants
  project  = var.project
  role     = each.value.role
  member   = local.sa[each.value.fn]
}

resource "google_secret_manager_secret_iam_member" "gemini" {
  for_each  = toset(["query", "rerank"])
  secret_id = google_secret_manager_secret.gemini.id
  role      = "roles/secretmanager.secretAccessor"
  member    = local.sa[each.value]
}

# Dead letters: the Pub/Sub service agent forwards undeliverable messages (it also needs subscriber on the
# source subscriptions, which Eventarc creates: deploy.sh grants that).
resource "google_pubsub_topic_iam_member" "pubsub_agent_dead_letters" {
  for_each = google_pubsub_topic.dead
  topic    = each.value.id
  role     = "roles/pubsub.publisher"
  member   = local.pubsub_agent
}

# Cloud Storage's service agent: the removal notification (storage.tf), and Eventarc's transport topics for
# the ingest trigger, which are created at deploy time and so can only be granted on the project.
resource "google_pubsub_topic_iam_member" "storage_agent_publishes_removals" {
  topic  = google_pubsub_topic.embedded.id
  role   = "roles/pubsub.publisher"
  member = local.storage_agent
}

resource "google_project_iam_member" "storage_agent_publishes_events" {
  project = var.project
  role    = "roles/pubsub.publisher"
  member  = local.storage_agent
}

resource "google_cloud_run_v2_service_iam_member" "invoker" {
  for_each = var.functions_deployed ? local.invokers : {}
  name     = each.value.fn
  location = var.region
  role     = "roles/run.invoker"
  member   = each.value.member
}
