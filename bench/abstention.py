"""When to say "no matching provision": the signals per question, and the abstention trade-off as a curve.

    python bench/abstention.py features --data-dir /tmp/full --vector-cache /tmp/cache.sqlite \\
        --out /tmp/abst.jsonl [question files…]
    python bench/abstention.py curve /tmp/abst.jsonl [--floor 0.45] [--figure-penalty 0.3 …] [--by-kind 0.1]
    python bench/abstention.py grid /tmp/abst.jsonl

`features` runs every question through the full query path with the product's abstention switched off (floor
and confidence cut-off at zero), so every question yields quotes and every signal can be read, and writes one
JSON line per question: its set, whether it is answerable, whether the first quote is from a gold article, and
the signals `regrag.query.judge` computes (with the floor's inputs). `curve` replays the product's two
abstentions (the relevance floor, then the rule) on those lines at a range of cut-offs and prints, per cut-off,
the share of unanswerable questions abstained, the false abstention on the answerable ones (per set) and the
share of the remaining answers whose first quote answers. `grid` searches the floor's coverage, each reason's
penalty and the cut-off together and prints the front: for each number of unanswerable questions abstained, the
setting that withholds the fewest answers. Defaults: the dev set, the lay dev set and
bench/questions/unanswerable-kinds.jsonl (questions of five kinds written for this).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from _common import DEFAULT_EVAL, ROOT
from regrag.config import Settings
from regrag.domain.errors import RegragError
from regrag.inputs.parse import parse_query_request
from regrag.ops.answer_keys import holds_key
from regrag.ops.evaluation import load_questions
from regrag.query.answer import answer_question
from regrag.query.judge import AbstentionRule, RelevanceFloor, Signals
from regrag.wiring import build_services

DEFAULT_SETS = (
    DEFAULT_EVAL,
    DEFAULT_EVAL.with_name("lay-dev.jsonl"),
    ROOT / "bench" / "questions" / "unanswerable-kinds.jsonl",
)


def features(args: argparse.Namespace) -> None:
    overrides = {
        "data_dir": args.data_dir,
        "rerank": False,
        # every question quotes: the floor and the cut-off are what `curve` replays
        "relevance_floor": 0.0,
        "relevance_floor_alone": 0.0,
        "abstain_below": 0.0,
    }
    if args.vector_cache:
        overrides["vector_cache"] = args.vector_cache
    services = build_services(Settings.from_env({**os.environ, "LOG_LEVEL": "WARNING"}, **overrides))
    files = args.questions or [str(p) for p in DEFAULT_SETS]
    with open(args.out, "w", encoding="utf-8") as out:
        for path in files:
            name = Path(path).stem
            for q in load_questions(path):
                body = {"question": q["question"], "filters": q.get("filters") or {}, "top_k": 20}
                try:  # the read path itself: a benchmark's questions are not users' questions (no query log)
                    resp = answer_question(parse_query_request(body), services.read_path)
                except RegragError as exc:
                    print(f"{q.get('id')}: {exc}", file=sys.stderr)
                    continue
                relevant = q.get("relevant") or [{**g, "grade": 3} for g in q.get("gold") or []]
                gold = {(r["doc_id"], r["article"]) for r in relevant if int(r.get("grade", 1)) > 0}
                first = resp["bullets"][0] if resp["bullets"] else None
                cited = (first["citation"]["doc_id"], first["citation"]["article"]) if first else None
                row = {
                    "set": name,
                    "id": q.get("id"),
                    "kind": q.get("kind") or q.get("type"),
                    "answerable": q.get("answerable", True),
                    "first_quote_gold": cited in gold,
                    "signals": resp["confidence"]["inputs"].get("signals"),
                    "overall": resp["confidence"]["overall"],
                    "level": resp["confidence"]["level"],
                    "inputs": {k: v for k, v in resp["confidence"]["inputs"].items() if k != "signals"},
                }
                if q.get("answer_keys"):
                    row["first_quote_key"] = bool(first and holds_key(first["span"], q["answer_keys"]))
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


def _decide(row: dict, floor: RelevanceFloor, rule: AbstentionRule) -> bool:
    """The product's two abstentions replayed on one features line: the relevance floor, then the rule."""
    if not row["signals"]:
        return True  # nothing quotable even without the floor: the product abstains too
    seen = Signals.from_dict(row["signals"])
    return floor.weak(seen.best_coverage, seen.best_dense, seen.focused) or rule.abstains(seen)


def _rows(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def curve(args: argparse.Namespace) -> None:
    rows = _rows(args.features)
    floor = RelevanceFloor(coverage=args.floor)
    answered = sorted({r["set"] for r in rows if r["answerable"]})
    unanswered = sorted({r["set"] for r in rows if not r["answerable"]})
    unanswerable = [r for r in rows if not r["answerable"]]

    def n(s: str, answerable: bool) -> int:
        return sum(1 for r in rows if r["set"] == s and r["answerable"] == answerable)

    header = ["cut-off"] + [f"abstained: unanswerable of {s} (n={n(s, False)})" for s in unanswered]
    header += [f"false abst. {s} (n={n(s, True)})" for s in answered]
    header += [f"first quote answers {s}" for s in answered]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for cut in args.cutoffs:
        rule = replace(AbstentionRule(below=cut), **_penalties(args))
        decided = [(r, _decide(r, floor, rule)) for r in rows]
        cells = [f"{cut:.2f}"]
        cells += [_share([a for r, a in decided if r["set"] == s and not r["answerable"]]) for s in unanswered]
        cells += [_share([a for r, a in decided if r["set"] == s and r["answerable"]]) for s in answered]
        for s in answered:
            kept = [r["first_quote_gold"] for r, a in decided if r["set"] == s and r["answerable"] and not a]
            cells.append(_share(kept))
        print("| " + " | ".join(cells) + " |")
    if args.by_kind is not None:
        rule = replace(AbstentionRule(below=args.by_kind), **_penalties(args))
        for kind in sorted({r["kind"] for r in unanswerable}):
            these = [r for r in unanswerable if r["kind"] == kind]
            done = sum(1 for r in these if _decide(r, floor, rule))
            print(f"{kind}: {done}/{len(these)} abstained at {args.by_kind:.2f}")


def _penalties(args: argparse.Namespace) -> dict[str, float]:
    names = ("figure_penalty", "anchor_penalty", "place_penalty", "stated_penalty")
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def grid(args: argparse.Namespace) -> None:
    """Every combination of floor coverage, penalties and cut-off; per number of unanswerable questions
    abstained, the combination that withholds the fewest answers (the trade-off's front). `--hold-out` sets are
    left out of the search, for `curve` to check the chosen setting on."""
    rows = [r for r in _rows(args.features) if r["set"] not in args.hold_out]
    best: dict[int, tuple[int, str]] = {}
    for cov, pf, pa, pp, ps, cut in itertools.product(
        (0.35, 0.45, 0.55),
        (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7),
        (0.0, 0.1, 0.2),
        (0.0, 0.1, 0.2, 0.3),
        (0.0, 0.1, 0.3, 0.5),
        (0.0, 0.05, 0.1, 0.15, 0.2),
    ):
        floor = RelevanceFloor(coverage=cov)
        rule = AbstentionRule(below=cut, figure_penalty=pf, anchor_penalty=pa, place_penalty=pp, stated_penalty=ps)
        decided = [(r, _decide(r, floor, rule)) for r in rows]
        caught = sum(a for r, a in decided if not r["answerable"])
        withheld = [r["set"] for r, a in decided if r["answerable"] and a]
        label = f"floor {cov} · figure {pf} · anchor {pa} · place {pp} · stated {ps} · cut-off {cut}"
        detail = ", ".join(f"{s} {withheld.count(s)}" for s in sorted({r["set"] for r in rows if r["answerable"]}))
        if caught not in best or len(withheld) < best[caught][0]:
            best[caught] = (len(withheld), f"{label}: answers withheld {len(withheld)} ({detail})")
    total = sum(1 for r in rows if not r["answerable"])
    for caught in sorted(best):
        print(f"{caught}/{total} unanswerable abstained — {best[caught][1]}")


def _share(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)} ({100 * sum(flags) / len(flags):.0f} %)" if flags else "–"


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("features")
    f.add_argument("questions", nargs="*")
    f.add_argument("--data-dir", type=Path, required=True)
    f.add_argument("--vector-cache", type=Path)
    f.add_argument("--out", required=True)
    c = sub.add_parser("curve")
    c.add_argument("features")
    c.add_argument("--cutoffs", type=float, nargs="*", default=[0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4])
    c.add_argument("--by-kind", type=float, help="also list abstentions per kind of unanswerable at this cut-off")
    c.add_argument("--floor", type=float, default=RelevanceFloor().coverage, help="the floor's coverage")
    for name in ("figure", "anchor", "place", "stated"):
        c.add_argument(f"--{name}-penalty", type=float, help="this reason's penalty (default: the product's)")
    g = sub.add_parser("grid")
    g.add_argument("features")
    g.add_argument("--hold-out", nargs="*", default=["unanswerable-holdout"], help="sets the search never sees")
    args = ap.parse_args()
    {"features": features, "curve": curve, "grid": grid}[args.command](args)


if __name__ == "__main__":
    main()
