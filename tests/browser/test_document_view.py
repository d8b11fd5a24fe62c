"""The page's document view in headless Chromium: the notes on metadata a reader could take for settled (an
effective date that is an amendment's adoption, a province the text does not tell, a text that may be cut short),
served by `regrag serve`'s
own server (regrag.api.server.create_server)."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from test_page import ARTIFACTS, HERE, missing_prerequisite

from regrag.api.server import create_server
from regrag.entrypoints import handlers
from regrag.services import Services
from regrag.wiring import build_services

from conftest import make_settings, sample_text

pytestmark = pytest.mark.browser

UNKNOWN_PLACE = (
    "# 光伏电站运行管理办法\n\n第一条 为了规范光伏电站运行，制定本办法。\n第二条 本办法自2024年1月1日起施行。\n"
)


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = missing_prerequisite()
    if reason:
        pytest.skip(f"BROWSER TESTS SKIPPED: {reason}; run `bash tests/browser/install.sh` (as root)")
    services: Services = build_services(make_settings(tmp_path_factory.mktemp("document-view")))
    # 可再生能源法 as the corpus's manifest has it (no amendment_effective_date), and a file without a sidecar
    # and 浙江省电网设施建设保护和供用电秩序维护条例 as the source has it: cut short after 第九条
    for name, text in (
        ("docs/nat-law-0015.md", sample_text("nat-law-0015")),
        ("docs/pv-rules.md", UNKNOWN_PLACE),
        ("docs/zj-0004.md", sample_text("zj-0004")),
    ):
        services.blobs.write(name, text.encode("utf-8"))
        handlers.ingest_name(services, name)
    server = create_server(services, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.effective_port}/"
        done = subprocess.run(
            ["node", str(HERE / "drive_document.mjs"), url, str(ARTIFACTS), "nat-law-0015", "pv-rules", "zj-0004"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        server.close()
        thread.join(timeout=5)
        services.close()
    assert done.returncode == 0, f"drive_document.mjs failed ({done.returncode}):\n{done.stderr[-4000:]}"
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert not out["errors"] and not out["page_errors"], out
    yield out["documents"]


def test_an_effective_date_that_is_an_amendments_adoption_carries_a_note(seen: dict[str, Any]) -> None:
    rows = dict(seen["nat-law-0015"]["rows"])
    assert rows["施行日期"].startswith("2009-12-26⚠")  # not "依据正文施行条款": the clause says 2006
    assert "⚠ 本文本最近一次修改" in rows["施行日期"] and "实际施行日期可能较晚，请核对修改决定" in rows["施行日期"]
    assert "《关于修改<中华人民共和国可再生能源法>的决定》修正" in rows["施行日期"]
    assert rows["地区"] == "全国"  # its title says so: no note


def test_a_province_the_text_does_not_tell_is_shown_as_unknown_with_a_note(seen: dict[str, Any]) -> None:
    rows = dict(seen["pv-rules"]["rows"])
    assert rows["地区"].startswith("未能确定") and "不视为全国性规定" in rows["地区"]
    assert seen["pv-rules"]["notes"] == [
        "⚠ 标题和发文机关均未载明所属地区：本文件不视为全国性规定，请在元数据中注明地区。"
    ]


def test_a_text_no_article_of_which_says_when_it_takes_effect_is_marked_incomplete(seen: dict[str, Any]) -> None:
    rows = dict(seen["zj-0004"]["rows"])
    assert rows["文本完整性"].startswith("可能不完整⚠") and "请与官方文本核对" in rows["文本完整性"]
    assert "文本完整性" not in dict(seen["nat-law-0015"]["rows"])  # 本法自2006年1月1日起施行
