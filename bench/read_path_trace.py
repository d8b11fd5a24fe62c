"""Follow one question from the HTTP route through the read path and count what it costs in structure, not time.

    python bench/read_path_trace.py --data-dir .regrag ["question"]

Prints how often control passes from one regrag module to another: every cross-module call (and the return to a
frame of another `regrag.*` module), which grows with the number of candidates, and the distinct cross-module
call sites (caller line → callee function), which does not: how many hand-offs a reader follows. Also the
modules visited, and how many times the question itself was tokenised
(`regrag.text.segment.tokenize`, which both the keyword analysis and the lexical terms run on). Nothing here
depends on the layout, so the same script measures a tree before and after a restructuring.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

DEFAULT_QUESTION = "供电企业因为计划检修要停电，至少要提前几天通知用户？"


def trace(run: Any, question: str) -> dict[str, Any]:
    """Run `run()` under a profiler that records module transitions and tokenisations of `question`."""
    switches = 0
    sites: set[tuple[str, int, str, str]] = set()
    visited: Counter[str] = Counter()
    tokenised = 0
    current: list[str | None] = [None]

    def module_of(frame: Any) -> str | None:
        name = frame.f_globals.get("__name__", "")
        return name if name.startswith("regrag") else None

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal switches, tokenised
        if event == "call":
            mod = module_of(frame)
            caller = frame.f_back
            while caller is not None and module_of(caller) is None:  # through library frames (sorted, map …)
                caller = caller.f_back
            if mod and caller is not None and module_of(caller) != mod:
                code = frame.f_code
                if not code.co_name.startswith("__"):  # dataclass-generated methods are not hand-offs
                    sites.add((caller.f_code.co_filename, caller.f_lineno, code.co_filename, code.co_name))
            is_tokenize = mod == "regrag.text.segment" and frame.f_code.co_name == "tokenize"
            if is_tokenize and frame.f_locals.get("text") == question:
                tokenised += 1
        elif event == "return":
            mod = module_of(frame.f_back) if frame.f_back is not None else None
        else:
            return
        if mod is not None and mod != current[0]:
            if current[0] is not None:
                switches += 1
            current[0] = mod
            visited[mod] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return {
        "module_switches": switches,
        "call_sites": len(sites),
        "modules": len(visited),
        "question_tokenised": tokenised,
        "by_module": visited,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("question", nargs="?", default=DEFAULT_QUESTION)
    ap.add_argument("--data-dir", type=Path, required=True)
    args = ap.parse_args()
    os.environ.setdefault("RERANK", "false")
    os.environ["LOG_LEVEL"] = "ERROR"
    from regrag.api import endpoints
    from regrag.api.routes import call
    from regrag.config import Settings
    from regrag.wiring import build_services

    services = build_services(Settings.from_env(dict(os.environ), data_dir=args.data_dir))
    body = {"question": args.question}
    call(endpoints.query, services, body)  # warm: model, index snapshot, caches of the first call
    # the traced call is the second: steady state (the query vector comes from the cache in both trees)
    found = trace(lambda: call(endpoints.query, services, body), args.question)
    print(f"question: {args.question}")
    print(f"module switches: {found['module_switches']} across {found['modules']} modules")
    print(f"distinct cross-module call sites: {found['call_sites']}")
    print(f"question tokenised: {found['question_tokenised']} times")
    for mod, n in found["by_module"].most_common():
        print(f"  {n:4d}  {mod}")


if __name__ == "__main__":
    main()
