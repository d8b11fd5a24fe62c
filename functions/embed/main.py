"""embed: Pub/Sub DocumentChunked → vectors (document task type) → ChunksEmbedded on Pub/Sub."""

import functions_framework

from regrag.entrypoints import handlers
from regrag.wiring import get_services


@functions_framework.cloud_event
def embed(cloud_event):
    handlers.embed_event(get_services(), cloud_event)
