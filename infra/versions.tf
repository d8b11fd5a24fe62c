# Providers and versions. Apply from this directory: see README.md.
terraform {
  required_version = ">= 1.5"
  required_providers {
    google = {
      source = "hashicorp/google"
      # The current major (8.0.0, August 2026). The 7.0.0 and 8.0.0 upgrade guides
      # (registry.terraform.io/providers/hashicorp/google/latest/docs/guides/version_7_upgrade, …_8_upgrade)
      # remove no argument of the resources used here; what they touch: google_storage_notification's `topic`
      # must be projects/P/topics/T (google_pubsub_topic's id is), google_project_service's disable_on_destroy
      # lost its default (set explicitly in apis.tf), google_vertex_ai_index's metadata is required (set).
      version = "~> 8.0"
    }
  }
}

provider "google" {
  project = var.project
  region  = var.region
}
