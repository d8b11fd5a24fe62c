"""The shapes of identifiers that cross the system's edges (requests, sidecars, object names), in one place."""

from __future__ import annotations

import re

# doc ids become chunk-id hash input, GCS object names in the chunk map and Vector Search restrict values:
# ASCII letters, digits and . _ - only, starting with a letter or digit
DOC_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# corpus names are also object prefixes (corpora/<name>/…) and restrict tokens
CORPUS_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
# the object prefix that assigns a document to a corpus
CORPUS_PREFIX_RE = re.compile(r"^corpora/([a-z0-9][a-z0-9_-]{0,39})/")
# the id /query issues for every answer (uuid4().hex), which /feedback refers to
QUERY_ID_RE = re.compile(r"^[0-9a-f]{32}$")
