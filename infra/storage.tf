# Uploads (regulations and their .meta.json sidecars) and the pipeline's own state, in separate buckets:
# the ingest trigger fires for every object in the documents bucket, so state must not live there.
resource "google_storage_bucket" "docs" {
  name                        = local.docs_bucket
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = false

  versioning {
    enabled = true # an overwritten or deleted regulation can be restored
  }

  lifecycle_rule {
    condition {
      days_since_noncurrent_time = 365
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.this]
}

resource "google_storage_bucket" "state" {
  name                        = local.state_bucket
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = false

  # failed-delivery counters (regrag.adapters.gcp.failures): needed only while a message is being retried
  lifecycle_rule {
    condition {
      age            = 7
      matches_prefix = ["failures/attempts/"]
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.this]
}

data "google_storage_project_service_account" "this" {}

# Deletes and archives reach `upsert` on the embedded topic (ingest's --trigger-bucket sees finalizes only).
resource "google_storage_notification" "removals" {
  bucket         = google_storage_bucket.docs.name
  topic          = google_pubsub_topic.embedded.id
  payload_format = "JSON_API_V1"
  event_types    = ["OBJECT_DELETE", "OBJECT_ARCHIVE"]

  depends_on = [google_pubsub_topic_iam_member.storage_agent_publishes_removals]
}
