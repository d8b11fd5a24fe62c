"""The parts of a document sent in several messages, kept in the state bucket until the last one arrives
(ports.PartStaging): `staged/<doc_id>/<generation>/part-<P>-of-<N>.json`, each the ChunksEmbedded message as it
came, with its CRC-32C in the object's metadata. The upsert that receives the last part reads them all and
writes the document whole; its parts are then removed (with any of older generations). A redelivered part
writes the same object again: harmless.
"""

from __future__ import annotations

import contextlib
import json

from regrag.adapters.gcp.chunk_layout import JSON_TYPE, Objects
from regrag.domain.errors import NotFound, Unavailable
from regrag.domain.messages import ChunksEmbedded


class GcsPartStaging:
    def __init__(self, objects: Objects, prefix: str = "") -> None:
        self.objects = objects
        self.prefix = prefix

    def _folder(self, doc_id: str) -> str:
        return f"{self.prefix}staged/{doc_id}/"

    def stage(self, message: ChunksEmbedded) -> list[ChunksEmbedded]:
        import google_crc32c  # the checksum GCS itself uses; imported on the first document in parts

        meta = message.meta
        folder = f"{self._folder(meta.doc_id)}{meta.generation}/"
        body = json.dumps(message.to_json(), ensure_ascii=False).encode("utf-8")
        name = f"{folder}part-{message.part:05d}-of-{message.parts:05d}.json"
        self.objects.write(name, body, {"crc32c": str(google_crc32c.value(body))}, content_type=JSON_TYPE)
        parts = []
        for info in self.objects.list(folder):
            blob = self.objects.read_optional(info.name)
            if blob is None:
                continue  # removed by the upsert that completed the document meanwhile
            if blob.metadata.get("crc32c") != str(google_crc32c.value(blob.data)):
                raise Unavailable(f"staged part {info.name} does not match its checksum; redeliver it")
            parts.append(ChunksEmbedded.from_json(json.loads(blob.data.decode("utf-8"))))
        return sorted(parts, key=lambda p: p.part)

    def clear(self, doc_id: str, generation: int) -> None:
        folder = self._folder(doc_id)
        for info in self.objects.list(folder):
            staged = info.name[len(folder) :].split("/", 1)[0]
            if staged.isdigit() and int(staged) <= generation:
                with contextlib.suppress(NotFound):  # a concurrent upsert removed it first
                    self.objects.delete(info.name)
