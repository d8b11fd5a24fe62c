"""Scripted model behaviour for regrag's rerank prompt, served by the Gemini fake: what the model is shown, and
answers computed from it (so a test does not hard-code which index holds which candidate)."""

from __future__ import annotations

import json
from typing import Any

from fakes.gemini_fake import Recorded, Reply


def prompt_candidates(recorded: Recorded) -> list[dict[str, Any]]:
    """The candidates as the model reads them: each line of the <candidates> block, parsed as JSON."""
    block = recorded.prompt.split("<candidates>\n", 1)[1].split("\n</candidates>", 1)[0]
    return [json.loads(line) for line in block.splitlines()]


def prefer_last(recorded: Recorded) -> Reply:
    """Scores the last candidate 10, the one before it 5 and the others 1: a visible change of order."""
    shown = prompt_candidates(recorded)
    n = len(shown)
    items = [
        {"index": c["index"], "score": 10 if c["index"] == n else 5 if c["index"] == n - 1 else 1, "reason": "测试"}
        for c in shown
    ]
    return Reply.scores(items)
