"""OCR accuracy on whole scanned documents: corpus regulations rendered as image-only PDFs, read back.

    python bench/make_ocr_fixtures.py --bench /tmp/ocr-bench     # render (about 5 s per document)
    python bench/ocr_accuracy.py /tmp/ocr-bench                  # OCR and score (about 2–3 s per page)

Per fixture it prints:
- character accuracy: 1 − edit distance / source length, both texts without whitespace and without the
  source's Markdown markup (`#`, `<!-- … -->`);
- labels found: the share of the source's article labels the chunker finds as article starts in the OCR text
  (a label lost or glued into the article before it is missing: that article's text would be cited under the
  article before);
- articles recovered: the share of the source's articles (`split_structure` over the normalised source) whose
  label the chunker finds in the normalised OCR text, with the article's text at ≥ 90 % similarity;
- seconds per page (rasterise + OCR + cleaning, the whole `parse_document`), mean line confidence and the
  pages below the low-confidence threshold.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from regrag.adapters.local.ocr import RapidOcrEngine
from regrag.domain.ocr import low_confidence_pages
from regrag.text.chunking import KIND_ARTICLE, split_structure
from regrag.text.normalize import normalize, strip_whitespace
from regrag.text.parse import parse_document

_MARKUP_RE = re.compile(r"<!--.*?-->|^#+", re.M)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (two rows; the texts here are at most ~15,000 characters)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def plain(text: str) -> str:
    return strip_whitespace(normalize(_MARKUP_RE.sub("", text)).text)


def articles(text: str, markdown: bool) -> dict[str, str]:
    """Article label → its text (whitespace removed, normalised), over all parts."""
    norm = normalize(text)
    out: dict[str, str] = {}
    for seg in split_structure(norm, markdown=markdown).segments:
        if seg.kind == KIND_ARTICLE:
            out[seg.label] = out.get(seg.label, "") + plain(text[seg.start : seg.end])
    return out


def similarity(a: str, b: str) -> float:
    import difflib

    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="output of make_ocr_fixtures.py --bench")
    parser.add_argument("--low-confidence", type=float, default=0.9)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args(argv)
    engine = RapidOcrEngine()
    started = time.perf_counter()
    engine.recognize((Path(__file__).resolve().parents[1] / "tests/fixtures/ocr/nat-reg-0088-p2.png").read_bytes())
    print(f"engine {engine.engine_id}: first page including model load {time.perf_counter() - started:.2f} s")
    rows = [json.loads(line) for line in (args.folder / "manifest.jsonl").read_text().splitlines() if line]
    print(
        "| fixture | pages | dpi | char accuracy | labels found | articles, right label | s/page | mean conf "
        "| low-conf pages |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        if args.only and row["name"] not in args.only:
            continue
        source = Path(row["source"]).read_text(encoding="utf-8")
        data = (args.folder / row["file"]).read_bytes()
        t0 = time.perf_counter()
        parsed = parse_document(row["file"], data, ocr=engine.recognize)
        seconds = time.perf_counter() - t0
        want, got = plain(source), plain(parsed.text)
        accuracy = 1 - edit_distance(want, got) / max(1, len(want))
        src_articles, ocr_articles = articles(source, True), articles(parsed.text, False)
        recovered = sum(
            1
            for label, text in src_articles.items()
            if label in ocr_articles and similarity(text, ocr_articles[label]) >= 0.9
        )
        confidences = [p.confidence for p in parsed.pages if p.confidence is not None]
        mean = sum(confidences) / len(confidences) if confidences else float("nan")
        low = low_confidence_pages(parsed.pages, args.low_confidence)
        found = sum(1 for label in src_articles if label in ocr_articles)
        lost = [label for label in src_articles if label not in ocr_articles]
        print(
            f"| {row['name']} | {len(parsed.pages)} | {row['dpi']} | {accuracy:.4f} | "
            f"{found}/{len(src_articles)}{' (lost: ' + '、'.join(lost) + ')' if lost else ''} | "
            f"{recovered}/{len(src_articles)} ({recovered / max(1, len(src_articles)):.0%}) | "
            f"{seconds / max(1, len(parsed.pages)):.2f} | {mean:.3f} | {low or '—'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
