"""An in-process gRPC fake of Document AI (v1 DocumentProcessorService), driven by the real gapic client.

Methods: `ProcessDocument` (online), `BatchProcessDocuments` (a long-running operation that reads its input
from Cloud Storage and writes Document JSON there, as the service does) and `google.longrunning.Operations/
GetOperation` (the client polls it: an operation is done on its second look).

It cannot read pixels, so what a page "says" is scripted: `script(content, pages)` registers the lines each
page of a file (by its bytes) holds; an unscripted file holds `default`, or one empty page per page. The answer is a
Document built the way the service builds it: `text` holds every line followed by "\\n", each page has
`dimension` (pixels), `layout` and `lines` whose text anchors point into `text` (the first segment without
`start_index`, proto3's 0, as the service sends it), with confidence and normalised bounding polygons.

What it enforces (documented limits; https://cloud.google.com/document-ai/limits): the routing header names
the processor; a processor, or processor version, of the right form that exists (else NOT_FOUND: `processors`
lists processor version names, each also making its processor exist); supported MIME types (PDF,
TIFF, PNG, JPEG, GIF, BMP, WebP) else INVALID_ARGUMENT "Unsupported input file format"; online requests of
at most 15 pages (the service's message) and 40 MB; batch files of at most 500 pages. `fail_next(code)`
injects a status for the next requests.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import threading
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.cloud import documentai_v1 as docai
from google.longrunning import operations_pb2
from google.protobuf import any_pb2

from fakes.grpc_server import serve_unary

SUPPORTED = {"application/pdf", "image/tiff", "image/png", "image/jpeg", "image/gif", "image/bmp", "image/webp"}
ONLINE_MAX_PAGES = 15
ONLINE_MAX_BYTES = 40 * 1024 * 1024
BATCH_MAX_PAGES = 500
SERVICE = "google.cloud.documentai.v1.DocumentProcessorService"

# one line on a page: (text, confidence, (x0, y0, x1, y1) as fractions of the page)
FakeLine = tuple[str, float, tuple[float, float, float, float]]


class _Pb:
    """serialize/deserialize for a raw protobuf class (serve_unary expects proto-plus's names)."""

    def __init__(self, cls: Any) -> None:
        self.deserialize = cls.FromString
        self.serialize = lambda message: message.SerializeToString()


def page_count(content: bytes, mime_type: str) -> int:
    if mime_type == "application/pdf":
        from pypdf import PdfReader

        return len(PdfReader(io.BytesIO(content)).pages)
    if mime_type == "image/tiff":
        from PIL import Image

        return int(getattr(Image.open(io.BytesIO(content)), "n_frames", 1))
    return 1


def build_document(pages: list[list[FakeLine]], width: int = 1240, height: int = 1754) -> Any:
    """A Document as the OCR processor returns it for pages holding `pages`' lines."""
    text = ""
    out_pages = []
    for number, lines in enumerate(pages, 1):
        page_start = len(text)
        out_lines = []
        for line_text, confidence, (x0, y0, x1, y1) in lines:
            start = len(text)
            text += line_text + "\n"
            segment = docai.Document.TextAnchor.TextSegment(end_index=len(text))
            if start:
                segment.start_index = start
            poly = docai.BoundingPoly(
                normalized_vertices=[
                    docai.NormalizedVertex(x=x0, y=y0), docai.NormalizedVertex(x=x1, y=y0),
                    docai.NormalizedVertex(x=x1, y=y1), docai.NormalizedVertex(x=x0, y=y1),
                ]
            )  # fmt: skip
            layout = docai.Document.Page.Layout(
                text_anchor=docai.Document.TextAnchor(text_segments=[segment]), confidence=confidence,
                bounding_poly=poly, orientation=docai.Document.Page.Layout.Orientation.PAGE_UP,
            )  # fmt: skip
            out_lines.append(docai.Document.Page.Line(layout=layout))
        page_segment = docai.Document.TextAnchor.TextSegment(start_index=page_start, end_index=len(text))
        out_pages.append(
            docai.Document.Page(
                page_number=number,
                dimension=docai.Document.Page.Dimension(width=width, height=height, unit="pixels"),
                layout=docai.Document.Page.Layout(
                    text_anchor=docai.Document.TextAnchor(text_segments=[page_segment]), confidence=0.95
                ),
                lines=out_lines,
            )
        )
    return docai.Document(text=text, pages=out_pages, mime_type="application/json")


@dataclass
class DocumentAiFake:
    """Start with `start()` ("127.0.0.1:PORT"), stop with `stop()`; `processors` lists the names that exist
    (processors, or processor versions: `…/processors/ID/processorVersions/V`)."""

    processors: set[str] = field(default_factory=set)
    scripts: dict[str, list[list[FakeLine]]] = field(default_factory=dict)  # sha256 of the bytes → pages
    default: list[list[FakeLine]] | None = None  # what an unscripted file holds (bytes made by the caller)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, processor)
    storage: Any = None  # a google-cloud-storage Client on the emulator, for batch jobs
    _failures: deque[grpc.StatusCode] = field(default_factory=deque)
    _operations: dict[str, tuple[Any, Any, int]] = field(default_factory=dict)  # name → (metadata, response, looks)
    _ids: Any = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: grpc.Server | None = None
    address: str = ""

    def script(self, content: bytes, pages: list[list[FakeLine]]) -> None:
        self.scripts[hashlib.sha256(content).hexdigest()] = pages

    def fail_next(self, code: grpc.StatusCode, times: int = 1) -> None:
        with self._lock:
            self._failures.extend([code] * times)

    def start(self) -> str:
        handlers = {
            SERVICE: {
                "ProcessDocument": (self._process, docai.ProcessRequest, docai.ProcessResponse),
                "BatchProcessDocuments": (self._batch, docai.BatchProcessRequest, _Pb(operations_pb2.Operation)),
            },
            "google.longrunning.Operations": {
                "GetOperation": (
                    self._get_operation,
                    _Pb(operations_pb2.GetOperationRequest),
                    _Pb(operations_pb2.Operation),
                ),
            },
        }
        self._server, self.address = serve_unary(
            handlers, thread_name_prefix="docai-fake", options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        )
        return self.address

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None)
            self._server = None

    # --- handlers ----------------------------------------------------------------------------------------

    def _common(self, method: str, name: str, context: grpc.ServicerContext) -> None:
        with self._lock:
            self.calls.append((method, name))
            failure = self._failures.popleft() if self._failures else None
        if failure is not None:
            context.abort(failure, f"injected {failure.name}")
        params = urllib.parse.parse_qs(str(dict(context.invocation_metadata()).get("x-goog-request-params", "")))
        if params.get("name", [None])[0] != name:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "routing header does not name the processor")
        processor = name.split("/processorVersions/", 1)[0]
        known = {listed.split("/processorVersions/", 1)[0] for listed in self.processors}
        if processor not in known:
            context.abort(grpc.StatusCode.NOT_FOUND, f"Processor {processor} not found")
        if name != processor and name not in self.processors:  # a version that does not exist, or no longer
            context.abort(grpc.StatusCode.NOT_FOUND, f"Processor version {name} not found")

    def _read(self, content: bytes, mime_type: str, max_pages: int, context: grpc.ServicerContext) -> Any:
        if mime_type not in SUPPORTED:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Unsupported input file format: {mime_type}")
        try:
            pages = page_count(content, mime_type)
        except Exception as exc:  # noqa: BLE001 - any unreadable file is the client's error, as on the service
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"Unable to process the document: {exc}")
        if pages > max_pages:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Document pages in non-imageless mode exceed the limit: {max_pages} got {pages}. "
                "Try using imageless mode to increase the limit to 30.",
            )
        scripted = self.scripts.get(hashlib.sha256(content).hexdigest())
        if scripted is None:
            scripted = self.default if self.default is not None else [[] for _ in range(pages)]
        return build_document(scripted)

    def _process(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._common("ProcessDocument", request.name, context)
        raw = request.raw_document
        if len(raw.content) > ONLINE_MAX_BYTES:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Document size exceeds the limit for online requests")
        return docai.ProcessResponse(document=self._read(raw.content, raw.mime_type, ONLINE_MAX_PAGES, context))

    def _batch(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._common("BatchProcessDocuments", request.name, context)
        output = request.document_output_config.gcs_output_config.gcs_uri.rstrip("/")
        operation_id = next(self._ids)
        statuses = []
        for index, doc in enumerate(request.input_documents.gcs_documents.documents):
            bucket, _, name = doc.gcs_uri.removeprefix("gs://").partition("/")
            content = self.storage.bucket(bucket).blob(name).download_as_bytes()
            document = self._read(content, doc.mime_type, BATCH_MAX_PAGES, context)
            destination = f"{output}/{operation_id}/{index}"
            out_bucket, _, out_prefix = destination.removeprefix("gs://").partition("/")
            # two shards, as the service splits long documents: pages after the first go to shard 1
            shards = (
                [(0, document.pages[:1]), (1, document.pages[1:])] if len(document.pages) > 1 else [(0, document.pages)]
            )
            for shard_index, pages in shards:
                shard = docai.Document(
                    text=document.text, pages=pages,
                    shard_info=docai.Document.ShardInfo(shard_index=shard_index, shard_count=len(shards)),
                )  # fmt: skip
                blob = self.storage.bucket(out_bucket).blob(
                    f"{out_prefix}/{name.rsplit('/', 1)[-1]}-{shard_index}.json"
                )
                blob.upload_from_string(docai.Document.to_json(shard), content_type="application/json")
            statuses.append(
                docai.BatchProcessMetadata.IndividualProcessStatus(
                    input_gcs_source=doc.gcs_uri, output_gcs_destination=destination
                )
            )
        metadata = docai.BatchProcessMetadata(
            state=docai.BatchProcessMetadata.State.SUCCEEDED, individual_process_statuses=statuses
        )
        name = f"{request.name.split('/processors/')[0]}/operations/{operation_id}"
        with self._lock:
            self._operations[name] = (metadata, docai.BatchProcessResponse(), 0)
        return self._operation(name, done=False)

    def _get_operation(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self._lock:
            self.calls.append(("GetOperation", request.name))
            if request.name not in self._operations:
                context.abort(grpc.StatusCode.NOT_FOUND, f"Operation {request.name} not found")
            metadata, response, looks = self._operations[request.name]
            self._operations[request.name] = (metadata, response, looks + 1)
        return self._operation(request.name, done=True)

    def _operation(self, name: str, *, done: bool) -> Any:
        metadata, response, _ = self._operations[name]
        op = operations_pb2.Operation(name=name, done=done)
        meta = any_pb2.Any()
        meta.Pack(docai.BatchProcessMetadata.pb(metadata))
        op.metadata.CopyFrom(meta)
        if done:
            result = any_pb2.Any()
            result.Pack(docai.BatchProcessResponse.pb(response))
            op.response.CopyFrom(result)
        return op
