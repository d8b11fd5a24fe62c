variable "project" {
  description = "Google Cloud project id."
  type        = string
}

variable "region" {
  description = "Region of the functions, buckets, topics' consumers and the Vector Search index (e.g. asia-east2)."
  type        = string
}

variable "docs_bucket" {
  description = "Bucket that users upload regulations to (default: <project>-regrag-docs)."
  type        = string
  default     = null
}

variable "state_bucket" {
  description = "Bucket for the chunk map, failure records and lexicon (default: <project>-regrag-state)."
  type        = string
  default     = null
}

variable "documentai_location" {
  description = "Location of the Document AI OCR processor: a multi-region (us, eu) or a single region the regions page lists for OCR. Scans are sent there."
  type        = string
  default     = "us"

  validation {
    # https://docs.cloud.google.com/document-ai/docs/regions, OCR table (single regions are "limited support");
    # the same list as DOCUMENTAI_OCR_LOCATIONS in shared/regrag/cloud_facts.py (a test checks they agree)
    condition = contains([
      "us", "eu", "asia-south1", "asia-southeast1", "australia-southeast1", "europe-west2", "europe-west3",
      "northamerica-northeast1",
    ], var.documentai_location)
    error_message = "documentai_location must be a location Document AI offers OCR in: us, eu, asia-south1, asia-southeast1, australia-southeast1, europe-west2, europe-west3 or northamerica-northeast1."
  }
}

variable "documentai_processor_version" {
  description = "The OCR processor version that reads every scan (pinned: each OCR'd page records it). A Google stable version is deprecated six months after a newer one: move to the newer one deliberately, then re-deploy."
  type        = string
  # https://docs.cloud.google.com/document-ai/docs/processors-list (Enterprise Document OCR, stable versions)
  default = "pretrained-ocr-v2.1-2024-08-07"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+$", var.documentai_processor_version))
    error_message = "documentai_processor_version is a version id such as pretrained-ocr-v2.1-2024-08-07."
  }
}

variable "embedding_dimension" {
  description = "Vector size: 768 for text-multilingual-embedding-002 (the default); gemini-embedding-001 with REGRAG_EMBEDDING_DIMENSION."
  type        = number
  default     = 768
}

variable "functions_deployed" {
  description = "Set to true once ./deploy.sh has created the functions: invoker IAM and the scheduler need them."
  type        = bool
  default     = false
}

variable "query_invokers" {
  description = "Members allowed to call the query function, e.g. [\"group:lawyers@example.com\"]."
  type        = list(string)
  default     = []
}

variable "allow_unauthenticated_query" {
  description = "Open the query function to anyone on the internet (allUsers). Off unless set on purpose."
  type        = bool
  default     = false
}

variable "reconcile_schedule" {
  description = "Cron schedule of the reconcile job (bucket against index)."
  type        = string
  default     = "17 * * * *"
}

variable "reconcile_time_zone" {
  description = "Time zone of the reconcile schedule."
  type        = string
  default     = "Etc/UTC"
}

variable "eval_schedule" {
  description = "Cron schedule of the eval job (query's /admin/eval on eval_questions)."
  type        = string
  default     = "41 2 * * *"
}

variable "eval_time_zone" {
  description = "Time zone of the eval schedule."
  type        = string
  default     = "Etc/UTC"
}

variable "eval_questions" {
  description = "Question file the eval job runs: an object name in the state bucket, under REGRAG_STATE_PREFIX."
  type        = string
  default     = "evals/dev.jsonl"

  validation {
    # what /admin/eval accepts (shared/regrag/ops/admin.py)
    condition     = can(regex("^[A-Za-z0-9._/-]+\\.jsonl$", var.eval_questions)) && !strcontains(var.eval_questions, "..")
    error_message = "eval_questions must name a .jsonl object (letters, digits, '.', '_', '/', '-'; no '..')."
  }
}

variable "admin_principals" {
  description = "Emails besides the scheduler's service account allowed to call query's /admin/* (each must also be in query_invokers)."
  type        = list(string)
  default     = []

  validation {
    # plain emails, as the ID token's email claim reads: "user:ops@example.com" would never match
    condition     = alltrue([for e in var.admin_principals : can(regex("^[^,@:\\s]+@[^,@:\\s]+$", e))])
    error_message = "admin_principals must be plain emails (ops@example.com), not IAM members (user:…)."
  }
}

variable "alert_notification_channels" {
  description = "Monitoring notification channel ids for the eval regression alert (none: incidents show in the console only)."
  type        = list(string)
  default     = []
}

variable "deployed_index_id" {
  description = "Id of the deployed index on the endpoint (letters, digits, underscores)."
  type        = string
  default     = "regrag_chunks"
}

variable "gemini_secret_id" {
  description = "Secret Manager secret holding the Gemini API key (its value is added outside Terraform)."
  type        = string
  default     = "regrag-gemini-api-key"
}

variable "rerank_fallback_alert_percent" {
  description = "Alert when more than this share (%) of answers in 10 minutes fell back from Gemini rerank."
  type        = number
  default     = 20
}

variable "watch_check_schedule" {
  description = "Cron schedule of the check of every watch (query's /admin/watches/check: saved questions asked again, successors entering into force); empty: no job."
  type        = string
  default     = "17 6 * * *"
}

variable "watch_check_time_zone" {
  description = "Time zone of the watch check schedule."
  type        = string
  default     = "Asia/Shanghai"
}

variable "alert_routes" {
  description = "Push subscriptions on the alerts topic: name => {endpoint (HTTPS), filter (Pub/Sub filter on the attributes kind, owner, doc_id, watch_id; empty: every alert)}."
  type = map(object({
    endpoint = string
    filter   = optional(string, "")
  }))
  default = {}
}
