"""A scanned regulation end to end with the real local engine (RapidOCR, models from its wheel): an image-only
PDF rendered from a corpus document (tests/fixtures/ocr: 电力供应与使用条例, pages 1 and 2 as scans) goes through
`regrag ingest`, and a question whose answer is on page 2 is answered with a quote that is in the stored text,
cited with page 2 and `#page=2` on the source URL. Two pages of real OCR: a few seconds."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from regrag.config import Settings
from regrag.entrypoints.cli import main
from regrag.wiring import build_services

from conftest import FIXTURES

pytestmark = pytest.mark.slow

OCR = FIXTURES / "ocr"
URL = "https://www.example.gov.cn/flfg/dlgyysytl-scan.pdf"
QUESTION = "供电营业区的设立、变更由谁审查批准"


def image_only_pdf() -> bytes:
    """Pages 1 and 2 of the committed scans (150 dpi A4) as a PDF without a text layer."""
    pages = [Image.open(OCR / name).convert("L") for name in ("nat-reg-0088-p1.jpg", "nat-reg-0088-p2.png")]
    buf = io.BytesIO()
    pages[0].save(buf, "PDF", save_all=True, append_images=pages[1:], resolution=150)
    return buf.getvalue()


@pytest.fixture(scope="module")
def scanned_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scans")
    (folder / "nat-reg-0088-scan.pdf").write_bytes(image_only_pdf())
    record = {
        "file": "nat-reg-0088-scan.pdf",
        "doc_id": "nat-reg-0088-scan",
        "effective_date": "2019-03-02",
        "url": URL,
    }
    (folder / "manifest.jsonl").write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


def test_a_question_answered_from_a_scanned_pdf_quotes_the_stored_text_and_cites_the_page(
    scanned_folder, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    assert main(["ingest", str(scanned_folder)]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["chunked"] == 1 and summary["failed"] == 0
    ocr = summary["ocr"]
    assert ocr["documents"] == 1 and ocr["pages"] == 2 and ocr["low_confidence"] == {}
    assert ocr["engines"][0].startswith("rapidocr-") and "ocr:" not in err

    assert main(["ask", QUESTION, "--json"]) == 0
    response = json.loads(capsys.readouterr()[0])
    assert not response["abstained"], response["answer_zh"]
    services = build_services(Settings.from_env({"REGRAG_EMBEDDER": "hash", "REGRAG_DATA_DIR": str(tmp_path / "data")}))
    try:
        meta, stored = services.store.get_document("nat-reg-0088-scan")
    finally:
        services.close()
    assert meta.title == "电力供应与使用条例" and [p.ocr for p in meta.pages] == [True, True]
    for bullet in response["bullets"]:
        assert all(p in stored for p in bullet["pieces"])  # verbatim to the stored (OCR'd) text
    ninth = [b for b in response["bullets"] if b["citation"]["article"] == "第九条"]
    assert ninth, [b["citation"]["article"] for b in response["bullets"]]
    cite = ninth[0]["citation"]
    assert "审查批准" in ninth[0]["span"]
    assert cite["pages"] == [2] and cite["url"] == URL + "#page=2" and cite["low_confidence"] is False
    # the span really lies on page 2 of the stored page map
    start = stored.index(ninth[0]["pieces"][-1])
    page2 = meta.pages[1]
    assert page2.start <= start < page2.end
    assert f"{ninth[0]['span']}{cite['marker']}（第2页）" in response["answer_zh"]
