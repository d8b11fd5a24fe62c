"""Files a careless or hostile uploader sends: each is a recorded permanent failure naming the problem, the
batch goes on, and the index answers exactly as it did before."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from regrag.entrypoints.cli import main

from conftest import FIXTURES, SAMPLE, sample_manifest

QUESTION = "计划检修停电要提前几天通知用户"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def zip_bomb() -> bytes:
    """A DOCX-shaped archive whose document.xml inflates to 300 MB (the header states it honestly)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open("word/document.xml", "w") as fh:
            chunk = b"<w:t>" + b"A" * 1_000_000 + b"</w:t>"
            for _ in range(300):
                fh.write(chunk)
    return buf.getvalue()


POISON = {
    "b-empty.md": (b"", None, "empty file"),
    "c-binary.txt": (bytes(range(256)) * 8, None, "binary"),
    "d-bomb.docx": (zip_bomb(), None, "unpacks to 300 MB"),
    "e-types.md": ("# 标题\n\n第一条 测试。\n".encode(), {"doc_id": 123}, "doc_id must be a string"),
    "f-bool.md": ("# 标题\n\n第一条 测试。\n".encode(), {"supersedes": True}, "supersedes must be a string"),
    "g-list.md": ("# 标题\n\n第一条 测试。\n".encode(), {"title": ["a", "b"]}, "title must be a string"),
    "h-badjson.md": ("# 标题\n\n第一条 测试。\n".encode(), "{not json", "sidecar is not valid UTF-8 JSON"),
    "i-typo.md": ("# 标题\n\n第一条 测试。\n".encode(), {"effective_data": "2020-01-01"}, "'effective_date'"),
    "j-foreign.md": ("# 某条例\n\n第一条 测试。\n".encode(), {"supersedes": "nat-reg-0088"}, "own corpus"),
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for name, (data, sidecar, _) in POISON.items():
        (inbox / name).write_bytes(data)
        if sidecar is not None:
            text = sidecar if isinstance(sidecar, str) else json.dumps(sidecar)
            (inbox / f"{name}.meta.json").write_text(text, encoding="utf-8")
    # good files before, between and after the poisoned ones (sorted by name)
    shutil.copy(SAMPLE / "docs" / "sh-0001.md", inbox / "a-sh-0001.md")
    shutil.copy(FIXTURES / "formats" / "sh-0001.txt", inbox / "f0-good.txt")
    shutil.copy(SAMPLE / "docs" / "ha-0001.md", inbox / "z-ha-0001.md")
    return inbox


def test_one_poisoned_batch_ingests_every_good_file_and_records_every_bad_one(tmp_path, folder, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    record = sample_manifest()["nat-reg-0088"]
    national = tmp_path / "national"
    (national / "docs").mkdir(parents=True)
    shutil.copy(SAMPLE / record["file"], national / record["file"])
    (national / "manifest.jsonl").write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    assert run(capsys, "ingest", str(national))[0] == 0
    _, before, _ = run(capsys, "ask", QUESTION, "--json")

    code, out, err = run(capsys, "ingest", str(folder))
    summary = json.loads(out)
    assert code == 2
    assert summary["failed"] == len(POISON) and summary["chunked"] == 3
    for name, (_, _, words) in POISON.items():
        line = next((ln for ln in err.splitlines() if name in ln and ln.startswith("failed")), "")
        assert words in line, (name, err)
    # the answer that did not involve the poisoned files is unchanged, and the claim on nat-reg-0088 did nothing
    _, after, _ = run(capsys, "ask", QUESTION, "--json", "--province", "national")
    _, before_national, _ = run(capsys, "ask", QUESTION, "--json", "--province", "national")
    assert json.loads(after)["bullets"] == json.loads(before_national)["bullets"]
    assert not any(c["version_status"] != "in_force" for c in json.loads(before)["citations"])


def test_a_broken_manifest_line_fails_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    root = tmp_path / "corpus"
    (root / "docs").mkdir(parents=True)
    record = sample_manifest()["sh-0001"]
    shutil.copy(SAMPLE / record["file"], root / record["file"])
    lines = ["{broken", json.dumps({"doc_id": "x"}), json.dumps({"file": "docs/missing.md"}), json.dumps(record)]
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(root))
    summary = json.loads(out)
    assert code == 2 and summary["chunked"] == 1 and summary["failed"] == 3
    assert "manifest.jsonl:1" in err and "manifest.jsonl:2" in err and "docs/missing.md: no such file" in err


def test_an_oversized_text_is_refused_up_front(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    monkeypatch.setenv("REGRAG_DATA_DIR", str(tmp_path / "data"))
    big = tmp_path / "big"
    big.mkdir()
    (big / "big.txt").write_text("第一条 " + "电" * 3_100_000, encoding="utf-8")
    code, _out, err = run(capsys, "ingest", str(big))
    assert code == 2 and "over the 3,000,000-character limit" in err
