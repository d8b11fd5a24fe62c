"""Helpers of the fault-injection suite (test_faults*.py): a small corpus with two version chains, twenty fixed
questions, and their answers as a fingerprint to compare an index with a clean one.

Every fault test ends the same way: after the fault and a plain re-run (or `regrag repair`, where the test says),
the index answers exactly as a clean one, and `regrag doctor` exits 0; or, before the repair, `doctor` exits 1
naming the damage. Never a silent difference.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from regrag.api import endpoints
from regrag.api.routes import call
from regrag.config import Settings
from regrag.wiring import build_services

from conftest import ROOT, SAMPLE

# two version chains (海洋环境保护法 0057 → 0058, 噪声 0067 → 0018, 突发事件应对法, 计量法实施细则) and national and
# local rules besides: the chains are what a half-done version switch would show
DOCS = (
    "nat-law-0057",
    "nat-law-0058",
    "nat-law-0067",
    "nat-law-0018",
    "nat-reg-0088",
    "sh-0001",
    "nat-law-0076",
    "nat-law-0077",
    "nat-reg-0024",
    "nat-reg-0025",
    "zj-0004",
    "ha-0001",
)
QUESTIONS = (
    "海洋环境保护法关于向海洋倾倒废弃物有什么规定？",
    "海洋生态保护红线如何划定？",
    "船舶污染海洋环境要承担什么责任？",
    "夜间施工产生噪声有什么限制？",
    "社会生活噪声污染怎么管理？",
    "工业噪声排放超标怎么处罚？",
    "供电企业因为计划检修要停电，至少要提前几天通知用户？",
    "窃电行为怎么处理？",
    "用户逾期未交付电费怎么办？",
    "上海市供电企业停电要提前多久通知？",
    "突发事件应对中企业的预防措施有哪些？",
    "突发事件发生后政府应当采取哪些应急处置措施？",
    "计量器具的检定有什么要求？",
    "制造计量器具需要取得什么许可？",
    "浙江省电网设施保护区内禁止哪些行为？",
    "电力线路保护区内能种树吗？",
    "河南省供用电合同应当包括哪些内容？",
    "用电人擅自改变用电类别怎么处理？",
    "供电设施的运行维护责任如何划分？",
    "噪声污染防治法什么时候开始施行？",
)
KILL = ROOT / "tests" / "fakes" / "kill_at.py"


def make_corpus(root: Path, doc_ids: tuple[str, ...] = DOCS) -> Path:
    """A folder with the documents' files and a manifest.jsonl of their records (in DOCS order)."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    records = {}
    for line in (SAMPLE / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            records[record["doc_id"]] = (record, line)
    lines = []
    for doc_id in doc_ids:
        record, line = records[doc_id]
        shutil.copy(SAMPLE / record["file"], root / record["file"])
        lines.append(line)
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def env(data: Path, **extra: str) -> dict[str, str]:
    """The environment of a `regrag` subprocess on `data` (hash embedder: the storage path is the same)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REGRAG_", "GEMINI_", "RERANK"))}
    paths = [str(ROOT / "shared"), str(ROOT / "tests")]
    return {
        **base,
        "REGRAG_EMBEDDER": "hash",
        "REGRAG_DATA_DIR": str(data),
        "PYTHONPATH": os.pathsep.join(paths),
        **extra,
    }


def regrag(data: Path, *argv: str, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess[str]:
    """`regrag ARGV…` in a subprocess on `data`."""
    command = [sys.executable, "-m", "regrag.entrypoints.cli", *argv]
    return subprocess.run(command, env=env(data, **extra), capture_output=True, text=True, timeout=timeout)


def killed(
    data: Path, target: str, nth: int, when: str, *argv: str, max_message_bytes: int | None = None
) -> subprocess.CompletedProcess[str]:
    """`regrag ARGV…`, SIGKILLed at the `nth` call of `target` (never with 0; tests/fakes/kill_at.py), its stage
    messages split over `max_message_bytes`."""
    split = ["--max-message-bytes", str(max_message_bytes)] if max_message_bytes else []
    command = [sys.executable, str(KILL), target, str(nth), when, *split, "--", *argv]
    return subprocess.run(command, env=env(data), capture_output=True, text=True, timeout=120)


def answers(data: Path, questions: tuple[str, ...] = QUESTIONS, **overrides: Any) -> list[Any]:
    """What the index at `data` answers to each question: the candidates' ids, the quoted spans, whether it
    abstained. Two indexes that answer alike give equal lists."""
    settings = Settings.from_env({}, data_dir=data, embedder="hash", **overrides)
    services = build_services(settings)
    try:
        out = []
        for question in questions:
            status, body = call(endpoints.query, services, {"question": question})
            out.append(
                [
                    status,
                    [c["id"] for c in body.get("candidates", [])],
                    [b["span"] for b in body.get("bullets", [])],
                    body.get("abstained"),
                ]
            )
        return out
    finally:
        services.close()


def differences(expected: list[Any], got: list[Any], questions: tuple[str, ...] = QUESTIONS) -> list[str]:
    """The questions answered differently (empty when the two indexes answer alike)."""
    return [q for q, a, b in zip(questions, expected, got, strict=True) if a != b]


def doctor(data: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return regrag(data, "doctor", **extra)


def summary(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON summary `regrag ingest` prints on stdout."""
    return dict(json.loads(result.stdout))
