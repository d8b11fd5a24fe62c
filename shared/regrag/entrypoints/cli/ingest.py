"""`regrag ingest`: local files (or a folder with manifest.jsonl) → the bucket → ingest → embed → upsert.

The local bucket has no notifications, so each object is handed to the ingest stage by name once it is written;
the in-process bus then runs embed and upsert as Pub/Sub would.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regrag.entrypoints import handlers
from regrag.ingest.ingest import INGEST_VERSION, SIDECAR_SUFFIX, IngestResult
from regrag.ops.watches import ask_backlog
from regrag.services import Services

SUPPORTED = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx", ".png", ".jpg", ".jpeg", ".tif", ".tiff")
_MANIFEST_DROP = ("file", "chars", "articles")


@dataclass(frozen=True)
class Upload:
    """A local file to put in the bucket, with the sidecar to put beside it (if any).

    The sidecar travels as bytes: the ingest stage checks it (a broken one is a recorded failure naming the
    file and the field), so one bad sidecar never stops the rest of a folder. `problem` is set when the file
    cannot even be uploaded (a manifest line that names no file, a file that is not there).
    """

    path: Path
    name: str
    sidecar: bytes | None
    problem: str | None = None

    @property
    def doc_id(self) -> str | None:
        try:
            value = json.loads(self.sidecar).get("doc_id") if self.sidecar else None
        except (ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None


def discover(paths: Sequence[str], corpus: str | None) -> Iterator[Upload]:
    """Files to ingest: folders are walked; a folder with manifest.jsonl takes each document's metadata from it."""
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"{raw}: no such file or folder")
        if path.is_file():
            yield _upload(path, path.name, None, corpus)
            continue
        manifest = path / "manifest.jsonl"
        if manifest.exists():
            for n, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    rel = record["file"]
                    if not isinstance(rel, str) or not rel or ".." in Path(rel).parts:
                        raise TypeError(f"'file' must be a relative path, got {rel!r}")
                except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                    problem = f"{manifest}:{n}: not a manifest record with a 'file' ({exc})"
                    yield Upload(manifest, f"{manifest.name}:{n}", None, problem)
                    continue
                sidecar = {k: v for k, v in record.items() if k not in _MANIFEST_DROP}
                yield _upload(path / rel, rel, _json_bytes(sidecar), corpus)
            continue
        for file in sorted(path.rglob("*")):
            if file.is_file() and file.suffix.lower() in SUPPORTED and not file.name.startswith("."):
                yield _upload(file, file.relative_to(path).as_posix(), None, corpus)


def _json_bytes(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode("utf-8")


def _upload(path: Path, name: str, sidecar: bytes | None, corpus: str | None) -> Upload:
    if not path.is_file():
        return Upload(path, name, None, f"{path}: no such file")
    if sidecar is None:
        beside = path.with_name(path.name + SIDECAR_SUFFIX)
        sidecar = beside.read_bytes() if beside.is_file() else None
    if corpus:
        try:
            parsed = json.loads(sidecar) if sidecar else {}
        except ValueError:
            parsed = None  # left as it is: ingest records the broken sidecar
        if isinstance(parsed, dict):
            sidecar = _json_bytes({**parsed, "corpus": corpus})
    return Upload(path, name, sidecar)


class Progress:
    """A one-line progress bar on stderr (no dependency; silent when stderr is not a terminal and quiet)."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label, self.done = total, label, 0
        self.started = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def step(self, note: str = "") -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        line = (
            f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {rate:.1f}/s {note[:40]}"
        )
        if self.tty:
            sys.stderr.write("\r" + line.ljust(110))
            if self.done == self.total:
                sys.stderr.write("\n")
        elif self.done == self.total or self.done % max(1, self.total // 20) == 0:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def cmd_ingest(services: Services, args: argparse.Namespace) -> int:
    uploads = list(discover(args.paths, args.corpus))
    if not uploads:
        print("nothing to ingest (no supported files found)", file=sys.stderr)
        return 1
    progress = Progress(len(uploads), "ingest")
    counts = {"chunked": 0, "unchanged": 0, "failed": 0, "skipped": 0}
    chunks = 0
    failed: list[dict[str, Any]] = []
    corrected: dict[str, tuple[str, ...]] = {}
    scanned: dict[str, IngestResult] = {}  # doc id → the result of a document with OCR'd pages
    started = time.perf_counter()
    # saved questions are asked once after the batch, not after each document (ingest/alerts.QuestionBacklog)
    backlog = services.question_backlog.batch() if services.question_backlog else contextlib.nullcontext()
    with backlog:
        for up in uploads:
            status, result, problems = _ingest_one(services, up, force=args.force)
            counts[status] += 1
            chunks += result.chunks if result else 0
            failed += problems
            if result is not None and result.doc_id and result.date_warnings:
                corrected[result.doc_id] = result.date_warnings
            if result is not None and result.doc_id and result.ocr_pages:
                scanned[result.doc_id] = result
            progress.step(up.name)
        pruned = _prune(services, uploads, args.corpus) if args.prune else []
    prepared = time.perf_counter()
    not_prepared = _prepare_search(services)
    prepared_s = time.perf_counter() - prepared
    asked = ask_backlog(services)
    summary = {
        **counts,
        "chunks": chunks,
        "documents": len(uploads),
        "pruned": len(pruned),
        # documents whose dates the text corrected or contradicted (regrag audit lists every one in the index)
        "dates_corrected": len(corrected),
        # scans: documents and pages OCR read, and the OCR'd pages under REGRAG_OCR_LOW_CONFIDENCE, per document
        "ocr": ocr_summary(scanned),
        "seconds": round(time.perf_counter() - started, 1),
        # of which: preparing the index for search (at a million chunks, building the saved search snapshot)
        "search_prepared_s": round(prepared_s, 1),
        "search_prepared": not_prepared is None,
        "dead_letters": len(services.bus.dead_letters) if services.bus is not None else 0,
        # alerts the saved questions asked after the batch recorded (document and article watches: GET /alerts)
        "question_alerts": len(asked),
        "index": services.store.stats(),
    }
    print(json.dumps(summary, ensure_ascii=False, indent=None if args.quiet else 1))
    for f in failed:
        print(f"failed ({f.get('stage')}): {f.get('key')}: {f.get('error')}", file=sys.stderr)
    if not_prepared is not None:
        note = "the documents are stored; a server builds it on start"
        print(f"search not prepared ({note}): {not_prepared}", file=sys.stderr)
    for doc_id in pruned:
        print(f"pruned: {doc_id}", file=sys.stderr)
    for doc_id, warnings in corrected.items():
        for warning in warnings:
            print(f"dates: {doc_id}: {warning}", file=sys.stderr)
    for doc_id, result in scanned.items():
        if result.low_confidence_pages:
            pages = ", ".join(map(str, result.low_confidence_pages))
            print(f"ocr: {doc_id}: low confidence on page(s) {pages}: check them against the scan", file=sys.stderr)
    return 0 if counts["failed"] == 0 else 2


def _prepare_search(services: Services) -> str | None:
    """Prepare the index for search after the writes; the error when that failed. The writes are done by then,
    so a failure (a full disk, no memory for the build) must not turn the batch into a crash: a server builds
    the snapshot itself when it finds none saved."""
    if services.prepare_search is None:
        return None
    try:
        services.prepare_search()
    except Exception as exc:  # noqa: BLE001 - reported in the summary and on stderr, never raised
        return f"{type(exc).__name__}: {exc}"
    return None


def ocr_summary(scanned: dict[str, IngestResult]) -> dict[str, Any]:
    """{documents, pages, engines, low_confidence: {doc_id: [pages]}} of the documents OCR read in this run."""
    return {
        "documents": len(scanned),
        "pages": sum(len(r.ocr_pages or ()) for r in scanned.values()),
        "engines": sorted({r.ocr_engine for r in scanned.values() if r.ocr_engine}),
        "low_confidence": {d: list(r.low_confidence_pages) for d, r in scanned.items() if r.low_confidence_pages},
    }


def _ingest_one(
    services: Services, up: Upload, *, force: bool
) -> tuple[str, IngestResult | None, list[dict[str, Any]]]:
    """(outcome, the ingest result, failures) of one file. A failure at any stage — ingest, embed, upsert, or a message
    the bus dead-lettered — fails the file: the in-process bus runs every stage before ingest_name returns."""
    if up.problem:
        return "failed", None, [{"stage": "ingest", "key": up.name, "error": up.problem}]
    if not force and _unchanged(services, up):
        return "unchanged", None, []
    failures_before = len(services.failures.list())
    dead_before = len(services.bus.dead_letters) if services.bus is not None else 0
    result = handlers.ingest_name(services, _put(services, up))
    problems = services.failures.list()[failures_before:]
    if services.bus is not None:
        problems += [
            {"stage": d.topic, "key": up.name, "error": f"dead-lettered: {error}"}
            for d, error in services.bus.dead_letters[dead_before:]
        ]
    if result is None or problems:
        return "failed", None, problems or [{"stage": "ingest", "key": up.name, "error": "not ingested"}]
    return (result.status if result.status in ("chunked", "skipped") else "skipped"), result, []


def _prune(services: Services, uploads: list[Upload], corpus: str | None) -> list[str]:
    """Remove every indexed document (of `corpus`, when given) whose file this run did not see: the folder is
    the whole collection. The same path as a deleted object on GCP (handlers.object_removed)."""
    seen = {up.name for up in uploads}
    gone = [m for m in services.store.list_documents(corpus) if m.source_name and m.source_name not in seen]
    for meta in gone:
        remove_object(services, meta.source_name)
    return [m.doc_id for m in gone]


def remove_object(services: Services, name: str) -> None:
    """Delete an object and its sidecar from the bucket, then remove what it produced from the index."""
    blob = services.blobs.read_optional(name)
    generation = blob.generation if blob is not None else 0
    for object_name in (name + SIDECAR_SUFFIX, name):
        if services.blobs.read_optional(object_name) is not None:
            services.blobs.delete(object_name)
    handlers.object_removed(services, name, generation)


def cmd_delete(services: Services, args: argparse.Namespace) -> int:
    """`regrag delete DOC_ID…`: each document out of the bucket and the index."""
    missing = 0
    for doc_id in args.doc_ids:
        found = services.store.get_document(doc_id)
        if found is None:
            print(f"no document {doc_id!r} in the index", file=sys.stderr)
            missing += 1
            continue
        remove_object(services, found[0].source_name or doc_id)
        still = services.store.get_document(doc_id)
        print(json.dumps({"doc_id": doc_id, "deleted": still is None, "source": found[0].source_name}))
    return 0 if missing == 0 else 2


def _sidecar_bytes(up: Upload) -> bytes | None:
    return up.sidecar


def _unchanged(services: Services, up: Upload) -> bool:
    """The same bytes and sidecar are in the bucket, and the index holds that generation, derived by the
    current ingest rules (a document derived by older rules, e.g. before dates were read from the text, is
    ingested again)."""
    existing = services.blobs.read_optional(up.name)
    if existing is None or existing.data != up.path.read_bytes():
        return False
    old_sidecar = services.blobs.read_optional(up.name + SIDECAR_SUFFIX)
    if (old_sidecar.data if old_sidecar else None) != _sidecar_bytes(up):
        return False
    doc_id = up.doc_id
    found = services.store.get_document(doc_id) if doc_id else None
    return bool(
        found
        and found[0].content_hash
        and found[0].generation == existing.generation
        and found[0].ingest_version == INGEST_VERSION
    )


def _put(services: Services, up: Upload) -> str:
    """Write the file (and its sidecar first) to the bucket unless the bucket already holds the same bytes."""
    data = up.path.read_bytes()
    sidecar = _sidecar_bytes(up)
    old_sidecar = services.blobs.read_optional(up.name + SIDECAR_SUFFIX)
    if sidecar is not None and (old_sidecar.data if old_sidecar else None) != sidecar:
        services.blobs.write(up.name + SIDECAR_SUFFIX, sidecar)
    existing = services.blobs.read_optional(up.name)
    if existing is None or existing.data != data:
        services.blobs.write(up.name, data)
    return up.name
