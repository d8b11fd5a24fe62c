"""Evaluation of the citation check on a folder of memos with their planted problems (like citecheck-dev/):
`memo-NN.md` beside `memo-NN.json` {date, citations: [{text, doc_id, article, quote, expected: [code] | []}]}.

Per problem kind: planted, found (the status is the code planted; for a title outside the corpus, unknown_law
and wrong_title both count, as the set's README says), missed (with what was answered instead). False alarms:
correct citations (expected []) given any status but ok. Located: expected citations the check reported with
the same text at the place the memo has it. Extra: citations reported that the answer key does not list.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from regrag.check.findings import UNKNOWN_LAW, WRONG_TITLE
from regrag.check.run import check_text
from regrag.ports import ChunkStore, LexicalIndex

OUTSIDE = {UNKNOWN_LAW, WRONG_TITLE}


def load_memos(folder: str | Path) -> list[tuple[str, str, dict[str, Any]]]:
    """[(name, text, answer key)] of every memo with a .json beside it, in name order."""
    root = Path(folder)
    out = []
    for key in sorted(root.glob("*.json")):
        memo = key.with_suffix(".md")
        if memo.exists():
            out.append((memo.name, memo.read_text(encoding="utf-8"), json.loads(key.read_text(encoding="utf-8"))))
    if not out:
        raise FileNotFoundError(f"{folder}: no memo (NAME.md beside NAME.json)")
    return out


def _found(expected: dict[str, Any], status: str | None) -> bool:
    codes = set(expected["expected"]) or {"ok"}
    if status in codes:
        return True
    return expected.get("doc_id") is None and bool(codes & OUTSIDE) and status in OUTSIDE


def evaluate_memos(store: ChunkStore, folder: str | Path, lexical: LexicalIndex | None = None) -> dict[str, Any]:
    planted: Counter[str] = Counter()
    found: Counter[str] = Counter()
    exact: Counter[str] = Counter()  # found with the very code planted (not the other of unknown/wrong title)
    missed: dict[str, list[dict[str, Any]]] = defaultdict(list)
    false_alarms: list[dict[str, Any]] = []
    correct = located = total = extra = 0
    for name, text, key in load_memos(folder):
        report = check_text(text, store, lexical=lexical)
        reported = list(report["citations"])
        used: set[int] = set()
        for expected in key["citations"]:
            total += 1
            positions = [i for i, c in enumerate(reported) if i not in used and c["text"] == expected["text"]]
            same_article = [i for i in positions if reported[i]["article"] == expected.get("article")]
            candidates = same_article or positions
            got = reported[candidates[0]] if candidates else None
            if got is not None:
                used.add(candidates[0])
                located += int(text[got["start"] : got["end"]] == expected["text"])
            status = got["status"] if got else None
            row = {"memo": name, "text": expected["text"], "expected": expected["expected"], "got": status}
            if expected["expected"]:
                kind = expected["expected"][0]
                planted[kind] += 1
                if _found(expected, status):
                    found[kind] += 1
                    exact[kind] += int(status == kind)
                else:
                    missed[kind].append(row)
            else:
                correct += 1
                if status != "ok":
                    false_alarms.append(row)
        extra += len(reported) - len(used)
    kinds = sorted(planted)
    return {
        "memos": len(load_memos(folder)),
        "citations": total,
        "located": located,
        "planted": sum(planted.values()),
        "found": sum(found.values()),
        "correct_citations": correct,
        "false_alarms": len(false_alarms),
        "false_alarm_rate": round(len(false_alarms) / correct, 4) if correct else 0.0,
        "extra_reported": extra,
        "by_kind": {
            k: {"planted": planted[k], "found": found[k], "exact_code": exact[k], "missed": missed.get(k, [])}
            for k in kinds
        },
        "false_alarm_details": false_alarms,
    }


def format_memo_table(report: dict[str, Any]) -> str:
    lines = [
        f"citation check: {report['memos']} memos, {report['citations']} citations, "
        f"located {report['located']}/{report['citations']}, extra reported {report['extra_reported']}",
        "",
        "| problem | planted | found | of which with this very code | missed |",
        "|---|---|---|---|---|",
    ]
    for kind, row in report["by_kind"].items():
        lines.append(f"| {kind} | {row['planted']} | {row['found']} | {row['exact_code']} | {len(row['missed'])} |")
    lines.append(
        f"| **all problems** | {report['planted']} | {report['found']} | | {report['planted'] - report['found']} |"
    )
    lines.append("")
    lines.append(
        f"false alarms on correct citations: {report['false_alarms']}/{report['correct_citations']} "
        f"({100 * report['false_alarm_rate']:.1f} %)"
    )
    for kind, row in report["by_kind"].items():
        for m in row["missed"]:
            lines.append(f"missed {kind}: {m['memo']} {m['text']} → {m['got']}")
    for f in report["false_alarm_details"]:
        lines.append(f"false alarm: {f['memo']} {f['text']} → {f['got']}")
    return "\n".join(lines)
