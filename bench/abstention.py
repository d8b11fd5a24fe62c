"""When to say "no matching provision": the signals per question, and the abstention trade-off as a curve.

    python bench/abstention.py features --data-dir /tmp/full --vector-cache /tmp/cache.sqlite \\
        --out /tmp/abst.jsonl [question files…]
    python bench/abstention.py curve /tmp/abst.jsonl

`features` runs every question through the full query path with the product's abstention switched off (floor
and confidence cut-off at zero), so every question yields quotes and every signal can be read, and writes one
JSON line per question: its set, whether it is answerable, whether the first quote is from a gold article, and
the signals `regrag.pipeline.abstention` computes. `curve` replays the product's rule on those lines at a range
of cut-offs and prints, per cut-off, the share of unanswerable questions abstained, the false abstention on the
answerable ones (per set) and the share of the remaining answers whose first quote answers. Defaults: the dev
set, the lay dev set and bench/questions/unanswerable-kinds.jsonl (32 questions of five kinds written for this).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from _common import DEFAULT_EVAL, ROOT
from regrag.api import endpoints
from regrag.api.routes import call
from regrag.config import Settings
from regrag.evaluation import load_questions
from regrag.pipeline.abstention import AbstentionRule, Signals
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
                status, resp = call(endpoints.query, services, body)
                if status != 200:
                    print(f"{q.get('id')}: HTTP {status} {resp}", file=sys.stderr)
                    continue
                gold = {(r["doc_id"], r["article"]) for r in q.get("relevant") or [] if int(r.get("grade", 1)) > 0}
                first = resp["bullets"][0]["citation"] if resp["bullets"] else None
                row = {
                    "set": name,
                    "id": q.get("id"),
                    "kind": q.get("kind") or q.get("type"),
                    "answerable": q.get("answerable", True),
                    "first_quote_gold": bool(first and (first["doc_id"], first["article"]) in gold),
                    "signals": resp["confidence"]["inputs"].get("signals"),
                    "overall": resp["confidence"]["overall"],
                }
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


def curve(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.features).read_text(encoding="utf-8").splitlines()]
    sets = sorted({r["set"] for r in rows if r["answerable"]})
    unanswerable = [r for r in rows if not r["answerable"]]
    header = ["cut-off", f"abstained unanswerable (n={len(unanswerable)})"]
    header += [f"false abst. {s} (n={sum(1 for r in rows if r['set'] == s and r['answerable'])})" for s in sets]
    header += [f"first quote answers {s}" for s in sets]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for cut in args.cutoffs:
        rule = AbstentionRule(below=cut)
        decided = [(r, rule.abstains(Signals.from_dict(r["signals"])) if r["signals"] else True) for r in rows]
        cells = [f"{cut:.2f}", _share([a for r, a in decided if not r["answerable"]])]
        for s in sets:
            cells.append(_share([a for r, a in decided if r["set"] == s and r["answerable"]]))
        for s in sets:
            kept = [r["first_quote_gold"] for r, a in decided if r["set"] == s and r["answerable"] and not a]
            cells.append(_share(kept))
        print("| " + " | ".join(cells) + " |")
    if args.by_kind:
        rule = AbstentionRule(below=args.by_kind)
        kinds = sorted({r["kind"] for r in unanswerable})
        for kind in kinds:
            these = [r for r in unanswerable if r["kind"] == kind]
            done = sum(1 for r in these if not r["signals"] or rule.abstains(Signals.from_dict(r["signals"])))
            print(f"{kind}: {done}/{len(these)} abstained at {args.by_kind:.2f}")


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
    c.add_argument("--cutoffs", type=float, nargs="*", default=[0.0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6])
    c.add_argument("--by-kind", type=float, help="also list abstentions per kind of unanswerable at this cut-off")
    args = ap.parse_args()
    features(args) if args.command == "features" else curve(args)


if __name__ == "__main__":
    main()
