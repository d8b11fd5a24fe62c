"""ingest: Cloud Storage object finalized (or deleted) → DocumentChunked (or DocumentDeleted) on Pub/Sub.

Permanent failures (empty, binary or unsupported file, bad sidecar) are logged, recorded and acknowledged;
transient ones raise so the platform retries.
"""

import functions_framework

from regrag.wiring import get_app


@functions_framework.cloud_event
def ingest(cloud_event):
    get_app().ingest_event(cloud_event)
