"""upsert: Pub/Sub ChunksEmbedded → index datapoints with restricts; DocumentDeleted → removal."""

import functions_framework

from regrag.wiring import get_app


@functions_framework.cloud_event
def upsert(cloud_event):
    get_app().upsert_event(cloud_event)
