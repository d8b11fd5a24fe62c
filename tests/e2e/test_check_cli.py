"""`regrag check FILE`: a report a person reads, --json for a program, and an exit status a team's pipeline can
gate filings on (0 all correct, 1 a problem found, 2 the file could not be checked)."""

from __future__ import annotations

import json

from regrag.entrypoints.cli import main

from conftest import ingest_sample

GOOD = "日期：2025年9月3日\n依《中华人民共和国电力法》第十条，“电力发展规划应当根据国民经济和社会发展的需要制定”。\n"
BAD = "日期：2025年9月3日\n依《电力法》第九十九条。《电力供应与使用条例》第八条。\n依《中华人民共和国仲裁法》第十六条。"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_status_says_whether_a_problem_was_found(hash_services, tmp_path, monkeypatch, capsys):
    ingest_sample(hash_services, ["nat-law-0069", "nat-reg-0088"])
    hash_services.close()
    monkeypatch.setenv("REGRAG_EMBEDDER", "hash")
    good, bad = tmp_path / "good.md", tmp_path / "bad.txt"
    good.write_text(GOOD, encoding="utf-8")
    bad.write_text(BAD, encoding="utf-8")

    code, out, _ = run(capsys, "check", str(good))
    assert code == 0 and "✓ ok" in out and "核验日期 2025-09-03（文件日期）" in out

    # a figure the memo puts on an article that does not state it: marked to check, with the article's figures,
    # and no failure (the citation is right; what it is said to provide is for a person to compare)
    paraphrase = tmp_path / "paraphrase.md"
    paraphrase.write_text(
        "日期：2025年9月3日\n依《电力供应与使用条例》第二十八条，计划检修应提前3天通知。", encoding="utf-8"
    )
    code, out, _ = run(capsys, "check", str(paraphrase))
    assert code == 0 and "! ok（正确，请核对）" in out and "“3天”不见于该条（该条所写：7天、24小时）" in out
    assert "合计：正确 1（其中请核对 1）" in out

    code, out, _ = run(capsys, "check", str(bad))
    assert code == 1
    assert "article_missing" in out and "第九十九条" in out and "unknown_law" in out

    code, out, _ = run(capsys, "check", str(bad), "--json", "--as-of", "2020-01-01")
    body = json.loads(out)
    assert code == 1 and body["as_of"] == "2020-01-01"
    assert [c["status"] for c in body["citations"]] == ["article_missing", "ok", "unknown_law"]

    # unknown_law alone does not fail the run with --allow-unknown
    only_unknown = tmp_path / "unknown.md"
    only_unknown.write_text("依《中华人民共和国仲裁法》第十六条。", encoding="utf-8")
    assert run(capsys, "check", str(only_unknown))[0] == 1
    assert run(capsys, "check", str(only_unknown), "--allow-unknown")[0] == 0

    binary = tmp_path / "memo.docx"
    binary.write_bytes(b"\x00\x01 not a docx")
    code, _, err = run(capsys, "check", str(binary))
    assert code == 2 and "regrag check:" in err
    code, _, err = run(capsys, "check", str(tmp_path / "missing.md"))
    assert code == 2 and "missing.md" in err

    # a team's filings in one run: the worst outcome is the exit status, every file is still reported
    code, out, err = run(capsys, "check", str(good), str(binary), str(bad))
    assert code == 2 and out.count("核验日期") == 2 and "memo.docx" in err
    code, out, _ = run(capsys, "check", str(good), str(bad), "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and [line["file"] for line in lines] == [str(good), str(bad)]
