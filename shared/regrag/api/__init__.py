"""The HTTP edge: endpoints (what each does), routes (one table, one error mapping) and the local server."""
