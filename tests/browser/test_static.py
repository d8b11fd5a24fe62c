"""The page's files as the server delivers them (no browser needed: these run in the default suite)."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest
from werkzeug.test import Client

from regrag.api.server import wsgi_app
from regrag.inputs.filters import ASSETS, DOC_CLASSES, LEVELS, PROVINCE_CODES
from regrag.query.render import ASSET_NAMES
from regrag.text.inference import PROVINCE_NAMES

WEB = resources.files("regrag.web")


def web_text(name: str) -> str:
    return WEB.joinpath(name).read_text(encoding="utf-8")


@pytest.fixture
def client(hash_services: Any) -> Any:
    return Client(wsgi_app(hash_services))


def test_page_is_utf8_chinese_html_with_a_strict_policy(client: Any) -> None:
    response = client.get("/")
    assert response.status_code == 200 and response.headers["Content-Type"] == "text/html; charset=utf-8"
    html = response.get_data(as_text=True)
    assert '<html lang="zh-CN">' in html and '<meta charset="utf-8">' in html
    assert '<meta name="regrag-api" content="">' in html
    scripts = re.findall(r'<script src="assets/([a-z]+\.js)" defer></script>', html)
    assert scripts[:2] == ["dom.js", "app.js"] and 'href="assets/style.css"' in html  # dom.js before its users
    # No inline code, so the policy can forbid it; nothing loaded from elsewhere, so the page works offline.
    markup = re.sub(r"<!--.*?-->", "", html, flags=re.S)
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", markup) and not re.search(r"\son[a-z]+=", markup)
    assert "style=" not in markup and "<style" not in markup
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp


@pytest.mark.parametrize(("name", "mimetype"), [("app.js", "text/javascript"), ("style.css", "text/css")])
def test_static_files_are_served(client: Any, name: str, mimetype: str) -> None:
    response = client.get(f"/assets/{name}")
    assert response.status_code == 200 and response.headers["Content-Type"] == f"{mimetype}; charset=utf-8"
    assert response.get_data(as_text=True) == web_text(name)
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    ["/assets/index.html", "/assets/__init__.py", "/assets/nope.js", "/assets/..%2fserver.py", "/assets/.app.js"],
)
def test_static_route_serves_only_the_pages_own_files(client: Any, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404 and response.get_json()["error"]["code"] == "not_found"


def test_filter_vocabulary_matches_the_api() -> None:
    """The page's filter codes are exactly what regrag.inputs.filters accepts, labelled in Chinese."""
    found = re.search(r"/\* vocab:begin \*/(.*?)/\* vocab:end \*/", web_text("app.js"), re.S)
    assert found, "app.js lost its vocab markers"
    vocab = json.loads(found.group(1))
    assert vocab["province"] == {code: PROVINCE_NAMES[code] for code in PROVINCE_CODES}
    assert next(iter(vocab["province"])) == "national"  # the national option first, then by region
    assert vocab["asset"] == {code: ASSET_NAMES[code] for code in ASSETS}
    assert set(vocab["doc_class"]) == set(DOC_CLASSES) and set(vocab["regulation_level"]) == set(LEVELS)
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert all(cjk.search(label) for labels in vocab.values() for label in labels.values())


@pytest.mark.parametrize("name", ["dom.js", "app.js", "check.js", "watch.js"])
def test_script_never_parses_api_text_as_html(name: str) -> None:
    script = web_text(name)
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, f"{name} uses {sink}"


def test_font_stack_names_chinese_fonts_for_each_platform() -> None:
    css = web_text("style.css")
    stack = re.search(r"--font:([^;]+);", css)
    assert stack
    for font in ("PingFang SC", "Microsoft YaHei", "Noto Sans CJK SC", "WenQuanYi Micro Hei", "sans-serif"):
        assert font in stack.group(1)
    assert not re.search(r"@import|url\((?!data:)", css), "the stylesheet must not load anything (offline page)"
