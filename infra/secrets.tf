# The Gemini API key. Terraform creates the secret only: its value is added with
#   printf %s "$KEY" | gcloud secrets versions add regrag-gemini-api-key --data-file=-
# so the key never enters Terraform state.
resource "google_secret_manager_secret" "gemini" {
  secret_id = var.gemini_secret_id

  replication {
    auto {}
  }

  depends_on = [google_project_service.this]
}
