"""embed: Pub/Sub DocumentChunked → vectors (document task type) → ChunksEmbedded on Pub/Sub."""

import functions_framework

from regrag.wiring import get_app


@functions_framework.cloud_event
def embed(cloud_event):
    get_app().embed_event(cloud_event)
