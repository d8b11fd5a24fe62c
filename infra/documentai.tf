# The Document AI processor that reads scanned regulations (Enterprise Document OCR). ingest sends it one page
# image per request (regrag.adapters.gcp.documentai); deploy.sh passes its name to ingest and reconcile as
# REGRAG_DOCUMENTAI_PROCESSOR. Processors live in a multi-region (us or eu), not in the functions' region.
resource "google_document_ai_processor" "ocr" {
  location     = var.documentai_location
  display_name = "regrag-ocr"
  type         = "OCR_PROCESSOR"

  depends_on = [google_project_service.this]
}
