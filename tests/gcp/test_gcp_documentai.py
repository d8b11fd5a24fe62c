"""DocumentAiOcr on the gRPC fake of Document AI (tests/fakes/document_ai.py), through the real gapic client:
online pages, the document mapping, the service's refusals, transient errors, and a batch job through the
Cloud Storage emulator. No Google class is mocked."""

from __future__ import annotations

import io
from collections.abc import Iterator

import grpc
import pytest
from PIL import Image

from fakes import gcp_env
from fakes.document_ai import DocumentAiFake
from regrag.adapters.gcp.clients import Endpoint
from regrag.adapters.gcp.documentai import DocumentAiOcr, pages_from_document
from regrag.domain.errors import InvalidInput, Unavailable
from regrag.domain.ocr import Box
from regrag.ports import OcrEngine
from regrag.text.chunking import split_structure
from regrag.text.normalize import normalize
from regrag.text.parse import parse_document

VERSION = "pretrained-ocr-v2.1-2024-08-07"
PROCESSOR = f"projects/{gcp_env.PROJECT}/locations/eu/processors/ocr123/processorVersions/{VERSION}"
ENGINE = f"documentai:ocr123@{VERSION}"
LINES = [
    ("电力供应与使用条例", 0.99, (0.30, 0.20, 0.70, 0.23)),
    ("第一条为了加强电力供应与使用的管理，保障供电、用电双方", 0.97, (0.18, 0.30, 0.87, 0.32)),
    ("的合法权益，制定本条例。", 0.96, (0.13, 0.34, 0.45, 0.36)),
    ("第二条本条例自发布之日起施行。", 0.93, (0.18, 0.38, 0.60, 0.40)),
    ("— 1 —", 0.90, (0.45, 0.92, 0.55, 0.94)),
]


@pytest.fixture(scope="module")
def docai() -> Iterator[DocumentAiFake]:
    fake = DocumentAiFake(processors={PROCESSOR})
    fake.start()
    yield fake
    fake.stop()


def engine(fake: DocumentAiFake, **kw) -> DocumentAiOcr:
    kw.setdefault("retry_deadline_s", 2.0)
    return DocumentAiOcr(PROCESSOR, "eu", endpoint=Endpoint(fake.address, plaintext=True), timeout_s=5, **kw)


def png(seed: int = 0) -> bytes:
    buf = io.BytesIO()
    Image.new("L", (124, 175), 255 - seed).save(buf, "PNG")
    return buf.getvalue()


def tiff(pages: int) -> bytes:
    frames = [Image.new("L", (124, 175), 250 - i) for i in range(pages)]
    buf = io.BytesIO()
    frames[0].save(buf, "TIFF", save_all=True, append_images=frames[1:])
    return buf.getvalue()


def pdf(pages: int) -> bytes:
    frames = [Image.new("L", (60, 85), 255) for _ in range(pages)]
    buf = io.BytesIO()
    frames[0].save(buf, "PDF", save_all=True, append_images=frames[1:])
    return buf.getvalue()


def test_a_page_image_is_read_online_and_mapped_to_lines_boxes_and_confidences(docai):
    image = png(1)
    docai.script(image, [LINES])
    ocr = engine(docai)
    assert isinstance(ocr, OcrEngine) and ocr.engine_id == ENGINE
    page = ocr.recognize(image)
    assert [ln.text for ln in page.lines] == [text for text, _, _ in LINES]
    box = page.lines[0].box  # normalised vertices are float32 on the wire
    assert (box.x0, box.y0, box.x1, box.y1) == pytest.approx((0.30, 0.20, 0.70, 0.23), abs=1e-6)
    assert [round(ln.confidence, 2) for ln in page.lines] == [0.99, 0.97, 0.96, 0.93, 0.90]
    assert (page.width, page.height, page.engine) == (1240, 1754, ENGINE)
    assert docai.calls[-1] == ("ProcessDocument", PROCESSOR)


def test_document_ai_pages_go_through_the_same_parsing_as_local_ocr(docai):
    docai.default = [LINES]  # the parser sends its own PNG of the page (red ink removed), not these bytes
    try:
        parsed = parse_document("scan.png", png(2), ocr=engine(docai).recognize)
    finally:
        docai.default = None
    assert parsed.text.split("\n") == [
        "电力供应与使用条例",
        "第一条 为了加强电力供应与使用的管理，保障供电、用电双方的合法权益，制定本条例。",
        "第二条 本条例自发布之日起施行。",
        "",
    ]
    assert [s.label for s in split_structure(normalize(parsed.text)).segments] == ["第一条", "第二条"]
    assert parsed.ocr_engine == ENGINE and parsed.pages[0].ocr


def test_a_multi_page_pdf_online(docai):
    data = pdf(3)
    docai.script(data, [LINES[:2], [LINES[2]], [LINES[3]]])
    pages = engine(docai).process(data, "application/pdf", pages=3)
    assert [[ln.text for ln in p.lines] for p in pages] == [
        [LINES[0][0], LINES[1][0]], [LINES[2][0]], [LINES[3][0]]
    ]  # fmt: skip


def test_an_unsupported_type_and_too_many_pages_are_permanent(docai):
    with pytest.raises(InvalidInput, match="Unsupported input file format"):
        engine(docai).recognize(b"GIF89a-not-really")
    data = pdf(16)
    with pytest.raises(InvalidInput, match="exceed the limit: 15 got 16"):
        engine(docai).process(data, "application/pdf", pages=15)  # a caller that miscounted: the service refuses
    with pytest.raises(InvalidInput, match="batch processing needs"):
        engine(docai).process(data, "application/pdf", pages=16)
    with pytest.raises(InvalidInput, match="at most 500 pages"):
        engine(docai).process(data, "application/pdf", pages=501, gcs_uri="gs://b/x.pdf")


def test_unavailable_is_retried_then_transient(docai):
    image = png(3)
    docai.script(image, [LINES[:1]])
    docai.fail_next(grpc.StatusCode.UNAVAILABLE)
    assert engine(docai).recognize(image).lines[0].text == LINES[0][0]
    docai.fail_next(grpc.StatusCode.UNAVAILABLE, times=50)
    with pytest.raises(Unavailable, match="Document AI"):
        engine(docai, retry_deadline_s=0.5).recognize(image)
    docai._failures.clear()


def test_a_wrong_processor_is_refused_before_any_call():
    with pytest.raises(InvalidInput, match="not in location"):
        DocumentAiOcr(PROCESSOR, "us")
    with pytest.raises(InvalidInput, match="not projects/P"):
        DocumentAiOcr("ocr123", "eu")
    # without a version the default version would read, and nothing would say which: refused
    with pytest.raises(InvalidInput, match="processorVersions/V"):
        DocumentAiOcr(PROCESSOR.split("/processorVersions/")[0], "eu")
    # a single region of the regions page's OCR table is accepted (its endpoint is <region>-documentai…)
    single = DocumentAiOcr("projects/p/locations/asia-southeast1/processors/x/processorVersions/v1", "asia-southeast1")
    assert single.endpoint.host == "asia-southeast1-documentai.googleapis.com"
    with pytest.raises(InvalidInput, match="not 'us-central1'"):
        DocumentAiOcr("projects/p/locations/us-central1/processors/x/processorVersions/v1", "us-central1")


def test_every_page_records_the_processor_version_that_read_it(docai):
    docai.default = [LINES]
    try:
        parsed = parse_document("scan.tif", tiff(2), ocr=engine(docai).recognize)
    finally:
        docai.default = None
    assert [(p.page, p.ocr, p.engine) for p in parsed.pages] == [(1, True, ENGINE), (2, True, ENGINE)]
    assert parsed.pages[0].to_dict()["engine"] == ENGINE  # what the document store keeps


def test_a_version_that_no_longer_exists_is_a_loud_deployment_error_not_a_silent_other_model(docai):
    from google.api_core.exceptions import NotFound

    retired = PROCESSOR.replace(VERSION, "pretrained-ocr-v1.0-2020-09-23")
    ocr = DocumentAiOcr(retired, "eu", endpoint=Endpoint(docai.address, plaintext=True), timeout_s=5)
    with pytest.raises(NotFound, match=r"Processor version .*pretrained-ocr-v1\.0-2020-09-23 not found"):
        ocr.recognize(png(4))


@pytest.mark.emulator
def test_a_large_file_goes_through_a_batch_job_and_its_shards_come_back_in_order(docai, gcs, bucket):
    docai.storage = gcp_env.storage(gcs)
    data = pdf(20)
    pages = [[(f"第{n}页的正文", 0.9, (0.13, 0.3, 0.8, 0.32))] for n in range(1, 21)]
    docai.script(data, pages)
    docai.storage.bucket(bucket).blob("uploads/big.pdf").upload_from_string(data)
    ocr = engine(docai, batch_output_uri=f"gs://{bucket}/docai-out", poll_interval_s=0.05, project=gcp_env.PROJECT)
    got = ocr.process(data, "application/pdf", pages=20, gcs_uri=f"gs://{bucket}/uploads/big.pdf")
    assert [p.lines[0].text for p in got] == [f"第{n}页的正文" for n in range(1, 21)]
    assert [c[0] for c in docai.calls[-2:]] == ["BatchProcessDocuments", "GetOperation"]


def test_pages_from_document_reads_pixel_vertices_and_paragraphs_when_there_are_no_lines():
    from google.cloud import documentai_v1 as docai

    text = "第一条 内容\n"
    layout = docai.Document.Page.Layout(
        text_anchor=docai.Document.TextAnchor(text_segments=[docai.Document.TextAnchor.TextSegment(end_index=7)]),
        confidence=0.8,
        bounding_poly=docai.BoundingPoly(vertices=[docai.Vertex(x=100, y=200), docai.Vertex(x=600, y=240)]),
    )
    page = docai.Document.Page(
        page_number=1,
        dimension=docai.Document.Page.Dimension(width=1000, height=2000, unit="pixels"),
        paragraphs=[docai.Document.Page.Paragraph(layout=layout)],
    )
    (got,) = pages_from_document(docai.Document(text=text, pages=[page]), "documentai:x")
    assert got.lines[0].text == "第一条 内容" and got.lines[0].box == Box(0.1, 0.1, 0.6, 0.12)


def test_wiring_builds_document_ai_from_the_settings_and_ingest_stores_its_pages(docai):
    """REGRAG_OCR=documentai (the GCP default once a processor is named) → DocumentAiOcr on the processor's
    endpoint; ingest sends it each scanned page and stores the page map, confidences and engine it read."""
    from regrag.config import Settings
    from regrag.domain.results import Candidate
    from regrag.ingest.ingest import OcrOptions, build_document
    from regrag.ports import Blob
    from regrag.query.citations import citation_for
    from regrag.wiring import models

    settings = Settings.from_env(
        {
            "REGRAG_OCR": "documentai",
            "REGRAG_DOCUMENTAI_PROCESSOR": PROCESSOR,
            "REGRAG_DOCUMENTAI_LOCATION": "eu",
            "REGRAG_DOCUMENTAI_EMULATOR_HOST": docai.address,
            "REGRAG_DOCUMENTAI_TIMEOUT_S": "5",
        }
    )
    ocr = models.build_ocr(settings)
    assert isinstance(ocr, DocumentAiOcr) and ocr.engine_id == ENGINE and ocr.timeout_s == 5
    before = len(docai.calls)
    docai.default = [LINES]
    try:
        doc = build_document(
            "docs/scan.pdf", Blob("docs/scan.pdf", pdf(1), 3), None, 800, ocr=OcrOptions(ocr, low_confidence=0.97)
        )
    finally:
        docai.default = None
    assert docai.calls[before:] == [("ProcessDocument", PROCESSOR)]  # one online request per scanned page
    meta = doc.meta
    assert meta.ocr_engine == ENGINE and [(p.page, p.ocr) for p in meta.pages] == [(1, True)]
    assert meta.pages[0].confidence == pytest.approx(0.9625, abs=1e-3)  # the folio (0.90) is not text
    assert meta.low_confidence_pages == (1,)
    box = meta.pages[0].lines[0].box
    assert (box.x0, box.y0) == pytest.approx((0.30, 0.20), abs=1e-3)
    second = next(c for c in doc.chunks if c.article == "第二条")
    cite = citation_for(Candidate(second, 1.0), "本条例自发布之日起施行")
    assert cite.pages == (1,) and cite.low_confidence and "第1页" in (cite.note or "")
