# Stage topics (the event functions' Eventarc triggers subscribe to them) and one dead-letter topic per event
# function, each with a subscription that keeps what was dead-lettered for inspection and replay.
resource "google_pubsub_topic" "chunked" {
  name       = local.topics.chunked
  depends_on = [google_project_service.this]
}

resource "google_pubsub_topic" "embedded" {
  name       = local.topics.embedded
  depends_on = [google_project_service.this]
}

resource "google_pubsub_topic" "dead" {
  for_each   = toset(local.event_functions)
  name       = "regrag-${each.value}-dead"
  depends_on = [google_project_service.this]
}

resource "google_pubsub_subscription" "dead" {
  for_each                   = google_pubsub_topic.dead
  name                       = "${each.value.name}-sub"
  topic                      = each.value.id
  ack_deadline_seconds       = 60
  message_retention_duration = "604800s" # 7 days

  expiration_policy {
    ttl = "" # never expires
  }
}

# Alerts on watches (shared/regrag/ingest/alerts.py): the upsert function, and query's scheduled check of every
# watch, publish one AlertRecorded message per alert recorded, with attributes kind, alert_id, watch_id, doc_id and
# owner for subscriptions to filter on. The topic keeps messages 7 days, so a subscription added later (a relay to
# mail or chat) can seek back to alerts published before it existed; regrag-alerts-sub keeps them for a pull.
resource "google_pubsub_topic" "alerts" {
  name                       = local.topics.alerts
  message_retention_duration = "604800s"
  depends_on                 = [google_project_service.this]
}

resource "google_pubsub_subscription" "alerts" {
  name                       = "${google_pubsub_topic.alerts.name}-sub"
  topic                      = google_pubsub_topic.alerts.id
  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"

  expiration_policy {
    ttl = "" # never expires
  }
}

# Routes: one push subscription per entry of var.alert_routes, each delivering the alerts its filter selects
# (e.g. attributes.owner = "lawyer@example.com") to an HTTPS endpoint that turns them into a mail or a chat message.
resource "google_pubsub_subscription" "alert_route" {
  for_each                   = var.alert_routes
  name                       = "${google_pubsub_topic.alerts.name}-${each.key}"
  topic                      = google_pubsub_topic.alerts.id
  filter                     = each.value.filter
  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"

  push_config {
    push_endpoint = each.value.endpoint
  }

  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }

  expiration_policy {
    ttl = ""
  }
}
