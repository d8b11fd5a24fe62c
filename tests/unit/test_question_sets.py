"""bench/question_sets.py diff: what moved between two runs of every question set, and a blind set's quotes never
shown."""

import json

from conftest import bench_module


def _module():
    return bench_module("question_sets")


def _row(qid, span, *, abstained=False, key=True):
    bullets = [] if abstained else [["doc", "第一条", span, "〔《法》第一条〕"]]
    return {
        "id": qid,
        "answerable": True,
        "abstained": abstained,
        "bullets": bullets,
        "first_key": key,
        "some_key": key,
    }


def test_diff_lists_what_moved_and_never_shows_a_blind_sets_quotes(tmp_path, capsys):
    before = {
        "blind": ["blind"],
        "sets": {"tune": [_row("t1", "甲"), _row("t2", "乙")], "blind": [_row("b1", "秘密甲")]},
    }
    after = {
        "blind": ["blind"],
        "sets": {
            "tune": [_row("t1", "甲"), _row("t2", "丙", key=False)],
            "blind": [_row("b1", "秘密乙", abstained=True, key=False)],
        },
    }
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(before, ensure_ascii=False), encoding="utf-8")
    b.write_text(json.dumps(after, ensure_ascii=False), encoding="utf-8")
    _module().main(["diff", str(a), str(b), "--show"])
    out = capsys.readouterr().out
    assert "tune: 1 question(s) changed" in out and "t2: first_key, some_key" in out and "+ doc 第一条 丙" in out
    assert "t1:" not in out  # unchanged
    assert "b1: abstained, first_key, some_key" in out and "秘密" not in out  # counted, never shown
    assert out.strip().endswith("bullets compared 3, changed 2")
