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

variable "embedding_dimension" {
  description = "Vector size: 768 for text-embedding-005; gemini-embedding-001 with REGRAG_EMBEDDING_DIMENSION."
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
