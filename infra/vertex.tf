# Vector Search: one index of chunk datapoints (dense vector + sparse BM25 vector + restricts), updated by
# streaming upserts, deployed on a public endpoint that the query function calls.
resource "google_vertex_ai_index" "chunks" {
  region              = var.region
  display_name        = "regrag-chunks"
  description         = "regrag: chunks of Chinese energy regulations"
  index_update_method = "STREAM_UPDATE"

  metadata {
    config {
      dimensions                  = var.embedding_dimension
      approximate_neighbors_count = 150
      distance_measure_type       = "DOT_PRODUCT_DISTANCE"
      feature_norm_type           = "UNIT_L2_NORM"
      shard_size                  = "SHARD_SIZE_SMALL"

      algorithm_config {
        tree_ah_config {
          leaf_node_embedding_count    = 1000
          leaf_nodes_to_search_percent = 10
        }
      }
    }
  }

  depends_on = [google_project_service.this]
}

resource "google_vertex_ai_index_endpoint" "chunks" {
  region                  = var.region
  display_name            = "regrag-chunks"
  public_endpoint_enabled = true
  depends_on              = [google_project_service.this]
}

resource "google_vertex_ai_index_endpoint_deployed_index" "chunks" {
  index_endpoint    = google_vertex_ai_index_endpoint.chunks.id
  index             = google_vertex_ai_index.chunks.id
  deployed_index_id = var.deployed_index_id
  display_name      = "regrag-chunks"

  automatic_resources {
    min_replica_count = 1
    max_replica_count = 2
  }
}
