"""The OCR path of the parser without an OCR model: synthetic OcrPages through layout cleaning, paragraph
joining, page provenance and the limits. A canned-page function stands in for the engine at the seam
(`parse_document(..., ocr=...)`); tests/adapters/test_local_ocr.py runs the real model."""

from __future__ import annotations

import io
import struct
import time
import zlib

import pytest
from PIL import Image

from regrag.domain.ocr import (
    Box,
    OcrLine,
    OcrPage,
    PageSpan,
    lines_for_span,
    low_confidence_pages,
    page_url,
    pages_for_span,
)
from regrag.text.chunking import split_structure
from regrag.text.images import OcrLimits
from regrag.text.normalize import normalize
from regrag.text.ocr_text import (
    PlacedLine,
    assemble,
    reading_order,
    remove_noise,
    restore_article_starts,
    restore_label_space,
    tidy_line,
)
from regrag.text.parse import UnreadableDocument, parse_document

from conftest import FORMATS

EM = 0.02  # line height as a fraction of the page
LEFT, RIGHT = 0.13, 0.87


def line(text: str, row: int, *, indent: float = 0.0, right: float | None = None, conf: float = 0.98,
         height: float = EM) -> OcrLine:  # fmt: skip
    """A line on row `row` of a page laid out like a 红头文件 (28 characters between the margins)."""
    y0 = 0.14 + row * 0.034
    x0 = LEFT + indent
    x1 = right if right is not None else min(RIGHT, x0 + len(text) * (RIGHT - LEFT) / 28)
    return OcrLine(text, conf, Box(x0, y0, x1, y0 + height))


def body(text: str, first_row: int, *, per_line: int = 28) -> list[OcrLine]:
    """A paragraph indented by two characters and wrapped at the right margin."""
    out, row, rest, first = [], first_row, text, True
    while rest:
        take = per_line - 2 if first else per_line
        piece, rest = rest[:take], rest[take:]
        out.append(line(piece, row, indent=2 * EM if first else 0.0, right=RIGHT if rest else None))
        row, first = row + 1, False
    return out


def folio(text: str) -> OcrLine:
    return OcrLine(text, 0.95, Box(0.45, 0.91, 0.55, 0.925))


def header(text: str) -> OcrLine:
    return OcrLine(text, 0.97, Box(0.35, 0.05, 0.65, 0.065))


ART1 = "第一条为了加强电力供应与使用的管理，保障供电、用电双方的合法权益，维护供电、用电秩序，制定本条例。"
ART2 = "第二条在中华人民共和国境内，电力供应企业和电力使用者，必须遵守本条例。"
ART3 = "第三条国务院电力管理部门负责全国电力供应与使用的监督管理工作，县级以上地方人民政府电力管理部门负责本行政区域内电力供应与使用的监督管理工作。"  # noqa: E501


def page1() -> OcrPage:
    lines = [
        OcrLine("国务院文件", 0.99, Box(0.3, 0.08, 0.7, 0.12)),  # 红头 banner, large type
        OcrLine("国发〔2016〕16号", 0.99, Box(0.38, 0.15, 0.62, 0.17)),
        OcrLine("电力供应与使用条例", 0.99, Box(0.3, 0.22, 0.7, 0.245)),
        line("第一章总则", 4, indent=0.3),
        *body(ART1, 5),
        *body(ART2, 9),
        folio("— 1 —"),
    ]
    return OcrPage(tuple(lines), 1240, 1754, "canned")


def page2() -> OcrPage:
    lines = [
        header("电力供应与使用条例"),
        *body(ART3, 0),
        OcrLine("国务院", 0.93, Box(0.5, 0.14 + 0.034 + 0.003, 0.6, 0.14 + 0.034 + EM)),  # seal text on a line
        OcrLine("叫", 0.31, Box(0.9, 0.5, 0.92, 0.52)),  # a smudge in the margin
        folio("-2-"),
    ]
    return OcrPage(tuple(lines), 1240, 1754, "canned")


def page3() -> OcrPage:
    lines = [header("电力供应与使用条例"), *body("第四条本条例自1996年9月1日起施行。", 0), folio("第3页")]
    return OcrPage(tuple(lines), 1240, 1754, "canned")


def tiff(pages: int, size: tuple[int, int] = (40, 30)) -> bytes:
    frames = [Image.new("L", size, 255) for _ in range(pages)]
    buf = io.BytesIO()
    frames[0].save(buf, "TIFF", save_all=True, append_images=frames[1:])
    return buf.getvalue()


def canned(*pages: OcrPage):
    """An OCR function that returns `pages` in turn and records what it was given."""
    seen: list[bytes] = []

    def ocr(image: bytes) -> OcrPage:
        seen.append(image)
        return pages[len(seen) - 1]

    ocr.seen = seen  # type: ignore[attr-defined]
    return ocr


# --- layout noise ----------------------------------------------------------------------------------------


def test_page_numbers_running_headers_banner_seal_residue_and_smudges_are_removed():
    pages = [(n, reading_order(p)) for n, p in enumerate((page1(), page2(), page3()), 1)]
    kept = remove_noise(pages)
    texts = [[ln.text for ln in lines] for lines in kept]
    everything = "".join("".join(t) for t in texts)
    for noise in ("国务院文件", "国发〔2016〕16号", "— 1 —", "-2-", "第3页", "叫"):
        assert noise not in everything
    assert "电力供应与使用条例" in texts[0]  # the title on page 1 stays; the running header elsewhere goes
    assert all("电力供应与使用条例" not in t for t in texts[1:])
    assert "国务院" not in texts[1]  # seal text lying on a body line
    assert texts[2] == ["第四条本条例自1996年9月1日起施行。"]


@pytest.mark.parametrize("text", ["— 3 —", "-3-", "- 12 -", "—3一", "第3页", "第 3 页 共 10 页", "3/10", "7"])
def test_folio_forms(text):
    kept = remove_noise([(2, [folio(text), *body(ART2, 0)])])
    assert kept[0][0].text.startswith("第二条")
    assert all(ln.text != text for ln in kept[0])


def test_a_number_inside_the_body_is_not_a_folio_and_a_line_seen_once_is_not_a_header():
    lines = [line("2", 3, indent=0.3), header("关于印发的通知")]
    kept = remove_noise([(2, lines), (3, body(ART2, 0))])
    assert [ln.text for ln in kept[0]] == ["2", "关于印发的通知"]


def test_fragments_of_one_row_are_merged_with_a_space_at_the_gap():
    row = [
        OcrLine("第一章", 0.99, Box(0.40, 0.30, 0.48, 0.32)),
        OcrLine("总则", 0.97, Box(0.50, 0.301, 0.55, 0.321)),
    ]
    merged = reading_order(OcrPage(tuple(reversed(row))))
    assert [m.text for m in merged] == ["第一章 总则"]
    assert merged[0].box == Box(0.40, 0.30, 0.55, 0.321)


@pytest.mark.parametrize(
    ("raw", "fixed"),
    [
        ("第一条为了加强管理。", "第一条 为了加强管理。"),
        ("第十二条之一供电企业应当", "第十二条之一 供电企业应当"),
        # an article 之一 in a long sentence is still an article, not a heading (刑法 第十七条之一)
        (
            "第十七条之一已满七十五周岁的人故意犯罪的，可以从轻处罚。",
            "第十七条之一 已满七十五周岁的人故意犯罪的，可以从轻处罚。",
        ),
        ("第一条 已有空格", "第一条 已有空格"),
        ("第一章总则", "第一章 总则"),
        ("第一章规定的情形，依照本条例处理。", "第一章规定的情形，依照本条例处理。"),
        ("第三条、第四条规定", "第三条、第四条规定"),
    ],
)
def test_the_space_after_a_leading_label(raw, fixed):
    assert restore_label_space(raw) == fixed


@pytest.mark.parametrize(
    ("raw", "tidy"),
    [
        (".第二十八条 国务院", "第二十八条 国务院"),
        ("国家规定需.要保密的内容", "国家规定需要保密的内容"),
        ("对销售·电量征收", "对销售电量征收"),
        ("主持以下事项:(一).可再生能源", "主持以下事项：(一)可再生能源"),
        ("和示范工程;(二)农村", "和示范工程；(二)农村"),
        ("禁止非法侵占电能的行为O", "禁止非法侵占电能的行为。"),
        ("GB/T 9704-2012, 第1.5条", "GB/T 9704-2012, 第1.5条"),  # ASCII text and numbers stay
    ],
)
def test_typical_engine_slips_are_undone(raw, tidy):
    assert tidy_line(raw) == tidy


# --- parsing with a canned engine: paragraphs, chunks and the page map ------------------------------------


def three_page_tiff_parse():
    ocr = canned(page1(), page2(), page3())
    return parse_document("scan.tif", tiff(3), ocr=ocr), ocr


def test_ocr_text_is_joined_into_paragraphs_across_pages_and_chunks_carry_article_labels():
    parsed, ocr = three_page_tiff_parse()
    assert len(ocr.seen) == 3 and all(png.startswith(b"\x89PNG") for png in ocr.seen)
    assert parsed.format == "tiff" and parsed.ocr_engine == "canned"
    assert parsed.title_hint == "电力供应与使用条例"
    lines = parsed.text.split("\n")
    assert lines[:3] == ["电力供应与使用条例", "第一章 总则", "第一条 " + ART1[3:]]
    assert "第三条 " + ART3[3:] in lines  # one paragraph though it wraps over three lines
    structure = split_structure(normalize(parsed.text))
    assert [s.label for s in structure.segments] == ["第一条", "第二条", "第三条", "第四条"]
    assert structure.segments[0].heading_path == ("第一章 总则",)


def test_every_page_has_its_span_and_quotes_map_to_pages_and_boxes():
    parsed, _ = three_page_tiff_parse()
    pages = parsed.pages
    assert [(p.page, p.ocr) for p in pages] == [(1, True), (2, True), (3, True)]
    assert parsed.ocr_pages == (1, 2, 3)
    assert pages[0].start == 0 and pages[0].end <= pages[1].start <= pages[1].end <= pages[2].start
    text = parsed.text
    for p in pages:  # each page's span holds exactly its lines
        assert all(text[ln.start : ln.end] for ln in p.lines)
        assert p.confidence is not None and 0.9 < p.confidence <= 1
    quote = "县级以上地方人民政府电力管理部门负责本行政区域内"
    start = text.index(quote)
    assert pages_for_span(pages, start, start + len(quote)) == [2]
    assert pages_for_span(pages, text.index("第四条"), text.index("第四条") + 3) == [3]
    whole = text.index("第一条"), text.index("第四条") + 4
    assert pages_for_span(pages, *whole) == [1, 2, 3]
    boxes = lines_for_span(pages, start, start + len(quote))
    assert boxes and all(page == 2 and 0 <= box.y0 < box.y1 <= 1 for page, box in boxes)


def test_page_spans_survive_json_and_low_confidence_pages_are_listed():
    parsed, _ = three_page_tiff_parse()
    again = tuple(PageSpan.from_dict(p.to_dict()) for p in parsed.pages)
    assert [(p.page, p.start, p.end, p.ocr, len(p.lines)) for p in again] == [
        (p.page, p.start, p.end, p.ocr, len(p.lines)) for p in parsed.pages
    ]
    row = again[0].to_dict()["lines"][0]
    assert len(row) == 7 and all(isinstance(v, int) for v in row[:6])
    assert low_confidence_pages(parsed.pages, 0.99) == [1, 2, 3]
    assert low_confidence_pages(parsed.pages, 0.5) == []


def test_pages_for_span_edges():
    pages = (PageSpan(1, 0, 10, False), PageSpan(2, 11, 20, True, 0.9), PageSpan(3, 20, 20, True))
    assert pages_for_span(pages, 9, 12) == [1, 2]
    assert pages_for_span(pages, 10, 11) == [1]  # the line break between pages belongs to the page before
    assert pages_for_span(pages, 5, 5) == [1]
    assert pages_for_span((), 0, 5) == []


def test_page_url_points_at_the_first_page_of_a_quote():
    assert page_url("https://example.gov.cn/a.pdf", [3, 4]) == "https://example.gov.cn/a.pdf#page=3"
    assert page_url("https://example.gov.cn/a.pdf#page=1", [2]) == "https://example.gov.cn/a.pdf#page=2"
    assert page_url("https://example.gov.cn/a.pdf", []) == "https://example.gov.cn/a.pdf"
    assert page_url(None, [2]) is None


def test_text_pdf_pages_have_spans_without_ocr():
    parsed = parse_document("nat-reg-0088.pdf", (FORMATS / "nat-reg-0088.pdf").read_bytes())
    assert parsed.ocr_engine is None and parsed.ocr_pages == ()
    assert [p.page for p in parsed.pages] == list(range(1, len(parsed.pages) + 1))
    assert all(not p.ocr and p.confidence is None and not p.lines for p in parsed.pages)
    text = parsed.text
    start = text.index("第四十五条")
    assert pages_for_span(parsed.pages, start, start + 5) == [parsed.pages[-1].page]


# --- mixed PDFs and missing OCR ---------------------------------------------------------------------------


def mixed_pdf() -> bytes:
    """Page 1 of a text-layer PDF, then a page that is only an image."""
    from pypdf import PdfReader, PdfWriter

    scan = io.BytesIO()
    Image.new("L", (120, 170), 200).save(scan, "PDF", resolution=20)
    writer = PdfWriter()
    writer.add_page(PdfReader(FORMATS / "nat-reg-0088.pdf").pages[0])
    writer.add_page(PdfReader(scan).pages[0])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_mixed_pdf_uses_the_text_layer_then_ocr():
    scanned = OcrPage((*body("第四条本条例自发布之日起施行。", 0), folio("— 2 —")), 120, 170, "canned")
    ocr = canned(scanned)
    parsed = parse_document("mixed.pdf", mixed_pdf(), ocr=ocr)
    assert len(ocr.seen) == 1  # only the image page went to OCR
    assert [(p.page, p.ocr) for p in parsed.pages] == [(1, False), (2, True)]
    page1_text = parsed.text[parsed.pages[0].start : parsed.pages[0].end]
    assert page1_text.startswith("电力供应与使用条例") and "第三条" in page1_text
    assert parsed.text[parsed.pages[1].start : parsed.pages[1].end] == "第四条 本条例自发布之日起施行。"


def test_without_ocr_scans_fail_with_a_clear_reason():
    with pytest.raises(UnreadableDocument, match=r"page\(s\) 2 are scanned images .* no OCR engine"):
        parse_document("mixed.pdf", mixed_pdf())
    scan = io.BytesIO()
    Image.new("L", (60, 80), 255).save(scan, "PDF")
    with pytest.raises(UnreadableDocument, match="no text layer"):
        parse_document("scan.pdf", scan.getvalue())
    with pytest.raises(UnreadableDocument, match="JPEG image needs OCR"):
        parse_document("photo.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 64)


# --- limits ----------------------------------------------------------------------------------------------


def png_header_only(width: int, height: int) -> bytes:
    """A PNG that claims `width` × `height` pixels in a few bytes (a decompression bomb's calling card)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")
    )


def never(image: bytes) -> OcrPage:
    raise AssertionError("OCR must not run on a document over a limit")


@pytest.mark.parametrize(
    ("name", "data", "limits", "message"),
    [
        ("bomb.png", png_header_only(100_000, 100_000), OcrLimits(), "max_image_pixels"),
        # our limit set above Pillow's: Pillow's own guard (MAX_IMAGE_PIXELS) still refuses it at open
        ("bomb2.png", png_header_only(20_000, 20_000), OcrLimits(max_image_pixels=10**10), "decompression bomb"),
        ("big.png", png_header_only(8_000, 6_000), OcrLimits(max_image_pixels=20_000_000), "max_image_pixels"),
        ("long.tif", tiff(4), OcrLimits(max_pages=3), r"4 pages .* limit is 3 .*max_pages"),
        ("long.pdf", (FORMATS / "nat-reg-0088.pdf").read_bytes(), OcrLimits(max_pages=2), r"max_pages"),
    ],
)
def test_over_a_limit_is_an_unsupported_document_naming_the_limit(name, data, limits, message):
    started = time.perf_counter()
    with pytest.raises(UnreadableDocument, match=message):
        parse_document(name, data, ocr=never, limits=limits)
    assert time.perf_counter() - started < 2


def test_a_huge_image_inside_a_pdf_is_refused_before_rendering():
    scan = io.BytesIO()
    Image.new("1", (6000, 6000), 1).save(scan, "PDF", resolution=600)
    with pytest.raises(UnreadableDocument, match=r"an image on page 1 .*max_image_pixels"):
        parse_document("poster.pdf", scan.getvalue(), ocr=never, limits=OcrLimits(max_image_pixels=10_000_000))


def test_a_page_that_takes_too_long_fails_the_document_without_hanging():
    def slow(image: bytes) -> OcrPage:
        time.sleep(3)
        return page3()

    started = time.perf_counter()
    with pytest.raises(UnreadableDocument, match=r"OCR of page 1 took longer than 0.2 s \(page_timeout_s\)"):
        parse_document("slow.png", tiff(1), ocr=slow, limits=OcrLimits(page_timeout_s=0.2))
    assert time.perf_counter() - started < 1.5


def test_engine_errors_reach_the_caller():
    from regrag.domain.errors import Unavailable

    def down(image: bytes) -> OcrPage:
        raise Unavailable("OCR service unavailable")

    with pytest.raises(Unavailable):
        parse_document("scan.tif", tiff(1), ocr=down)


def test_an_unreadable_image_is_unsupported():
    with pytest.raises(UnreadableDocument, match="unreadable image"):
        parse_document("broken.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, ocr=never)


# --- article labels are never lost ------------------------------------------------------------------------


def placed(text: str, starts: bool, row: int = 0) -> PlacedLine:
    return PlacedLine(text, 1, starts, Box(LEFT, 0.14 + row * 0.034, RIGHT, 0.14 + row * 0.034 + EM), 0.97)


def test_a_label_the_geometry_glued_to_the_article_before_starts_its_article():
    # a skewed page: the last line of 第二条 was lost and 第三条's indent hidden, so its line continues 第二条
    lines = [
        placed("电力设施保护条例", True),
        placed("第二条 本条例适用于中华人民共和国境内已建或在建的电力设施（包括发电设施、变电设施和", True),
        placed("电力线路设施及其有关辅助", False, 1),
        placed("第三条电力设施的保护，实行电力管理部门、公安部门、电力企业和人民群众相结合的原则。", False, 2),
        placed("第四条 电力设施受国家法律保护。", True, 3),
    ]
    fixed = restore_article_starts(lines)
    assert [ln.starts_paragraph for ln in fixed] == [True, True, False, True, True]
    text, _ = assemble(fixed, [1], {1: "local"})
    structure = split_structure(normalize(text))
    assert [s.label for s in structure.segments] == ["第二条", "第三条", "第四条"]


@pytest.mark.parametrize(
    "lines",
    [
        # a reference a line wrap put at the start of a line: 第三条 is an article of its own further on
        [placed("第二条 违反本条例", True), placed("第三条规定的，由电力管理部门责令改正。", False, 1),
         placed("第三条 电力设施的保护。", True, 2)],
        # nothing after it says the sequence goes on: not certain
        [placed("第二条 违反本条例，依照", True), placed("第三条处罚。", False, 1)],
        # not the next number
        [placed("第二条 违反本条例，依照", True), placed("第九条处罚。", False, 1), placed("第十条 附则。", True, 2)],
    ],
)  # fmt: skip
def test_a_label_is_moved_only_where_the_sequence_makes_it_certain(lines):
    assert [ln.starts_paragraph for ln in restore_article_starts(lines)] == [ln.starts_paragraph for ln in lines]


def test_a_label_line_read_with_low_confidence_is_kept_where_noise_is_dropped():
    page = OcrPage(
        (
            line("第二条 本条例适用于电力设施。", 0, indent=2 * EM),
            line("第三条 电力设施的保护实行群众相结合的原则。", 1, indent=2 * EM, conf=0.31),
            line("叫", 2, conf=0.31),
        ),
        1240,
        1754,
        "canned",
    )
    [kept] = remove_noise([(1, reading_order(page))])
    assert [ln.text for ln in kept] == ["第二条 本条例适用于电力设施。", "第三条 电力设施的保护实行群众相结合的原则。"]


def test_an_unsure_line_is_read_again_from_its_enlarged_crop_and_the_better_reading_kept():
    calls: list[tuple[int, int]] = []
    unsure = line("笫三杀 电力设施的保护。", 2, indent=2 * EM, conf=0.42)  # 第三条 misread

    def engine(png: bytes) -> OcrPage:
        size = Image.open(io.BytesIO(png)).size
        calls.append(size)
        if len(calls) == 1:  # the page
            lines = (
                line("电力设施保护条例", 0, indent=0.2),
                line("第二条 本条例适用于电力设施。", 1, indent=2 * EM),
                unsure,
                line("第四条 本条例自发布之日起施行。", 3, indent=2 * EM),
            )
            return OcrPage(lines, *size, "canned")
        return OcrPage((OcrLine("第三条 电力设施的保护。", 0.96, Box(0.05, 0.3, 0.95, 0.7)),), *size, "canned")

    page = Image.new("L", (1240, 1754), 255)
    buf = io.BytesIO()
    page.save(buf, "PNG")
    parsed = parse_document("scan.png", buf.getvalue(), ocr=engine)
    assert len(calls) == 2 and calls[1][1] < calls[0][1]  # one crop, of one line
    assert calls[1][0] >= 2 * unsure.box.width * 1240  # enlarged
    structure = split_structure(normalize(parsed.text))
    assert [s.label for s in structure.segments] == ["第二条", "第三条", "第四条"]
