"""Scans through the ingest stage with a scripted engine (tests/fakes/ocr_engine.py): the page map, per-page
confidence and engine stored with the document, each chunk's pages, citations with the page, `#page=N` and a
low-confidence note, the document view, and every OCR limit as a recorded permanent failure while the rest of
the batch goes on. The real engines: tests/adapters/test_local_ocr.py, tests/e2e/test_ocr_e2e.py (RapidOCR)
and tests/gcp/test_gcp_documentai.py (Document AI's wire fake)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from PIL import Image

from fakes.ocr_engine import ScriptedOcr
from regrag.config import ConfigError, Settings
from regrag.domain.models import DocumentMeta
from regrag.domain.results import Bullet, Candidate
from regrag.entrypoints import handlers
from regrag.ingest.ingest import OcrOptions, build_document
from regrag.ports import Blob
from regrag.query.citations import citation_for
from regrag.services import Services
from regrag.text.images import OcrLimits
from regrag.views import documents
from regrag.wiring import build_services, models

from conftest import make_settings

PAGE_1 = [
    ("电力供应与使用条例", 0.99),
    ("第一章 总则", 0.98),
    ("第一条 为了加强电力供应与使用的管理，保障供电、用电双方的合法权益，制定本条例。", 0.97),
    ("第二条 在中华人民共和国境内，电力供应企业和电力使用者，必须遵守本条例。", 0.96),
]
PAGE_2 = [
    ("第三条 电力管理部门负责电力供应与使用的监督管理工作。", 0.72),
    ("第四条 供电企业应当按照国家核准的电价和用电计量装置的记录，向用户计收电费。", 0.70),
]
URL = "https://www.example.gov.cn/zcfg/dlgyysytl.pdf"


def scan_pdf(pages: int) -> bytes:
    """An image-only PDF: `pages` grey A4-shaped pages with a dark bar (something to OCR, no text layer)."""
    frames = []
    for _ in range(pages):
        img = Image.new("L", (124, 175), 255)
        img.paste(0, (20, 30, 100, 34))
        frames.append(img)
    buf = io.BytesIO()
    frames[0].save(buf, "PDF", save_all=True, append_images=frames[1:], resolution=15)
    return buf.getvalue()


def scan_png() -> bytes:
    buf = io.BytesIO()
    Image.new("L", (124, 175), 255).save(buf, "PNG")
    return buf.getvalue()


def sidecar(**values: Any) -> Blob:
    record = {"doc_id": "scan-0001", "effective_date": "1996-09-01", "url": URL, **values}
    return Blob("scan-0001.pdf.meta.json", json.dumps(record, ensure_ascii=False).encode("utf-8"), 1)


def build(data: bytes, engine: ScriptedOcr | None, name: str = "scan-0001.pdf", **options: Any) -> Any:
    return build_document(name, Blob(name, data, 7), sidecar(), 800, ocr=OcrOptions(engine, **options))


def test_a_scanned_pdf_is_stored_with_its_pages_confidence_and_engine():
    engine = ScriptedOcr([PAGE_1, PAGE_2])
    doc = build(scan_pdf(2), engine)
    meta = doc.meta
    # the two pages, then page 2's two lines read again (each below 0.8); the script has no better reading
    assert len(engine.images) == 4 and all(i.startswith(b"\x89PNG") for i in engine.images)
    assert [(p.page, p.ocr) for p in meta.pages] == [(1, True), (2, True)] and meta.ocr_engine == "scripted-ocr/1"
    assert [p.engine for p in meta.pages] == ["scripted-ocr/1"] * 2  # each page keeps the engine that read it
    assert meta.pages[0].confidence == pytest.approx(0.975, abs=1e-3)
    assert meta.low_confidence_pages == (2,)  # page 2's mean confidence 0.71 < 0.9
    assert meta.title == "电力供应与使用条例" and meta.format == "pdf"
    by_article = {c.article: c for c in doc.chunks}
    assert by_article["第一条"].pages == (1,) and by_article["第四条"].pages == (2,)
    # every chunk is a verbatim slice of the stored text, and its pages come from its span
    for c in doc.chunks:
        assert doc.text[c.start : c.end] == c.text
    # the page map survives the stores' JSON round trip (compact boxes)
    again = DocumentMeta.from_dict(json.loads(json.dumps(meta.to_dict(), ensure_ascii=False)))
    assert again == meta and again.pages[1].lines[0].box.to_permille() == meta.pages[1].lines[0].box.to_permille()


def test_a_quote_cites_its_page_with_page_url_and_a_low_confidence_note():
    doc = build(scan_pdf(2), ScriptedOcr([PAGE_1, PAGE_2]))
    chunk = next(c for c in doc.chunks if c.article == "第四条")
    span = "供电企业应当按照国家核准的电价和用电计量装置的记录"
    cite = citation_for(Candidate(chunk, 1.0), span)
    assert cite.pages == (2,) and cite.url == URL + "#page=2"
    assert cite.low_confidence and "第2页（置信度0.71）" in (cite.note or "")
    bullet = Bullet(span, cite, chunk.id)
    assert bullet.render().endswith("〔《电力供应与使用条例》第四条，生效：1996-09-01〕（第2页）⚠")
    assert bullet.to_dict()["citation"]["pages"] == [2]
    first = next(c for c in doc.chunks if c.article == "第一条")
    sure = citation_for(Candidate(first, 1.0), "保障供电、用电双方的合法权益")
    assert sure.pages == (1,) and sure.url == URL + "#page=1" and not sure.low_confidence and sure.note is None


def test_without_pages_a_citation_is_as_before():
    doc = build_document(
        "x.md", Blob("x.md", "# 某条例\n\n第一条 测试条文的内容。\n".encode(), 1), sidecar(doc_id="x"), 800
    )
    cite = citation_for(Candidate(doc.chunks[0], 1.0), "测试条文的内容")
    assert cite.pages == () and cite.url == URL and not cite.low_confidence and cite.note is None
    assert doc.meta.pages == () and doc.meta.ocr_engine is None
    assert Bullet("测试", cite, "c").render() == " • 测试〔《某条例》第一条，生效：1996-09-01〕"


def test_an_image_upload_is_ocrd_and_its_url_keeps_no_page_fragment():
    doc = build(scan_png(), ScriptedOcr([PAGE_1]), name="scan-0001.png")
    assert doc.meta.format == "png" and [p.page for p in doc.meta.pages] == [1] and doc.meta.low_confidence_pages == ()
    cite = citation_for(Candidate(doc.chunks[0], 1.0))
    assert cite.pages == (1,) and cite.url == URL  # #page=N is for PDFs


@pytest.mark.parametrize(
    ("limits", "words"),
    [
        (OcrLimits(max_pages=1), "2 pages; the limit is 1 pages (max_pages)"),
        (OcrLimits(max_image_pixels=10_000), "the limit is 10,000 (max_image_pixels)"),
        (OcrLimits(page_timeout_s=0.05), "took longer than 0.05 s (page_timeout_s)"),
    ],
)
def test_each_limit_refuses_the_document_naming_the_limit(limits, words):
    from regrag.domain.errors import UnsupportedDocument

    engine = ScriptedOcr([PAGE_1, PAGE_2], delay_s=0.5 if limits.page_timeout_s < 1 else 0.0)
    data = scan_pdf(2) if limits.max_image_pixels > 10_000 else _big_png()
    with pytest.raises(UnsupportedDocument, match=words.replace("(", r"\(").replace(")", r"\)")):
        build(data, engine, name="scan.png" if data.startswith(b"\x89PNG") else "scan.pdf", limits=limits)


def _big_png() -> bytes:
    buf = io.BytesIO()
    Image.new("L", (200, 200), 255).save(buf, "PNG")  # 40,000 pixels
    return buf.getvalue()


def test_without_an_engine_a_scan_is_refused_as_before():
    from regrag.domain.errors import UnsupportedDocument

    with pytest.raises(UnsupportedDocument, match="no text layer"):
        build(scan_pdf(1), None)


def services_with(tmp_path, engine: ScriptedOcr | None, **settings: Any) -> Services:
    from dataclasses import replace

    base = build_services(make_settings(tmp_path, **settings))
    return replace(base, ocr=engine)


def test_a_limit_is_a_recorded_permanent_failure_and_the_batch_goes_on(tmp_path):
    services = services_with(tmp_path, ScriptedOcr([PAGE_1, PAGE_2, PAGE_1]), ocr_max_pages=1)
    try:
        services.blobs.write("docs/too-long.pdf", scan_pdf(2))
        services.blobs.write("docs/scan-0002.png", scan_png())
        assert handlers.ingest_name(services, "docs/too-long.pdf") is None  # acknowledged, not raised
        result = handlers.ingest_name(services, "docs/scan-0002.png")
        assert result is not None and result.status == "chunked" and result.ocr_pages == (1,)
        (failure,) = services.failures.list()
        assert failure["stage"] == "ingest" and failure["key"] == "docs/too-long.pdf"
        assert failure["reason"] == "unsupported_document" and "(max_pages)" in failure["error"]
        assert services.store.get_document("scan-0002") is not None
    finally:
        services.close()


def test_the_document_view_lists_pages_engine_confidence_and_low_confidence_pages(tmp_path):
    services = services_with(tmp_path, ScriptedOcr([PAGE_1, PAGE_2]))
    try:
        services.blobs.write("docs/scan-0001.pdf.meta.json", sidecar().data)
        services.blobs.write("docs/scan-0001.pdf", scan_pdf(2))
        result = handlers.ingest_name(services, "docs/scan-0001.pdf")
        assert result is not None and result.low_confidence_pages == (2,) and result.ocr_engine == "scripted-ocr/1"
        view = documents.document_view(services.store, "scan-0001")
        pages = view["pages"]
        assert pages["count"] == 2 and pages["ocr_pages"] == [1, 2] and pages["low_confidence_pages"] == [2]
        assert pages["ocr_engine"] == "scripted-ocr/1" and pages["confidence"]["2"] == pytest.approx(0.71)
        assert pages["engines"] == {"1": "scripted-ocr/1", "2": "scripted-ocr/1"}
        assert pages["spans"][1]["lines"] and "pages" not in view["metadata"]
        assert {a["article"]: a["pages"] for a in view["anchors"]}["第四条"] == [2]
        # the stored chunks carry the stored page map (the local store keeps it once per document)
        chunk = next(c for c in services.store.document_chunks("scan-0001") if c.article == "第三条")
        assert chunk.pages == (2,) and chunk.meta.low_confidence_pages == (2,)
    finally:
        services.close()


def test_settings_pick_the_engine_per_mode_and_parse_the_limits():
    local = Settings.from_env({})
    assert local.ocr_engine == "local" and local.ocr_low_confidence == 0.9 and local.ocr_max_pages == 500
    assert Settings.from_env({"REGRAG_OCR": "off"}).ocr_engine == "off"
    s = Settings.from_env(
        {"REGRAG_OCR_MAX_PAGES": "20", "REGRAG_OCR_MAX_IMAGE_PIXELS": "1000000", "REGRAG_OCR_PAGE_TIMEOUT_S": "5",
         "REGRAG_OCR_LOW_CONFIDENCE": "0.8"}
    )  # fmt: skip
    assert (s.ocr_max_pages, s.ocr_max_image_pixels, s.ocr_page_timeout_s, s.ocr_low_confidence) == (20, 10**6, 5, 0.8)
    gcp = {
        "REGRAG_MODE": "gcp",
        "REGRAG_GCP_PROJECT": "p",
        "REGRAG_GCP_REGION": "europe-west4",
        "REGRAG_BUCKET": "b",
        "REGRAG_STATE_BUCKET": "s",
        "REGRAG_VERTEX_INDEX": "projects/p/locations/l/indexes/1",
        "REGRAG_VERTEX_INDEX_ENDPOINT": "projects/123/locations/l/indexEndpoints/2",
        "REGRAG_VERTEX_DEPLOYED_INDEX_ID": "d",
        "REGRAG_VERTEX_PUBLIC_HOST": "h",
    }
    assert Settings.from_env(gcp).ocr_engine == "off"  # no processor named: scans are refused, not sent anywhere
    processor = "projects/p/locations/eu/processors/ocr1/processorVersions/pretrained-ocr-v2.1-2024-08-07"
    named = {**gcp, "REGRAG_DOCUMENTAI_PROCESSOR": processor, "REGRAG_DOCUMENTAI_LOCATION": "eu"}
    assert Settings.from_env(named).ocr_engine == "documentai"
    single = "projects/p/locations/asia-southeast1/processors/ocr1/processorVersions/pretrained-ocr-v2.1-2024-08-07"
    regional = {**gcp, "REGRAG_DOCUMENTAI_PROCESSOR": single, "REGRAG_DOCUMENTAI_LOCATION": "asia-southeast1"}
    assert Settings.from_env(regional).documentai_location == "asia-southeast1"  # a single region Google offers
    assert Settings.from_env({**named, "REGRAG_OCR": "local"}).ocr_engine == "local"


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"REGRAG_OCR": "tesseract"}, "REGRAG_OCR='tesseract': expected one of local, documentai, off"),
        ({"REGRAG_OCR": "documentai"}, "REGRAG_OCR=documentai needs REGRAG_DOCUMENTAI_PROCESSOR"),
        (
            {"REGRAG_DOCUMENTAI_PROCESSOR": "projects/p/locations/eu/processors/x/processorVersions/v"},
            "in location 'eu'",
        ),
        ({"REGRAG_DOCUMENTAI_PROCESSOR": "ocr1"}, "expected projects/P/locations/L/processors/ID/processorVersions/V"),
        # the version each OCR'd page records; the bare processor would run whatever its default version is
        ({"REGRAG_DOCUMENTAI_PROCESSOR": "projects/p/locations/us/processors/x"}, "/processorVersions/V (the version"),
        # the locations Document AI offers OCR in (regions page), not just us and eu
        ({"REGRAG_DOCUMENTAI_LOCATION": "us-central1"}, "expected one of us, eu, asia-south1, asia-southeast1"),
        ({"REGRAG_OCR_LOW_CONFIDENCE": "1.5"}, "must be ≤ 1.0"),
        ({"REGRAG_OCR_MAX_PAGES": "0"}, "must be ≥ 1"),
    ],
)
def test_bad_ocr_settings_are_named(env, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        Settings.from_env(env)


def test_wiring_builds_the_engine_lazily_and_none_when_off(tmp_path):
    from regrag.adapters.local.ocr import RapidOcrEngine

    engine = models.build_ocr(Settings.from_env({}))
    assert isinstance(engine, RapidOcrEngine) and engine._engine is None  # no model loaded before a scan
    assert models.build_ocr(Settings.from_env({"REGRAG_OCR": "off"})) is None
    services = build_services(make_settings(tmp_path, ocr="off"))
    try:
        assert services.ocr is None
    finally:
        services.close()
