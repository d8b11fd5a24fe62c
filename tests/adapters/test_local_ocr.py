"""RapidOCR with the models from its wheel on the committed scans (tests/fixtures/ocr, made by
bench/make_ocr_fixtures.py): the text, the article labels and the page map of real OCR output."""

from __future__ import annotations

import json
import socket

import pytest

from regrag.adapters.local.ocr import RapidOcrEngine
from regrag.domain.ocr import pages_for_span
from regrag.ports import OcrEngine
from regrag.text.chunking import split_structure
from regrag.text.normalize import normalize, strip_whitespace
from regrag.text.parse import parse_document

from conftest import FIXTURES, FORMATS, sample_text

pytestmark = pytest.mark.slow

OCR = FIXTURES / "ocr"
MANIFEST = {row["file"]: row for row in map(json.loads, (OCR / "manifest.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def engine():
    return RapidOcrEngine()


def labels(text: str) -> list[str]:
    return [s.label for s in split_structure(normalize(text)).segments if s.kind == "article"]


def similarity(a: str, b: str) -> float:
    """1 − normalised edit distance, whitespace ignored."""
    import difflib

    a, b = strip_whitespace(a), strip_whitespace(b)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def test_the_models_load_from_the_wheel_with_the_network_cut(monkeypatch):
    def refuse(self, address):
        raise AssertionError(f"OCR tried to connect to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: refuse(None, a))
    fresh = RapidOcrEngine()
    assert isinstance(fresh, OcrEngine)
    page = fresh.recognize((OCR / "nat-reg-0088-p2.png").read_bytes())
    assert page.engine.startswith("rapidocr-3.10.0/") and page.width == 1240 and page.height == 1754
    assert len(page.lines) > 15 and all(0 <= ln.box.x0 < ln.box.x1 <= 1 for ln in page.lines)


def test_a_scanned_page_yields_its_articles_with_the_right_labels(engine):
    parsed = parse_document("nat-reg-0088-p2.png", (OCR / "nat-reg-0088-p2.png").read_bytes(), ocr=engine.recognize)
    # page 2 alone: the chunker takes its first line (第四条) for the title, as it would any first line
    structure = split_structure(normalize(parsed.text))
    assert structure.title.startswith("第四条 电网经营企业依法负责本供区内的电力供应与使用")
    assert [s.label for s in structure.segments] == ["第五条", "第六条", "第七条", "第八条", "第九条"]
    assert structure.segments[-1].heading_path == ("第二章 供电营业区",)
    source = sample_text("nat-reg-0088")
    article = source[source.index("第四条") : source.index("第五条")]
    assert similarity(parsed.text[: parsed.text.index("第五条")], article) > 0.97
    (page,) = parsed.pages
    assert page.page == 1 and page.ocr and page.confidence > 0.9 and page.end == len(parsed.text) - 1
    quote = "供电营业区的划分和管理办法"
    start = parsed.text.index(quote)
    assert pages_for_span(parsed.pages, start, start + len(quote)) == [1]


def test_a_page_scanned_4_degrees_askew_and_noisy_keeps_every_article_label(engine):
    """电力设施保护条例 page 1 turned 4° on the glass, with noise and JPEG q45: before deskew and the label checks,
    第三条 was read but glued to 第二条 (its text cited under 第二条)."""
    data = (OCR / "nat-reg-0091-p1-rotated.jpg").read_bytes()
    parsed = parse_document("nat-reg-0091-p1-rotated.jpg", data, ocr=engine.recognize)
    assert labels(parsed.text) == ["第一条", "第二条", "第三条", "第四条", "第五条", "第六条"]
    source = sample_text("nat-reg-0091")
    for first, last in (("第二条", "第三条"), ("第三条", "第四条")):
        article = source[source.index(first) : source.index(last)]
        read = parsed.text[parsed.text.index(first) : parsed.text.index(last)]
        assert similarity(read, article) > 0.95, (first, read)


def test_the_red_header_the_document_number_and_the_folio_are_not_text(engine):
    parsed = parse_document("nat-reg-0088-p1.jpg", (OCR / "nat-reg-0088-p1.jpg").read_bytes(), ocr=engine.recognize)
    assert parsed.title_hint == "电力供应与使用条例"
    for noise in ("国务院文件", "16号", "—", "1—"):
        assert noise not in parsed.text
    structure = split_structure(normalize(parsed.text))
    assert structure.title == "电力供应与使用条例"
    assert [s.label for s in structure.segments if s.kind == "article"] == ["第一条", "第二条", "第三条"]
    assert structure.segments[0].heading_path == ("第一章 总则",)


def test_a_mixed_pdf_reads_the_text_layer_and_ocrs_the_scanned_page(engine):
    data = (OCR / "nat-reg-0088-mixed.pdf").read_bytes()
    assert MANIFEST["nat-reg-0088-mixed.pdf"]["kind"] == "mixed"
    parsed = parse_document("nat-reg-0088-mixed.pdf", data, ocr=engine.recognize)
    assert [(p.page, p.ocr) for p in parsed.pages] == [(1, False), (2, True)]
    assert parsed.pages[0].lines == () and parsed.pages[1].confidence > 0.9
    # the scanned page is page 2 of the text PDF: OCR must give back (nearly) what its text layer holds
    original = parse_document("nat-reg-0088.pdf", (FORMATS / "nat-reg-0088.pdf").read_bytes())
    page2 = original.text[original.pages[1].start : original.pages[1].end]
    ocr_page2 = parsed.text[parsed.pages[1].start : parsed.pages[1].end]
    assert similarity(ocr_page2, page2) > 0.97
    got = labels(parsed.text)
    assert got == labels(original.text[: original.pages[1].end])
    text = parsed.text
    first, fifth = text.index("第一条"), text.index("第十九条")
    assert pages_for_span(parsed.pages, first, first + 10) == [1]
    assert pages_for_span(parsed.pages, fifth, fifth + 10) == [2]


def test_engine_id_names_the_model(engine):
    assert engine.engine_id.startswith("rapidocr-") and "PP-OCRv6" in engine.engine_id
