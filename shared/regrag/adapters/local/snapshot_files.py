"""The search snapshot on disk beside the index, so that a process starts by mapping arrays, not rebuilding them.

Rebuilding the snapshot reads every vector and term count from SQLite: about 20 s at a million chunks, paid by
every server start. After a build, the arrays are written to `<index>.snapshot/v<version>/` (one `.npy` file
each, the chunk ids one per line, the small dictionaries in `meta.json`, written last, then the folder renamed
into place, so a reader never sees half of one); a process that finds the folder of the index's current
version, made with the same settings, maps the arrays read-only (`np.load(mmap_mode="r")`) instead.

The version is the index's write counter: any write makes every older folder useless, and the next build
removes them. A folder that fails to load (damaged, other format) is ignored and rebuilt.

Every file's CRC-32 is recorded in `meta.json`, and meta.json's own in `meta.json.crc32`: a load checks
them all before it maps anything, so a damaged file (a flipped byte in `vectors.npy` changes answers without any
error) is removed and rebuilt, never searched. The check reads every byte once: bench/README.md ("Checksums")
has its cost against the load it protects.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np

from regrag import logs
from regrag.adapters.local import checksums, coarse
from regrag.adapters.local.snapshot import SearchSnapshot

FORMAT = 3  # 2: the corpus runs' 8-bit shortlist indexes (coarse.py); 3: checksums
_ARRAYS = (
    "eff",
    "eff_to",
    "has_vector",
    "vectors",
    "has_terms",
    "indptr",
    "posting_rows",
    "posting_weights",
    "idf",
    "question_vectors",
    "question_chunks",
    "question_starts",
)
log = logs.get("snapshot")
_META_SUM = "meta.json.crc32"  # meta.json's own checksum, written last


def folder_for(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + ".snapshot")


def save(snapshot: SearchSnapshot, folder: Path, settings: dict[str, Any]) -> bool:
    """Write `snapshot` under `folder` (False when it cannot be: chunk ids with a line break, or the disk
    refused) and remove the folders of older versions. `settings`: what the arrays depend on besides the
    index (dimension, BM25 parameters, questions loaded), compared on load."""
    target = folder / f"v{snapshot.version}"
    if _meta(target, snapshot.version, settings) is not None:
        return True
    if any("\n" in chunk_id for chunk_id in snapshot.chunk_ids):
        return False
    tmp = folder / f".tmp-{snapshot.version}-{os.getpid()}-{threading.get_ident()}"
    try:
        tmp.mkdir(parents=True)
        for name in _ARRAYS:
            np.save(tmp / f"{name}.npy", np.asarray(getattr(snapshot, name)))
        for column, codes in snapshot.codes.items():
            np.save(tmp / f"codes-{column}.npy", np.asarray(codes))
        for (start, stop), index in snapshot.coarse.items():
            np.save(tmp / f"coarse-{start}-{stop}.npy", coarse.to_bytes(index))
        (tmp / "chunk_ids.txt").write_text("\n".join(snapshot.chunk_ids), encoding="utf-8")
        meta = {
            "format": FORMAT,
            "version": snapshot.version,
            "settings": settings,
            "chunks": len(snapshot.chunk_ids),
            "values": snapshot.values,
            "vocab": snapshot.vocab,
            "corpus_runs": {c: list(run) for c, run in snapshot.corpus_runs.items()},
            "coarse": [list(run) for run in snapshot.coarse],
            "files": {path.name: checksums.of_file(path) for path in sorted(tmp.iterdir())},
        }
        (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        (tmp / _META_SUM).write_text(str(checksums.of_file(tmp / "meta.json")), encoding="ascii")
        if target.exists():  # this version saved with other settings or in another format: replaced
            stale = folder / f".stale-{snapshot.version}-{os.getpid()}-{threading.get_ident()}"
            os.replace(target, stale)
            shutil.rmtree(stale, ignore_errors=True)
        os.replace(tmp, target)
    except OSError as exc:  # a full or read-only disk costs the next start a rebuild, nothing more
        logs.event(log, logging.WARNING, "search snapshot not saved", error=repr(exc), folder=str(folder))
        shutil.rmtree(tmp, ignore_errors=True)
        return target.exists()
    _remove_older(folder, snapshot.version)
    return True


def _meta(target: Path, version: int, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The saved folder's meta.json when it holds `version` made with `settings` in this format, else None."""
    try:
        meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != version:
        return None
    if meta.get("settings") != settings:
        return None
    return dict(meta)


def damage(target: Path, meta: dict[str, Any]) -> str | None:
    """What in a saved folder fails its checksum (None: every file matches): reads every byte once."""
    try:
        recorded = int((target / _META_SUM).read_text(encoding="ascii"))
    except (OSError, ValueError):
        recorded = None
    if recorded != checksums.of_file(target / "meta.json"):
        return f"{target / 'meta.json'} does not match its checksum"
    expected = meta.get("files") or {}
    present = {path.name for path in target.iterdir()} - {"meta.json", _META_SUM}
    if present != set(expected):
        return f"{target} holds {sorted(present ^ set(expected))[:3]} beyond or short of the files it recorded"
    for name, crc in sorted(expected.items()):
        if checksums.of_file(target / name) != crc:
            return f"{target / name} does not match its checksum"
    return None


def verify(folder: Path, version: int) -> str | None:
    """The damage of the saved snapshot of `version` (None when there is none, or it is whole): for `regrag
    doctor`, which does not know the settings it was saved with."""
    target = folder / f"v{version}"
    if not target.is_dir():
        return None
    try:
        meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{target / 'meta.json'} is unreadable ({exc})"
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        return None  # another format: never loaded, replaced by the next save
    return damage(target, meta)


def saved(folder: Path, version: int, settings: dict[str, Any]) -> bool:
    """Whether the snapshot of `version` with `settings` is saved (its arrays are not read)."""
    return _meta(folder / f"v{version}", version, settings) is not None


def load(folder: Path, version: int, settings: dict[str, Any]) -> SearchSnapshot | None:
    """The snapshot of `version` saved with the same `settings`, its arrays mapped read-only; None when there
    is none (or it cannot be read)."""
    target = folder / f"v{version}"
    meta = _meta(target, version, settings)
    if meta is None:
        return None
    try:
        problem = damage(target, meta)
    except OSError as exc:
        problem = f"{target} is unreadable ({exc})"
    if problem is not None:
        logs.event(log, 40, "search snapshot on disk damaged; removed and rebuilt", problem=problem)
        stale = folder / f".stale-{version}-{os.getpid()}-{threading.get_ident()}"
        with contextlib.suppress(OSError):  # another process may have removed it first
            os.replace(target, stale)
        shutil.rmtree(stale, ignore_errors=True)
        return None
    try:
        arrays = {name: np.load(target / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        codes = {c: np.load(target / f"codes-{c}.npy", mmap_mode="r") for c in meta["values"]}
        text = (target / "chunk_ids.txt").read_text(encoding="utf-8")
        chunk_ids = tuple(text.split("\n")) if meta["chunks"] else ()
        if len(chunk_ids) != meta["chunks"] or any(len(a) != len(chunk_ids) for a in codes.values()):
            raise ValueError("chunk ids and columns disagree")
        return SearchSnapshot(
            version=version,
            chunk_ids=chunk_ids,
            codes=codes,
            values=meta["values"],
            vocab=meta["vocab"],
            corpus_runs={c: (int(a), int(b)) for c, (a, b) in meta["corpus_runs"].items()},
            coarse={
                (int(a), int(b)): coarse.from_bytes(np.load(target / f"coarse-{a}-{b}.npy")) for a, b in meta["coarse"]
            },
            row_reader=_row_reader(arrays["vectors"]) if meta["coarse"] else None,
            **arrays,
        )
    except (OSError, ValueError, KeyError) as exc:
        logs.event(
            log, logging.WARNING, "search snapshot on disk unreadable; rebuilding", error=repr(exc), folder=str(target)
        )
        return None


def _row_reader(vectors: np.ndarray) -> coarse.RowReader | None:
    """pread access to the mapped vectors file (None for an array that is not a plain mapping of one)."""
    if not isinstance(vectors, np.memmap) or not vectors.filename or vectors.ndim != 2:
        return None
    if vectors.dtype != np.dtype("<f4") or not vectors.flags.c_contiguous:
        return None
    return coarse.RowReader(str(vectors.filename), int(vectors.offset), int(vectors.shape[1]))


def _remove_older(folder: Path, version: int) -> None:
    """Folders of older versions, and the leftovers of interrupted saves of older versions."""
    for path in folder.iterdir():
        if path.name.startswith("v"):
            number = path.name[1:]
        elif path.name.startswith(".tmp-"):
            number = path.name[len(".tmp-") :].split("-", 1)[0]
        else:
            continue
        if number.isdigit() and int(number) < version:
            with contextlib.suppress(OSError):  # another process may be removing it too
                shutil.rmtree(path)
