# The Document AI processor that reads scanned regulations (Enterprise Document OCR). ingest sends it one page
# image per request (regrag.adapters.gcp.documentai), always to the pinned version below: deploy.sh passes
# …/processors/ID/processorVersions/V to ingest and reconcile as REGRAG_DOCUMENTAI_PROCESSOR, and every OCR'd page
# records that version. Processors live in a Document AI location (us, eu or a single region), not in the
# functions' region.
resource "google_document_ai_processor" "ocr" {
  location     = var.documentai_location
  display_name = "regrag-ocr"
  type         = "OCR_PROCESSOR"

  depends_on = [google_project_service.this]
}

# The processor's default version, pinned to the one the functions name, so the console and any caller of the
# bare processor read with the same model.
resource "google_document_ai_processor_default_version" "ocr" {
  processor = google_document_ai_processor.ocr.id
  version   = local.documentai_processor_version
}
