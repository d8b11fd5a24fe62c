"""upsert: Pub/Sub ChunksEmbedded → index datapoints with restricts; DocumentDeleted, or the bucket's own
delete notification → removal."""

import functions_framework

from regrag.entrypoints import handlers
from regrag.wiring import get_services


@functions_framework.cloud_event
def upsert(cloud_event):
    handlers.upsert_event(get_services(), cloud_event)
