"""HTML to text: the main content block (a known container, else the densest block), one paragraph per block
element, table cells tab-separated; the title from h1, the ArticleTitle meta or <title>."""

from __future__ import annotations

import re
from typing import Any

from regrag.text.parsed import ParsedText

# an HTML file declares itself in its first characters (a BOM or blank lines before <!doctype html> at most)
_HEAD_CHARS = 512
# a selector's element is the article body only when it holds more than a line of text (#zoom is sometimes an
# empty wrapper on government sites); else the densest block is
_MIN_MAIN_CHARS = 50


def looks_like_html(text: str) -> bool:
    head = text[:_HEAD_CHARS].lstrip().lower()
    return head.startswith(("<!doctype html", "<html"))


_BLOCK_TAGS = {
    "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "br", "section", "article", "table",
    "ul", "ol", "blockquote", "pre", "dd", "dt", "hr", "header", "footer", "main",
}  # fmt: skip
_DROP_TAGS = {"script", "style", "noscript", "template", "nav", "aside", "form", "iframe", "button", "svg"}
_MAIN_SELECTORS = ("#zoom", "article", "main", ".article-content", ".content", "#content", ".TRS_Editor")


def parse_html(text: str, encoding: str) -> ParsedText:
    from bs4 import BeautifulSoup  # imported here: only HTML needs it

    soup = BeautifulSoup(text, "html.parser")
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    main: Any = None
    for selector in _MAIN_SELECTORS:
        main = soup.select_one(selector)
        if main is not None and len(main.get_text(strip=True)) > _MIN_MAIN_CHARS:
            break
        main = None
    if main is None:
        main = _densest_block(soup)
    title = None
    h1 = main.find("h1") if main is not None else None
    if h1 is not None:
        title = h1.get_text(strip=True)
    else:
        meta = soup.find("meta", attrs={"name": "ArticleTitle"})
        if meta is not None and meta.get("content"):
            title = str(meta["content"]).strip()
        elif soup.title is not None and soup.title.string:
            title = re.split(r"[_|｜-]", soup.title.string.strip())[0].strip() or None
    lines: list[str] = []
    buf: list[str] = []

    def flush() -> None:
        line = "".join(buf).strip()
        if line:
            lines.append(line)
        buf.clear()

    def walk(node: object) -> None:
        from bs4 import NavigableString, Tag
        from bs4.element import Comment

        if isinstance(node, Comment):
            return
        if isinstance(node, NavigableString):
            buf.append(re.sub(r"[ \t\r\n]+", " ", str(node)))
            return
        if isinstance(node, Tag):
            block = node.name in _BLOCK_TAGS
            if block:
                flush()
            if node.name in ("td", "th") and buf:
                buf.append("\t")
            for child in node.children:
                walk(child)
            if block:
                flush()

    walk(main if main is not None else soup)
    flush()
    return ParsedText("\n".join(lines) + "\n", "html", encoding, title)


def _densest_block(soup: object) -> object:
    """The block with the most paragraph text, when no known content container exists."""
    best, best_len = None, 0
    for div in soup.find_all(["div", "section", "td", "body"]):  # type: ignore[attr-defined]
        direct = sum(len(p.get_text(strip=True)) for p in div.find_all("p", recursive=False))
        if direct > best_len:
            best, best_len = div, direct
    return best if best is not None else soup
