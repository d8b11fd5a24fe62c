"""What the service accepts from outside: request bodies and question files, declared as JSON Schema and
parsed into typed values (used by the HTTP API, the CLI and the evaluation alike)."""
