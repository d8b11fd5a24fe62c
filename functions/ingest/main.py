"""ingest: Cloud Storage object finalized → DocumentChunked on Pub/Sub.

Deletes do not come here: infra/storage.tf sends the bucket's delete and archive notifications to upsert.

Permanent failures (empty, binary or unsupported file, bad sidecar) are logged, recorded and acknowledged;
transient ones raise so the platform retries.
"""

import functions_framework

from regrag.entrypoints import handlers
from regrag.wiring import get_services


@functions_framework.cloud_event
def ingest(cloud_event):
    handlers.ingest_event(get_services(), cloud_event)
