output "docs_bucket" {
  value = google_storage_bucket.docs.name
}

output "state_bucket" {
  value = google_storage_bucket.state.name
}

output "vertex_index" {
  value = google_vertex_ai_index.chunks.id
}

# The canonical resource name uses the project NUMBER; the resource's `id` uses the project id, a form
# FindNeighbors has answered NOT_FOUND to (regrag refuses it at start-up).
output "vertex_index_endpoint" {
  value = local.index_endpoint_name
}

output "vertex_public_host" {
  value = google_vertex_ai_index_endpoint.chunks.public_endpoint_domain_name
}

# the processor VERSION: requests name it, so the model that read each OCR'd page is known
output "documentai_processor" {
  value = local.documentai_processor_version
}

# `eval "$(terraform -chdir=infra output -raw deploy_env)"` before ./deploy.sh
output "deploy_env" {
  value = join("\n", [
    "export REGRAG_GCP_PROJECT=${var.project}",
    "export REGRAG_GCP_REGION=${var.region}",
    "export REGRAG_BUCKET=${google_storage_bucket.docs.name}",
    "export REGRAG_STATE_BUCKET=${google_storage_bucket.state.name}",
    "export REGRAG_VERTEX_INDEX=${google_vertex_ai_index.chunks.id}",
    "export REGRAG_VERTEX_INDEX_ENDPOINT=${local.index_endpoint_name}",
    "export REGRAG_VERTEX_DEPLOYED_INDEX_ID=${var.deployed_index_id}",
    "export REGRAG_VERTEX_PUBLIC_HOST=${google_vertex_ai_index_endpoint.chunks.public_endpoint_domain_name}",
    "export REGRAG_TOPIC_CHUNKED=${google_pubsub_topic.chunked.name}",
    "export REGRAG_TOPIC_EMBEDDED=${google_pubsub_topic.embedded.name}",
    "export REGRAG_TOPIC_ALERTS=${google_pubsub_topic.alerts.name}",
    "# Gemini through Vertex AI by default; for the API-key path instead, add a version to the secret and:",
    "# export REGRAG_GEMINI_SECRET=${google_secret_manager_secret.gemini.secret_id}",
    "export REGRAG_ADMIN_PRINCIPALS=${join(",", local.admin_principals)}",
    "export REGRAG_DOCUMENTAI_PROCESSOR=${local.documentai_processor_version}",
    "export REGRAG_DOCUMENTAI_LOCATION=${var.documentai_location}",
    "",
  ])
}
