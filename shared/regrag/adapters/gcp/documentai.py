"""Document AI OCR: the `OcrEngine` port on an Enterprise Document OCR (or Layout Parser) processor.

Limits (Google Cloud, "Document AI limits", https://cloud.google.com/document-ai/limits, read 2026-11):
- online (synchronous) requests: at most 15 pages (30 in imageless mode) for Enterprise Document OCR and
  Layout Parser, and at most 40 MB per file (older revisions of the page said 20 MB: `ONLINE_MAX_BYTES`
  stays at 20 MB to be safe with either);
- batch (asynchronous, through Cloud Storage): at most 500 pages for those processors, 1 GB per file,
  5,000 files per request; jobs may queue, and unfinished jobs are cancelled after 24 h;
- images: at most 40 megapixels per page (not applied to PDFs);
- quotas (https://cloud.google.com/document-ai/quotas): 600 online requests per minute per project,
  5 concurrent batch requests per project.
IAM: the ingest service account needs `roles/documentai.apiUser` (documentai.processors.processOnline and
processBatch) on the processor's project, plus object read on the upload bucket and object write on the
batch output prefix for batch processing.

Versions: the processor name carries its version (`…/processors/ID/processorVersions/V`) and every request
goes to that version, so each OCR'd page records the model that read it (`OcrPage.engine`,
"documentai:ID@V"). A request to the bare processor would run its default version, which can change under us
(Google deprecates a stable version six months after a newer one, https://docs.cloud.google.com/document-ai/
docs/manage-processor-versions), and nothing in a response says which version ran. `roles/documentai.apiUser`
covers processing on a processor version (documentai.processorVersions.processOnline / processBatch).

`recognize` sends one page image online (the parser rasterises PDF pages without a text layer and calls it
once per page, so a request never exceeds the page limit). `process` takes a whole PDF or TIFF: online when
it is within the online limits, else a batch job reading the object from Cloud Storage and writing Document
JSON shards under `batch_output_uri`, which are read back and merged in page order.

Errors: INVALID_ARGUMENT (unsupported type, too many pages, too large) → `InvalidInput` (permanent);
UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, INTERNAL → retried within `retry_deadline_s`, then
`Unavailable` (transient: the event is redelivered); anything else propagates (a deployment problem).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

from regrag import logs
from regrag.adapters.gcp.clients import Endpoint, api_retry, document_ai, storage_client
from regrag.adapters.gcp.errors import translated
from regrag.cloud_facts import DOCUMENTAI_OCR_LOCATIONS, DOCUMENTAI_PROCESSOR_PATTERN
from regrag.domain.errors import InvalidInput, Unavailable
from regrag.domain.ocr import Box, OcrLine, OcrPage

log = logs.get("ocr.documentai")

ONLINE_MAX_PAGES = 15
ONLINE_MAX_BYTES = 20 * 1024 * 1024
BATCH_MAX_PAGES = 500
_PROCESSOR_RE = re.compile(DOCUMENTAI_PROCESSOR_PATTERN)


class DocumentAiOcr:
    """OCR through a Document AI processor; the client is built on first use."""

    def __init__(
        self,
        processor: str,
        location: str,
        *,
        endpoint: Endpoint | None = None,
        timeout_s: float = 60.0,
        retry_deadline_s: float = 30.0,
        batch_output_uri: str | None = None,
        batch_timeout_s: float = 1800.0,
        poll_interval_s: float = 10.0,
        project: str | None = None,
    ) -> None:
        """Configure the processor; nothing is contacted yet.

        Args:
            processor: `projects/P/locations/L/processors/ID/processorVersions/V`: the version that reads.
            location: the processor's location (`us`, `eu` or a single region of `DOCUMENTAI_OCR_LOCATIONS`);
                must match the name; picks the endpoint.
            endpoint: where the API answers (default `{location}-documentai.googleapis.com`; a fake in tests).
            timeout_s: deadline of one online request.
            retry_deadline_s: how long transient errors of one request are retried.
            batch_output_uri: `gs://bucket/prefix` where batch jobs write (needed only for large files).
            batch_timeout_s: longest wait for a batch job.
            poll_interval_s: first wait between polls of a batch job (then ×1.5, up to 60 s).
            project: project for the Cloud Storage client that reads batch output (default: ADC's).
        """
        m = _PROCESSOR_RE.fullmatch(processor)
        if m is None:
            raise InvalidInput(
                f"Document AI processor {processor!r} is not projects/P/locations/L/processors/ID/processorVersions/V"
            )
        if m.group("location") != location:
            raise InvalidInput(f"Document AI processor {processor!r} is not in location {location!r}")
        if location not in DOCUMENTAI_OCR_LOCATIONS:
            raise InvalidInput(
                f"Document AI offers OCR processors in {', '.join(DOCUMENTAI_OCR_LOCATIONS)}, not {location!r}"
            )
        self.processor = processor
        self.processor_id = m.group("processor")
        self.processor_version = m.group("version")
        self.location = location
        self.endpoint = endpoint or Endpoint(f"{location}-documentai.googleapis.com")
        self.timeout_s = timeout_s
        self.retry_deadline_s = retry_deadline_s
        self.batch_output_uri = batch_output_uri.rstrip("/") if batch_output_uri else None
        self.batch_timeout_s = batch_timeout_s
        self.poll_interval_s = poll_interval_s
        self.project = project
        self._client: Any = None
        self._storage: Any = None
        self._lock = threading.Lock()

    @property
    def engine_id(self) -> str:
        """Engine, processor and processor version, stored with every page it reads."""
        return f"documentai:{self.processor_id}@{self.processor_version}"

    def _documents(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = document_ai(self.endpoint)
            return self._client

    def recognize(self, image: bytes) -> OcrPage:
        """The lines on one page image (PNG, JPEG or TIFF), through an online request."""
        mime = _sniff_mime(image)
        pages = self._online(image, mime)
        if not pages:
            return OcrPage((), 0, 0, self.engine_id)
        return pages[0]

    def process(self, data: bytes, mime_type: str, *, pages: int, gcs_uri: str | None = None) -> list[OcrPage]:
        """Every page of a PDF or image file: online within the online limits, else a batch job.

        Args:
            data: the file's bytes.
            mime_type: its type (application/pdf, image/png, image/jpeg or image/tiff).
            pages: its page count (the caller has parsed it; it decides online or batch).
            gcs_uri: where the same file is in Cloud Storage (`gs://…`), for a batch job.
        """
        if pages <= ONLINE_MAX_PAGES and len(data) <= ONLINE_MAX_BYTES:
            return self._online(data, mime_type)
        if pages > BATCH_MAX_PAGES:
            raise InvalidInput(f"{pages} pages; Document AI OCR takes at most {BATCH_MAX_PAGES} pages per file")
        if gcs_uri is None or self.batch_output_uri is None:
            raise InvalidInput(
                f"{pages} pages / {len(data):,} bytes is over the online limits ({ONLINE_MAX_PAGES} pages, "
                f"{ONLINE_MAX_BYTES:,} bytes) and batch processing needs the file's gs:// URI and an output prefix"
            )
        return self.process_gcs(gcs_uri, mime_type)

    def _online(self, data: bytes, mime_type: str) -> list[OcrPage]:
        from google.cloud import documentai_v1 as docai

        request = docai.ProcessRequest(
            name=self.processor,
            raw_document=docai.RawDocument(content=data, mime_type=mime_type),
            skip_human_review=True,
        )
        started = time.perf_counter()
        with translated(f"Document AI {self.engine_id}"):
            response = self._documents().process_document(
                request=request, timeout=self.timeout_s, retry=api_retry(self.retry_deadline_s)
            )
        pages = pages_from_document(response.document, self.engine_id)
        logs.event(log, logging.DEBUG, "document processed online", processor=self.engine_id, pages=len(pages),
                   ms=round((time.perf_counter() - started) * 1000))  # fmt: skip
        return pages

    def process_gcs(self, gcs_uri: str, mime_type: str) -> list[OcrPage]:
        """A batch job on one Cloud Storage object; its Document JSON shards read back in page order."""
        from google.api_core.future import polling as ga_polling
        from google.cloud import documentai_v1 as docai

        if self.batch_output_uri is None:
            raise InvalidInput("Document AI batch processing needs batch_output_uri (gs://bucket/prefix)")
        output = f"{self.batch_output_uri}/{int(time.time() * 1000)}"
        request = docai.BatchProcessRequest(
            name=self.processor,
            input_documents=docai.BatchDocumentsInputConfig(
                gcs_documents=docai.GcsDocuments(documents=[docai.GcsDocument(gcs_uri=gcs_uri, mime_type=mime_type)])
            ),
            document_output_config=docai.DocumentOutputConfig(
                gcs_output_config=docai.DocumentOutputConfig.GcsOutputConfig(gcs_uri=output)
            ),
            skip_human_review=True,
        )
        with translated(f"Document AI batch {self.engine_id}"):
            job = self._documents().batch_process_documents(
                request=request, timeout=self.timeout_s, retry=api_retry(self.retry_deadline_s)
            )
            polling = ga_polling.DEFAULT_POLLING.with_delay(
                initial=self.poll_interval_s, maximum=max(self.poll_interval_s, 60.0), multiplier=1.5
            ).with_timeout(self.batch_timeout_s)
            try:
                job.result(polling=polling)
            except TimeoutError as exc:  # concurrent.futures.TimeoutError: the job is still running
                raise Unavailable(f"Document AI batch job {job.operation.name} did not finish in time") from exc
        metadata = job.metadata  # BatchProcessMetadata, decoded by the client
        pages: list[OcrPage] = []
        for status in metadata.individual_process_statuses:
            if status.status.code != 0:
                raise InvalidInput(f"Document AI could not process {status.input_gcs_source}: {status.status.message}")
            pages.extend(self._read_shards(status.output_gcs_destination))
        return pages

    def _read_shards(self, prefix_uri: str) -> list[OcrPage]:
        from google.cloud import documentai_v1 as docai

        bucket_name, _, prefix = prefix_uri.removeprefix("gs://").partition("/")
        if self._storage is None:
            self._storage = storage_client(self.project)
        with translated(f"read Document AI output {prefix_uri}"):
            blobs = [b for b in self._storage.list_blobs(bucket_name, prefix=prefix) if b.name.endswith(".json")]
            documents = [docai.Document.from_json(b.download_as_bytes(), ignore_unknown_fields=True) for b in blobs]
        documents.sort(key=lambda d: d.shard_info.shard_index)
        return [page for document in documents for page in pages_from_document(document, self.engine_id)]


def pages_from_document(document: Any, engine: str) -> list[OcrPage]:
    """Document AI's Document → one OcrPage per page, in page order.

    A line's text is the document text its layout's text anchor points at (segments; a missing start index
    is 0, proto3's default); its box is the bounding polygon's normalised vertices, or its pixel vertices
    divided by the page dimension. Pages without lines fall back to paragraphs.
    """
    text = document.text
    out = []
    for page in sorted(document.pages, key=lambda p: p.page_number):
        width, height = float(page.dimension.width or 0), float(page.dimension.height or 0)
        lines = []
        for element in page.lines or page.paragraphs:
            layout = element.layout
            content = _anchor_text(text, layout.text_anchor.text_segments).strip()
            if not content:
                continue
            lines.append(OcrLine(content, float(layout.confidence), _box(layout.bounding_poly, width, height)))
        out.append(OcrPage(tuple(lines), int(width), int(height), engine))
    return out


def _anchor_text(text: str, segments: Sequence[Any]) -> str:
    return "".join(text[int(s.start_index or 0) : int(s.end_index)] for s in segments)


def _box(poly: Any, width: float, height: float) -> Box:
    if poly.normalized_vertices:
        return Box.around([(v.x, v.y) for v in poly.normalized_vertices])
    return Box.around([(float(v.x), float(v.y)) for v in poly.vertices], width, height)


def _sniff_mime(image: bytes) -> str:
    if image.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if image.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if image.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    if image.startswith(b"%PDF-"):
        return "application/pdf"
    return "application/octet-stream"  # the service answers INVALID_ARGUMENT: a permanent failure
