"""Render corpus regulations as scanned pages: page images and image-only PDFs, for OCR tests and benchmarks.

Layout follows the national standard for official documents (GB/T 9704-2012, 党政机关公文格式): A4, margins
37/35/28/26 mm (top/bottom/left/right), body in 三号 (16 pt) Song-style type, 22 lines of 28 characters,
title in 二号 (22 pt), page numbers "— N —" in 四号 (14 pt) below the body. A 红头 issuer banner and red rule
open the first page, and a red seal overlaps the last lines when asked, as on real 红头文件. The scan
defects are a small skew, sensor noise and JPEG artefacts. Fonts: Debian's Noto CJK (`fc-list :lang=zh`).

    python bench/make_ocr_fixtures.py            # the committed CI fixtures (tests/fixtures/ocr/)
    python bench/make_ocr_fixtures.py --only nat-reg-0091-p1-rotated.jpg   # one of them, the others kept
    python bench/make_ocr_fixtures.py --bench /tmp/ocr-bench   # whole documents for bench/ocr_accuracy.py

Needs Pillow (requirements.txt) and pypdf; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("REGRAG_BENCH_CORPUS", ROOT.parent / "shared" / "corpus")) / "docs"
SAMPLE = ROOT / "shared" / "sample_corpus" / "docs"
FIXTURES = ROOT / "tests" / "fixtures" / "ocr"
FORMATS = ROOT / "tests" / "fixtures" / "formats"

MM_PER_INCH = 25.4
RED = (200, 20, 30)
_COMMENT_RE = re.compile(r"^\s*<!--.*-->\s*$")


@dataclass(frozen=True)
class Style:
    """How a document is typeset and how badly it is scanned."""

    dpi: int = 150
    banner: str | None = None  # 红头 issuer line, e.g. "国家能源局文件"
    doc_number: str | None = None  # 文号 under the banner
    running_header: str | None = None  # a line repeated at the top of every page after the first
    seal: str | None = None  # issuer name around a red seal on the last page
    skew_deg: float = 0.0
    noise: float = 0.0  # standard deviation of the grey-level noise
    jpeg_quality: int | None = None
    grayscale: bool = False
    seed: int = 1


def find_font(family: str, bold: bool = False) -> str:
    """The path of a Noto CJK font collection (Serif or Sans) that covers Chinese."""
    out = subprocess.run(["fc-list", ":lang=zh", "file", "family", "style"], capture_output=True, text=True)
    want = "Bold" if bold else "Regular"
    for line in sorted(out.stdout.splitlines()):
        path = line.split(":", 1)[0]
        if family in line and path.endswith(f"CJK-{want}.ttc"):
            return path
    raise SystemExit(f"no Noto {family} CJK {want} font: apt-get install fonts-noto-cjk")


def source_blocks(markdown: str) -> list[tuple[str, str]]:
    """(kind, text) blocks of a corpus Markdown file: title, header (promulgation lines), heading, body."""
    blocks: list[tuple[str, str]] = []
    in_header = True
    for raw in markdown.splitlines():
        line = raw.strip()
        if not line or _COMMENT_RE.match(line):
            if "INFO END" in line:
                in_header = False
            continue
        if line.startswith("# ") and not blocks:
            blocks.append(("title", line[2:].strip()))
        elif line.startswith("#"):
            in_header = False
            blocks.append(("heading", line.lstrip("#").strip()))
        else:
            kind = "header" if in_header and blocks and blocks[0][0] == "title" else "body"
            if kind == "body":
                in_header = False
            blocks.append((kind, line.replace("\u3000", " ").strip()))
    return blocks


class Typesetter:
    """Lays out blocks on A4 pages at `style.dpi` and draws them."""

    def __init__(self, style: Style) -> None:
        self.style = style
        px = style.dpi / MM_PER_INCH
        self.width, self.height = round(210 * px), round(297 * px)
        self.left, self.right = round(28 * px), round((210 - 26) * px)
        self.top, self.bottom = round(37 * px), round((297 - 35) * px)
        pt = style.dpi / 72
        serif, serif_bold = find_font("Serif"), find_font("Serif", bold=True)
        self.body = ImageFont.truetype(serif, round(16 * pt), index=2)  # index 2: the SC face of the collection
        self.title = ImageFont.truetype(serif_bold, round(22 * pt), index=2)
        self.heading = ImageFont.truetype(find_font("Sans", bold=True), round(16 * pt), index=2)
        self.small = ImageFont.truetype(serif, round(14 * pt), index=2)
        self.banner = ImageFont.truetype(serif_bold, round(36 * pt), index=2)
        self.pitch = (self.bottom - self.top) / 22  # 22 lines per page

    def wrap(self, text: str, font: ImageFont.FreeTypeFont, width: float, indent: float) -> list[str]:
        lines: list[str] = []
        current, limit = "", width - indent
        for ch in text:
            if current and font.getlength(current + ch) > limit:
                lines.append(current)
                current, limit = "", width
            current += ch
        if current:
            lines.append(current)
        return lines

    def layout(self, blocks: Sequence[tuple[str, str]]) -> list[list[tuple[str, str, float]]]:
        """Pages of (kind, line text, x offset); a line of kind "gap" only advances."""
        em = self.body.getlength("中")
        width = self.right - self.left
        rows: list[tuple[str, str, float]] = []
        for kind, text in blocks:
            if kind == "title":
                for ln in self.wrap(text, self.title, width, 0):
                    rows.append(("title", ln, (width - self.title.getlength(ln)) / 2))
                rows.append(("gap", "", 0))
            elif kind == "heading":
                rows.append(("heading", text, (width - self.heading.getlength(text)) / 2))
            else:
                indent = 2 * em
                for i, ln in enumerate(self.wrap(text, self.body, width, indent)):
                    rows.append(("body", ln, indent if i == 0 else 0))
        first_page_rows = 22 - (6 if self.style.banner else 0)
        pages: list[list[tuple[str, str, float]]] = []
        while rows:
            take = first_page_rows if not pages else 22 - (1 if self.style.running_header else 0)
            pages.append(rows[:take])
            rows = rows[take:]
        return pages

    def draw(self, pages: list[list[tuple[str, str, float]]]) -> list[Image.Image]:
        images = []
        for number, rows in enumerate(pages, start=1):
            img = Image.new("RGB", (self.width, self.height), "white")
            d = ImageDraw.Draw(img)
            y = float(self.top)
            if number == 1 and self.style.banner:
                y = self._banner(d, y)
            if number > 1 and self.style.running_header:
                text = self.style.running_header
                d.text(((self.width - self.small.getlength(text)) / 2, self.top - 2 * self.pitch), text,
                       font=self.small, fill="black")  # fmt: skip
                d.line((self.left, self.top - 0.9 * self.pitch, self.right, self.top - 0.9 * self.pitch),
                       fill="black", width=2)  # fmt: skip
            for kind, text, dx in rows:
                font = {"title": self.title, "heading": self.heading}.get(kind, self.body)
                if kind == "title":
                    y += 0.3 * self.pitch
                d.text((self.left + dx, y), text, font=font, fill="black")
                y += self.pitch * (1.5 if kind == "title" else 1)
            folio = f"— {number} —"
            d.text(((self.width - self.small.getlength(folio)) / 2, self.bottom + 0.6 * self.pitch), folio,
                   font=self.small, fill="black")  # fmt: skip
            if number == len(pages) and self.style.seal:
                self._seal(img, (self.right - 5.5 * self.pitch, min(y, self.bottom) - 2.2 * self.pitch))
            images.append(self._scan(img, number))
        return images

    def _banner(self, d: ImageDraw.ImageDraw, y: float) -> float:
        banner = self.style.banner or ""
        d.text(((self.width - self.banner.getlength(banner)) / 2, y), banner, font=self.banner, fill=RED)
        y += 3.2 * self.pitch
        if self.style.doc_number:
            number = self.style.doc_number
            d.text(((self.width - self.body.getlength(number)) / 2, y), number, font=self.body, fill="black")
        y += 1.3 * self.pitch
        d.line((self.left, y, self.right, y), fill=RED, width=max(2, self.style.dpi // 50))
        return y + 1.5 * self.pitch

    def _seal(self, img: Image.Image, centre: tuple[float, float]) -> None:
        """A red seal: ring, star and the issuer's name on an arc, multiplied over the text like ink."""
        r = 21 * self.style.dpi / MM_PER_INCH  # a 42 mm seal
        size = round(2 * r + 8)
        seal = Image.new("RGB", (size, size), "white")
        d = ImageDraw.Draw(seal)
        c = size / 2
        d.ellipse((c - r, c - r, c + r, c + r), outline=RED, width=max(3, round(r / 18)))
        star = [
            (c + 0.28 * r * math.cos(math.radians(-90 + 36 * k)) * (1 if k % 2 == 0 else 0.4),
             c + 0.28 * r * math.sin(math.radians(-90 + 36 * k)) * (1 if k % 2 == 0 else 0.4))
            for k in range(10)
        ]  # fmt: skip
        d.polygon(star, fill=RED)
        name = self.style.seal or ""
        font = ImageFont.truetype(find_font("Sans", bold=True), round(r / 4.2), index=2)
        span = 220.0
        for i, ch in enumerate(name):
            angle = -90 - span / 2 + span * (i + 0.5) / len(name)
            glyph = Image.new("L", (round(r / 3), round(r / 3)), 0)
            ImageDraw.Draw(glyph).text((0, 0), ch, font=font, fill=255)
            glyph = glyph.rotate(-(angle + 90), expand=True)
            gx = c + 0.72 * r * math.cos(math.radians(angle)) - glyph.width / 2
            gy = c + 0.72 * r * math.sin(math.radians(angle)) - glyph.height / 2
            seal.paste(Image.new("RGB", glyph.size, RED), (round(gx), round(gy)), glyph)
        x, y = round(centre[0] - c), round(centre[1] - c)
        region = img.crop((x, y, x + size, y + size))
        from PIL import ImageChops

        img.paste(ImageChops.multiply(region, seal), (x, y))

    def _scan(self, img: Image.Image, number: int) -> Image.Image:
        style = self.style
        if style.skew_deg:
            img = img.rotate(style.skew_deg, resample=Image.Resampling.BICUBIC, fillcolor="white")
        if style.noise:
            img = _add_noise(img.filter(ImageFilter.GaussianBlur(0.6)), style.noise, random.Random(style.seed + number))
        if style.grayscale:
            img = img.convert("L")
        if style.jpeg_quality:
            buf = io.BytesIO()
            img.save(buf, "JPEG", quality=style.jpeg_quality)
            img = Image.open(io.BytesIO(buf.getvalue()))
            img.load()
        return img


def _add_noise(img: Image.Image, sigma: float, rng: random.Random) -> Image.Image:
    """Gaussian grey-level noise plus sparse dark specks (dust on the scanner glass)."""
    noise = Image.effect_noise(img.size, sigma)  # grey levels centred on 128
    out = Image.merge(img.mode, [Image.blend(band, noise, 0.12) for band in img.split()])
    d = ImageDraw.Draw(out)
    for _ in range(img.width * img.height // 40000):
        x, y = rng.randrange(img.width), rng.randrange(img.height)
        d.ellipse((x, y, x + rng.randint(1, 3), y + rng.randint(1, 3)), fill=(60, 60, 60))
    return out


def render(markdown: str, style: Style) -> list[Image.Image]:
    """The pages of a corpus document as scanned images."""
    setter = Typesetter(style)
    return setter.draw(setter.layout(source_blocks(markdown)))


def save_pdf(images: Sequence[Image.Image], path: Path, dpi: int, quality: int = 70) -> None:
    """An image-only PDF (no text layer): each page one JPEG at `dpi`."""
    first, *rest = [im.convert("RGB") for im in images]
    first.save(path, "PDF", save_all=True, append_images=rest, resolution=dpi, quality=quality)


# --- the fixtures ------------------------------------------------------------------------------------------

BENCH = {
    # name: (doc id, style); the long one is sd-0090 (济南市电力管理条例, ~10,000 characters)
    "nat-reg-0088-clean": ("nat-reg-0088", Style(dpi=200)),
    "nat-reg-0088-redhead": (
        "nat-reg-0088",
        Style(dpi=150, banner="国务院文件", doc_number="国发〔2016〕16号", seal="中华人民共和国国务院"),
    ),
    "nat-law-0015-skew-noise": (
        "nat-law-0015",
        Style(dpi=150, skew_deg=1.5, noise=25, jpeg_quality=45, running_header="中华人民共和国可再生能源法", seed=3),
    ),
    # 电力设施保护条例 (32 articles) turned 4° on the glass, noisy, grey, JPEG q45: before deskew and the label
    # checks, 4 of its 32 article labels were glued to the article before them
    "nat-reg-0091-rotated-noisy": (
        "nat-reg-0091",
        Style(dpi=150, skew_deg=-4.0, noise=30, jpeg_quality=45, grayscale=True, seed=24),
    ),
    "sd-0090-gray-jpeg": (
        "sd-0090",
        Style(
            dpi=150,
            grayscale=True,
            jpeg_quality=55,
            skew_deg=-1.0,
            banner="济南市人民代表大会常务委员会公告",
            seal="济南市人民代表大会常务委员会",
            seed=5,
        ),
    ),
}


def iter_ci_fixtures() -> Iterator[tuple[str, bytes, dict[str, object]]]:
    """The small committed fixtures: (file name, bytes, manifest row)."""
    md = (SAMPLE / "nat-reg-0088.md").read_text(encoding="utf-8")
    style = Style(dpi=150, banner="国务院文件", doc_number="国发〔2016〕16号", seal="中华人民共和国国务院")
    pages = render(md, style)
    # page 2 of the stamped 红头 document, skewed, as a grayscale PNG upload
    page2 = render(md, replace(style, skew_deg=1.2, grayscale=True))[1]
    buf = io.BytesIO()
    page2.convert("L").save(buf, "PNG", optimize=True)
    yield "nat-reg-0088-p2.png", buf.getvalue(), {"doc_id": "nat-reg-0088", "pages": [2], "kind": "image"}
    # page 1 (红头 banner, document number, title, first articles) as a JPEG upload
    buf = io.BytesIO()
    pages[0].save(buf, "JPEG", quality=60)
    yield "nat-reg-0088-p1.jpg", buf.getvalue(), {"doc_id": "nat-reg-0088", "pages": [1], "kind": "image"}
    # page 1 of 电力设施保护条例 turned 4° and noisy (the bench's nat-reg-0091-rotated-noisy), as a JPEG upload
    rotated = BENCH["nat-reg-0091-rotated-noisy"][1]
    page1 = render((SAMPLE / "nat-reg-0091.md").read_text(encoding="utf-8"), rotated)[0]
    buf = io.BytesIO()
    page1.save(buf, "JPEG", quality=rotated.jpeg_quality)
    yield "nat-reg-0091-p1-rotated.jpg", buf.getvalue(), {"doc_id": "nat-reg-0091", "pages": [1], "kind": "image"}
    # a mixed PDF: page 1 of the text-layer PDF, then page 2 of the same PDF printed and scanned (rendered,
    # slightly skewed, noisy, JPEG inside): the OCR'd page continues the text page exactly
    out = io.BytesIO()
    _mixed_bytes(FORMATS / "nat-reg-0088.pdf", out)
    yield "nat-reg-0088-mixed.pdf", out.getvalue(), {"doc_id": "nat-reg-0088", "pages": [1, 2], "kind": "mixed"}


def _mixed_bytes(text_pdf: Path, out: io.BytesIO, dpi: int = 150) -> None:
    import pypdfium2 as pdfium
    from pypdf import PdfReader, PdfWriter

    page = pdfium.PdfDocument(text_pdf.read_bytes())[1]
    scan = page.render(scale=dpi / 72).to_pil().convert("RGB")
    scan = scan.rotate(0.8, resample=Image.Resampling.BICUBIC, fillcolor="white")
    scan = _add_noise(scan, 20, random.Random(7)).convert("L")
    buf = io.BytesIO()
    scan.save(buf, "PDF", resolution=dpi, quality=60)
    writer = PdfWriter()
    writer.add_page(PdfReader(text_pdf).pages[0])
    writer.add_page(PdfReader(io.BytesIO(buf.getvalue())).pages[0])
    writer.write(out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, help="write whole-document fixtures here instead of the CI ones")
    parser.add_argument("--only", nargs="*", help="fixture names (default: all): bench names, or CI file names")
    args = parser.parse_args(argv)
    if args.bench:
        args.bench.mkdir(parents=True, exist_ok=True)
        rows = []
        for name, (doc_id, style) in BENCH.items():
            if args.only and name not in args.only:
                continue
            source = CORPUS / f"{doc_id}.md"
            images = render(source.read_text(encoding="utf-8"), style)
            save_pdf(images, args.bench / f"{name}.pdf", style.dpi, quality=style.jpeg_quality or 75)
            rows.append({"name": name, "file": f"{name}.pdf", "doc_id": doc_id, "source": str(source),
                         "pages": len(images), "dpi": style.dpi})  # fmt: skip
            print(f"{name}: {len(images)} pages")
        (args.bench / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return
    FIXTURES.mkdir(parents=True, exist_ok=True)
    manifest = FIXTURES / "manifest.jsonl"
    # the noise differs from run to run: rewrite only the fixtures asked for, keep the others' bytes and rows
    kept = {}
    if args.only and manifest.exists():
        kept = {r["file"]: r for r in map(json.loads, manifest.read_text(encoding="utf-8").splitlines()) if r}
    rows = []
    for name, data, row in iter_ci_fixtures():
        if args.only and name not in args.only:
            if name in kept:
                rows.append(kept[name])
            continue
        (FIXTURES / name).write_bytes(data)
        rows.append({"file": name, **row, "bytes": len(data)})
        print(f"{name}: {len(data):,} bytes")
    (FIXTURES / "manifest.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
