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
