"""The `regrag` command: ingest a folder with a manifest, re-ingest idempotently, ask, bad input."""

from __future__ import annotations

import json
import shutil

from regrag.cli import main

from conftest import FIXTURES, SAMPLE


def make_corpus(tmp_path, ids):
    root = tmp_path / "corpus"
    (root / "docs").mkdir(parents=True)
    lines = []
    for line in (SAMPLE / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["doc_id"] in ids:
            shutil.copy(SAMPLE / record["file"], root / record["file"])
            lines.append(line)
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_ask_and_reingest(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    corpus = make_corpus(tmp_path, {"nat-reg-0088", "sh-0001", "nat-law-0076", "nat-law-0077"})
    code, out, err = run(capsys, "ingest", str(corpus))
    assert code == 0, err
    summary = json.loads(out)
    assert summary["chunked"] == 4 and summary["failed"] == 0 and summary["index"]["documents"] == 4
    code, out, _ = run(capsys, "ingest", str(corpus), "--quiet")
    assert json.loads(out)["unchanged"] == 4  # nothing re-embedded or rewritten

    code, out, _ = run(capsys, "ask", "计划检修停电要提前几天通知用户", "--doc-class", "grid")
    assert code == 0 and "〔《" in out and "生效：" in out
    code, out, _ = run(capsys, "ask", "突发事件应对法 预防措施 处罚", "--as-of", "2015-06-01", "--json")
    body = json.loads(out)
    assert {c["doc_id"] for c in body["candidates"]} == {"nat-law-0076"}


def test_bad_files_are_reported_and_the_rest_is_ingested(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    folder = tmp_path / "inbox"
    folder.mkdir()
    shutil.copy(FIXTURES / "formats" / "sh-0001.txt", folder / "sh-0001.txt")
    (folder / "empty.md").write_bytes(b"")
    (folder / "binary.pdf").write_bytes(b"%PDF-1.4\n\x00\x01garbage")
    code, out, err = run(capsys, "ingest", str(folder))
    assert code == 2
    summary = json.loads(out)
    assert summary["chunked"] == 1 and summary["failed"] == 2
    assert "empty.md" in err and "binary.pdf" in err


def test_bad_filter_and_missing_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    code, out, _ = run(capsys, "ask", "并网", "--province", "mars")
    assert code == 1 and "unknown value" in out
    code, _, err = run(capsys, "ingest", str(tmp_path / "nope"))
    assert code == 2 and "no such file" in err


def test_bad_configuration_names_the_variable(monkeypatch, capsys):
    monkeypatch.setenv("REGRAG_TOP_K", "lots")
    code, _, err = run(capsys, "ask", "并网")
    assert code == 2 and "REGRAG_TOP_K" in err
