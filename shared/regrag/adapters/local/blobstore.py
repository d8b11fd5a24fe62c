"""A folder as the bucket: object names are relative paths; generation is the file's mtime in ns.

An object is written to a temporary file of its own (named after the process and a random token, so two
processes writing at once never share one) and renamed into place: readers never see half of one. A full disk
or a read-only folder is a StorageError naming the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path

from regrag.adapters.local.storage import guarded
from regrag.domain.errors import InvalidInput, NotFound
from regrag.ports import Blob, BlobInfo

_TMP_SUFFIX = ".tmp-upload"

_META_DIR = ".objmeta"  # custom object metadata (GCS x-goog-meta-*) lives beside, never inside, the objects


class DiskBlobStore:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()
        with guarded(self.root):
            self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, name: str) -> Path:
        if not name or name.startswith("/") or "\\" in name:
            raise InvalidInput(f"invalid object name {name!r}")
        path = (self.root / name).resolve()
        if self.root not in path.parents:
            raise InvalidInput(f"object name {name!r} escapes the bucket")
        return path

    def _meta_path(self, name: str) -> Path:
        return self.root / _META_DIR / (name + ".json")

    def read(self, name: str) -> Blob:
        blob = self.read_optional(name)
        if blob is None:
            raise NotFound(f"object {name!r} not found in {self.root}")
        return blob

    def read_optional(self, name: str) -> Blob | None:
        path = self._path(name)
        try:
            data = path.read_bytes()
            generation = path.stat().st_mtime_ns
        except (FileNotFoundError, IsADirectoryError):
            return None
        meta_path = self._meta_path(name)
        metadata = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
        return Blob(name, data, generation, metadata)

    def write(self, name: str, data: bytes, metadata: dict[str, str] | None = None) -> BlobInfo:
        path = self._path(name)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}{_TMP_SUFFIX}")
        with guarded(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                tmp.write_bytes(data)
                os.replace(tmp, path)  # readers never see a half-written object
            finally:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
            meta_path = self._meta_path(name)
            if metadata:
                meta_path.parent.mkdir(parents=True, exist_ok=True)
                meta_path.write_text(json.dumps(metadata, ensure_ascii=True), encoding="utf-8")
            elif meta_path.exists():
                meta_path.unlink()
            return BlobInfo(name, path.stat().st_mtime_ns, len(data))

    def delete(self, name: str) -> None:
        path = self._path(name)
        with guarded(path):
            try:
                path.unlink()
            except FileNotFoundError as exc:
                raise NotFound(f"object {name!r} not found") from exc
            meta_path = self._meta_path(name)
            if meta_path.exists():
                meta_path.unlink()

    def list(self, prefix: str = "") -> list[BlobInfo]:
        out = []
        for path in sorted(self.root.rglob("*")):
            if not path.is_file() or _META_DIR in path.relative_to(self.root).parts or path.name.endswith(_TMP_SUFFIX):
                continue
            name = path.relative_to(self.root).as_posix()
            if name.startswith(prefix):
                st = path.stat()
                out.append(BlobInfo(name, st.st_mtime_ns, st.st_size))
        return out
