"""Which embedding model and dimension the Vector Search index holds, kept beside the chunk map.

Vectors of two models (or of one model at two dimensionalities) are incomparable: a query embedded by another
model than the documents finds neighbours that look plausible and are noise, and Vector Search cannot tell (it
checks the dimension only, at the index level). So the first upsert records `{model_id, dimension}` in
`<prefix>index/embedding.json` (create-only, generation 0: two first writers cannot both win), every later
upsert and the first query of each instance compare against it, and a mismatch is refused with a message that
names both models. Redeploying with another model therefore needs a new index (or the object deleted after
the index was emptied), never a silent mix.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from regrag.adapters.gcp.blobstore import GenerationMismatch
from regrag.domain.errors import PermanentError

_JSON = "application/json"


class EmbeddingMismatch(PermanentError):
    """The index was built with another embedding model or dimension than this deployment uses."""

    code = "embedding_mismatch"


class IndexMetadata:
    """The record of the index's embedding model; `check` is cheap after the first success per instance."""

    def __init__(self, objects: Any, prefix: str, model_id: str, dimension: int) -> None:
        self.objects = objects
        self.name = f"{prefix}index/embedding.json"
        self.model_id = model_id
        self.dimension = dimension
        self._confirmed = False
        self._lock = threading.Lock()

    def check(self, *, claim: bool) -> None:
        """Raise EmbeddingMismatch unless the index holds this model's vectors. With `claim` (an upsert), an index
        that records no model yet is claimed for this one; without it (a query), such an index is accepted."""
        if self._confirmed:
            return
        with self._lock:
            if self._confirmed:
                return
            recorded = self._read()
            if recorded is None and claim:
                recorded = self._claim()
            if recorded is None:
                return  # an empty index answers nothing either way; the first upsert will claim it
            if (recorded.get("model_id"), recorded.get("dimension")) != (self.model_id, self.dimension):
                raise EmbeddingMismatch(
                    f"the Vector Search index holds vectors of {recorded.get('model_id')} "
                    f"({recorded.get('dimension')} dims, recorded in gs://…/{self.name}); this deployment embeds "
                    f"with {self.model_id} ({self.dimension} dims). Vectors of different models must not mix: "
                    "deploy with the index's model, or build a new index for the new one."
                )
            self._confirmed = True

    def _read(self) -> dict[str, Any] | None:
        blob = self.objects.read_optional(self.name)
        return None if blob is None else dict(json.loads(blob.data))

    def _claim(self) -> dict[str, Any] | None:
        record = {"model_id": self.model_id, "dimension": self.dimension}
        body = json.dumps(record, ensure_ascii=False).encode("utf-8")
        try:
            self.objects.write(self.name, body, {}, content_type=_JSON, if_generation_match=0)
        except GenerationMismatch:
            return self._read()  # another instance claimed it first: compare with what it wrote
        return record
