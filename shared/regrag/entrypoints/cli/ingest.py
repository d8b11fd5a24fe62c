"""`regrag ingest`: local files (or a folder with manifest.jsonl) → the bucket → ingest → embed → upsert.

The local bucket has no notifications, so each object is handed to the ingest stage by name once it is written;
the in-process bus then runs embed and upsert as Pub/Sub would. A file counts as unchanged only when the bucket
holds its bytes and the index holds that version written whole: a run killed half-way is finished by the next.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regrag.domain.errors import StorageError, TransientError
from regrag.domain.models import INCOMPLETE_TEXT, PROVINCE_UNKNOWN, DocumentMeta, warned
from regrag.entrypoints import handlers
from regrag.entrypoints.cli.remove import complete_deletes, prune, writing
from regrag.ingest.ingest import INGEST_VERSION, SIDECAR_SUFFIX, IngestResult, derive_doc_id
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
    """Exit 0: every file ingested or unchanged; 2: some files failed (each named on stderr, recorded in
    failures.jsonl); 3: the batch stopped (a full disk, a damaged index: the one line says which file and what to
    do). The summary is printed in every case."""
    uploads = list(discover(args.paths, args.corpus))
    if not uploads:
        print("nothing to ingest (no supported files found)", file=sys.stderr)
        return 1
    with writing(services, "ingest"):
        return _ingest_batch(services, uploads, args)


@dataclass
class _Batch:
    """What one `regrag ingest` did, for its summary."""

    counts: dict[str, int] = field(default_factory=lambda: {"chunked": 0, "unchanged": 0, "failed": 0, "skipped": 0})
    chunks: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    corrected: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unsure: dict[str, tuple[str, ...]] = field(default_factory=dict)  # doc id → what its text did not tell
    uncertain_dates: int = 0  # documents dated by an amendment's adoption, its entry into force not in the text
    scanned: dict[str, IngestResult] = field(default_factory=dict)  # doc id → a document with OCR'd pages
    stopped: str | None = None


def _ingest_batch(services: Services, uploads: list[Upload], args: argparse.Namespace) -> int:
    started = time.perf_counter()
    batch = _Batch()
    dead_before = len(services.bus.dead_letters) if services.bus is not None else 0
    completed: list[DocumentMeta] = []
    pruned: list[str] = []
    not_pruned: list[str] = []
    # saved questions are asked once after the batch, not after each document (ingest/alerts.QuestionBacklog)
    backlog = services.question_backlog.batch() if services.question_backlog else contextlib.nullcontext()
    try:
        with backlog:
            completed = complete_deletes(services)
            incomplete = set(services.store.incomplete_documents([_doc_id(up) for up in uploads if not up.problem]))
            progress = Progress(len(uploads), "ingest")
            for up in uploads:
                status, result, problems = _ingest_one(services, up, force=args.force, incomplete=incomplete)
                batch.counts[status] += 1
                batch.chunks += result.chunks if result else 0
                batch.failed += problems
                if result is not None and result.doc_id and result.date_warnings:
                    batch.corrected[result.doc_id] = result.date_warnings
                if result is not None and result.doc_id and result.metadata_warnings:
                    batch.unsure[result.doc_id] = result.metadata_warnings
                batch.uncertain_dates += bool(result is not None and result.effective_date_uncertain)
                if result is not None and result.doc_id and result.ocr_pages:
                    batch.scanned[result.doc_id] = result
                progress.step(up.name)
            if args.prune:
                pruned, not_pruned = prune(services, uploads, args.corpus)
    except StorageError as exc:  # a full disk, a read-only folder, a damaged file: nothing more can be written
        batch.stopped = str(exc)
    prepared = time.perf_counter()
    not_prepared = _prepare_search(services) if batch.stopped is None else "the batch stopped"
    prepared_s = time.perf_counter() - prepared
    asked = ask_backlog(services) if batch.stopped is None else []
    summary = {
        **batch.counts,
        "chunks": batch.chunks,
        "documents": len(uploads),
        "pruned": len(pruned),
        # documents whose dates the text corrected or contradicted (regrag audit lists every one in the index)
        "dates_corrected": len(batch.corrected),
        # amended documents cited with their amendment's adoption date, the text not stating when it took effect
        "dates_uncertain": batch.uncertain_dates,
        # documents whose province no sidecar gives and whose text does not tell: in no province's results
        "province_unknown": sum(warned(ws, PROVINCE_UNKNOWN) for ws in batch.unsure.values()),
        # texts of articles none of which says when it takes effect: likely cut short (regrag audit lists them)
        "possibly_incomplete": sum(warned(ws, INCOMPLETE_TEXT) for ws in batch.unsure.values()),
        # scans: documents and pages OCR read, and the OCR'd pages under REGRAG_OCR_LOW_CONFIDENCE, per document
        "ocr": ocr_summary(batch.scanned),
        "seconds": round(time.perf_counter() - started, 1),
        # of which: preparing the index for search (at a million chunks, building the saved search snapshot)
        "search_prepared_s": round(prepared_s, 1),
        "search_prepared": not_prepared is None,
        "dead_letters": (len(services.bus.dead_letters) - dead_before) if services.bus is not None else 0,
        # each file that failed, at which stage and why (also in failures.jsonl)
        "failures": [{k: f.get(k) for k in ("file", "key", "stage", "reason", "error")} for f in batch.failed],
        "stopped": batch.stopped,
        # alerts the saved questions asked after the batch recorded (document and article watches: GET /alerts)
        "question_alerts": len(asked),
        "index": _stats(services),
    }
    print(json.dumps(summary, ensure_ascii=False, indent=None if args.quiet else 1))
    for meta in completed:
        print(f"deleted: {meta.doc_id} (its file had left the bucket: a delete that had not finished)", file=sys.stderr)
    for f in batch.failed:
        doc = f" (doc {f['key']})" if f.get("key") not in (None, f.get("file")) else ""
        print(f"failed ({f.get('stage')}): {f.get('file')}{doc}: {f.get('error')}", file=sys.stderr)
    if not_prepared is not None and batch.stopped is None:
        note = "the documents are stored; a server builds it on start"
        print(f"search not prepared ({note}): {not_prepared}", file=sys.stderr)
    for doc_id in pruned:
        print(f"pruned: {doc_id}", file=sys.stderr)
    for doc_id in not_pruned:
        print(f"not pruned: {doc_id} is still in the index (see failures.jsonl)", file=sys.stderr)
    for doc_id, warnings in batch.corrected.items():
        for warning in warnings:
            print(f"dates: {doc_id}: {warning}", file=sys.stderr)
    if batch.uncertain_dates:
        print(
            f"dates: {batch.uncertain_dates} amended document(s) are cited with the adoption date of their latest "
            "amendment, the text not stating when it took effect: `regrag audit` lists them; a sidecar's "
            "amendment_effective_date gives the date",
            file=sys.stderr,
        )
    for doc_id, warnings in batch.unsure.items():
        for warning in warnings:
            print(f"metadata: {doc_id}: {warning}", file=sys.stderr)
    for doc_id, result in batch.scanned.items():
        if result.low_confidence_pages:
            pages = ", ".join(map(str, result.low_confidence_pages))
            print(f"ocr: {doc_id}: low confidence on page(s) {pages}: check them against the scan", file=sys.stderr)
    if batch.stopped is not None:
        print(f"regrag ingest: stopped: {batch.stopped}", file=sys.stderr)
        return 3
    return 0 if batch.counts["failed"] == 0 and not not_pruned else 2


def _stats(services: Services) -> dict[str, Any] | str:
    try:
        return services.store.stats()
    except StorageError as exc:
        return f"unavailable: {exc}"


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


def _doc_id(up: Upload) -> str:
    """The document id a file gets: its sidecar's, or the one ingest derives from its name."""
    return up.doc_id or derive_doc_id(up.name)


def _ingest_one(
    services: Services, up: Upload, *, force: bool, incomplete: set[str]
) -> tuple[str, IngestResult | None, list[dict[str, Any]]]:
    """(outcome, the ingest result, failures) of one file. A failure at any stage — ingest, embed, upsert, or a
    message the bus dead-lettered after its retries — fails the file: the in-process bus runs every stage before
    ingest_name returns. Only this process's failure records count (another ingest may share the file)."""
    if up.problem:
        services.failures.record("ingest", up.name, "invalid_input", {"error": up.problem})
        return "failed", None, [{"stage": "ingest", "file": up.name, "reason": "invalid_input", "error": up.problem}]
    if not force and _doc_id(up) not in incomplete and _unchanged(services, up):
        return "unchanged", None, []
    before = len(services.failures.recorded())
    try:
        result = handlers.ingest_name(services, _put(services, up))
    except TransientError as exc:  # the ingest stage has no bus to retry it: this file fails, the batch goes on
        services.failures.record("ingest", up.name, exc.code, {"error": str(exc)})
        result = None
    problems = [{**p, "file": up.name} for p in services.failures.recorded()[before:]]
    if result is None or problems:
        return "failed", None, problems or [{"stage": "ingest", "file": up.name, "error": "not ingested"}]
    return (result.status if result.status in ("chunked", "skipped") else "skipped"), result, []


def _sidecar_bytes(up: Upload) -> bytes | None:
    return up.sidecar


def _unchanged(services: Services, up: Upload) -> bool:
    """The same bytes and sidecar are in the bucket, and the index holds that generation, derived by the
    current ingest rules (a document derived by older rules, e.g. before dates were read from the text, is
    ingested again). The caller has checked that it was written whole (ChunkStore.incomplete_documents)."""
    existing = services.blobs.read_optional(up.name)
    if existing is None or existing.data != up.path.read_bytes():
        return False
    old_sidecar = services.blobs.read_optional(up.name + SIDECAR_SUFFIX)
    if (old_sidecar.data if old_sidecar else None) != _sidecar_bytes(up):
        return False
    found = services.store.get_document(_doc_id(up))
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
