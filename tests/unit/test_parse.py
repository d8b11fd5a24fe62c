"""Format detection, encodings and extraction; all 8 format variants yield the Markdown source's articles."""

import json

import pytest

from regrag.text.chunking import split_structure
from regrag.text.normalize import normalize, strip_whitespace
from regrag.text.parse import UnreadableDocument, decode_text, detect_format, parse_document

from conftest import FORMATS, sample_text


def merged_units(text, markdown):
    st = split_structure(normalize(text), markdown=markdown)
    units = {}
    for s in st.segments:
        key = (s.kind, s.label, s.ordinal)
        units[key] = units.get(key, "") + strip_whitespace(text[s.start : s.end])
    return units


VARIANTS = [json.loads(line) for line in (FORMATS / "manifest.jsonl").read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.parametrize("variant", VARIANTS, ids=[v["file"] for v in VARIANTS])
def test_every_format_yields_the_same_articles_as_the_markdown(variant):
    parsed = parse_document(variant["file"], (FORMATS / variant["file"].split("/")[-1]).read_bytes())
    assert parsed.format == variant["format"]
    got = merged_units(parsed.text, parsed.format == "md")
    want = merged_units(sample_text(variant["doc_id"]), True)
    assert got == want
    assert "—" not in parsed.text.split("\n")[0]  # page-number footers removed


def test_html_keeps_the_article_body_and_drops_the_page_chrome():
    parsed = parse_document("gd-0039.html", (FORMATS / "gd-0039.html").read_bytes())
    assert parsed.title_hint == "广东省气候资源保护和开发利用条例"
    for chrome in ("欢迎访问法规文库", "首页", "当前位置", "字号"):
        assert chrome not in parsed.text


def test_gb18030_without_bom_and_crlf():
    data = (FORMATS / "sh-0001.txt").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    text, encoding = decode_text("sh-0001.txt", data)
    assert encoding == "gb18030" and text.startswith("上海市供用电条例")


def test_utf8_bom_and_utf16():
    assert decode_text("a.txt", "\ufeff第一条 内容".encode("utf-8")) == ("第一条 内容", "utf-8-sig")
    assert decode_text("a.txt", "第一条 内容".encode("utf-16"))[0] == "第一条 内容"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("empty.md", b"", "empty file"),
        ("blank.md", b"  \n\n", "empty file"),
        # a PNG is a PNG whatever its name (as for PDF and DOCX); without an OCR engine it cannot be read
        ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "PNG image needs OCR"),
        ("binary.md", b"\x00\x01\x02" + bytes(range(256)), "binary"),
        ("scan.png", "第一条 内容".encode(), "not a PNG"),
        ("law.xlsx", "第一条 内容".encode(), "unsupported file type '.xlsx'"),
        ("noext", "第一条 内容".encode(), "no file extension"),
        ("fake.pdf", "第一条 内容".encode(), "not a PDF"),
        ("broken.pdf", b"%PDF-1.4\n garbage", "PDF"),
        ("broken.docx", b"PK\x03\x04garbage", "ZIP"),
    ],
)
def test_bad_input_has_a_clear_reason(name, data, message):
    with pytest.raises(UnreadableDocument, match=message):
        parse_document(name, data)


def test_format_from_content_beats_the_extension():
    pdf = (FORMATS / "nat-reg-0088.pdf").read_bytes()
    assert detect_format("upload.bin.pdf", pdf) == "pdf"
    assert parse_document("no-extension-but-pdf", pdf).format == "pdf"
