"""Every question set through the read path, saved question by question, and two such runs compared.

    python bench/question_sets.py run --data-dir /tmp/full --out /tmp/runs/before.json [--blind s50=FILE …] [FILE …]
    python bench/question_sets.py diff /tmp/runs/before.json /tmp/runs/after.json [--show]

`run` asks every question of shared/eval (dev, lay-dev, quotes-dev) and bench/questions, and of any other files
given, as `POST /query` does (top 20, rerank off unless RERANK is set), and writes for each question whether it was
refused, the confidence level, nDCG@10, for a set with answer keys what `regrag eval` reads of its quotes (first /
some quote holds a key, first quote from a gold article, fragments, unlabelled bullets), and the bullets (doc,
article, span, marker). It prints one line per set: what a change reports on every set. `--blind NAME=FILE` adds a
set that is scored only: `diff --show` never prints its questions' quotes, so a blind set stays unread.

The code run is this tree's (`_common` puts its `shared/` first on the path): to compare two versions of the
product, run each tree's copy of this script (a `git worktree` of the older commit) and `diff` what they wrote.

`diff` lists, per set, the questions whose refusal, first key, some key, first gold article or bullets changed,
and how many bullets were compared: a change that moves nothing says "0 changed" over every set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import DEFAULT_EVAL, ROOT
from regrag.config import Settings
from regrag.inputs.parse import parse_query_request
from regrag.ops.answer_keys import key_row
from regrag.ops.evaluation import load_questions, score_ranking, unique_articles
from regrag.query.answer import answer_question
from regrag.services import Services
from regrag.wiring import build_services

TOP_K = 20  # the candidates a question is answered from, as the page asks
CHANGES = ("abstained", "first_key", "some_key", "first_gold")


def default_sets() -> dict[str, Path]:
    sets = {p.stem: p for p in (DEFAULT_EVAL.parent / f"{n}.jsonl" for n in ("dev", "lay-dev", "quotes-dev"))}
    sets.update({p.stem: p for p in sorted((ROOT / "bench" / "questions").glob("*.jsonl"))})
    return {name: path for name, path in sets.items() if path.exists()}


def question_row(q: dict[str, Any], resp: dict[str, Any]) -> dict[str, Any]:
    """One question's result, scored as `regrag eval` scores it (ops/evaluation.py, ops/answer_keys.py `key_row`),
    with its bullets to compare."""
    relevant = q.get("relevant") or [{**g, "grade": 3} for g in q.get("gold") or []]
    confidence = resp.get("confidence") or {}
    row: dict[str, Any] = {
        "id": q.get("id"),
        "answerable": q.get("answerable", True),
        "abstained": resp["abstained"],
        "level": confidence.get("level"),
        "reasons": (confidence.get("inputs") or {}).get("reasons"),
        "bullets": [
            [b["citation"]["doc_id"], b["citation"]["article"], b["span"], b["citation"]["marker"]]
            for b in resp["bullets"]
        ],
    }
    if row["answerable"] and relevant:
        row["ndcg"] = score_ranking(unique_articles(resp["candidates"]), relevant, 10)["ndcg@10"]
    if q.get("answer_keys"):
        row.update(key_row(q, resp))  # first_key, some_key, first_gold, fragments, unlabelled …
    return row


def run_set(services: Services, path: Path) -> list[dict[str, Any]]:
    rows = []
    for q in load_questions(path):
        body = {"question": q["question"], "filters": q.get("filters") or {}, "top_k": TOP_K}
        rows.append(question_row(q, answer_question(parse_query_request(body), services.read_path)))
    return rows


def summary(name: str, rows: Sequence[dict[str, Any]]) -> str:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    parts = [f"{name:24s}"]
    ndcg = [r["ndcg"] for r in answerable if r.get("ndcg") == r.get("ndcg") and "ndcg" in r]
    if ndcg:
        parts.append(f"nDCG@10 {sum(ndcg) / len(ndcg):.3f}")
    if any("first_key" in r for r in answerable):
        first, some = (sum(bool(r.get(k)) for r in answerable) for k in ("first_key", "some_key"))
        frag, unlab = (sum(r.get(k, 0) for r in answerable) for k in ("fragments", "unlabelled"))
        parts.append(f"first {first}/{len(answerable)} some {some} fragments {frag} unlabelled {unlab}")
    if answerable:
        parts.append(f"refused {sum(r['abstained'] for r in answerable)}/{len(answerable)}")
    if unanswerable:
        parts.append(f"unanswerable refused {sum(r['abstained'] for r in unanswerable)}/{len(unanswerable)}")
    return "  ".join(parts)


def run(args: argparse.Namespace) -> None:
    env = {"RERANK": "false", **os.environ, "LOG_LEVEL": "ERROR"}
    services = build_services(Settings.from_env(env, data_dir=args.data_dir))
    sets = default_sets() | {Path(f).stem: Path(f) for f in args.files}
    blind: dict[str, Path] = {}
    for given in args.blind:
        name, _, path = given.partition("=")
        blind[name] = Path(path)
    sets.update(blind)
    out: dict[str, Any] = {"blind": sorted(blind), "sets": {}}
    for name, path in sets.items():
        out["sets"][name] = run_set(services, path)
        print(summary(name, out["sets"][name]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")


def diff(args: argparse.Namespace) -> None:
    before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (args.before, args.after))
    blind = set(before.get("blind", ())) | set(after.get("blind", ()))
    compared = changed = 0
    for name, rows in before["sets"].items():
        later = {r["id"]: r for r in after["sets"].get(name, [])}
        moved = []
        for a in rows:
            b = later.get(a["id"])
            if b is None:
                continue
            compared += max(len(a["bullets"]), len(b["bullets"]))
            changed += sum(x != y for x, y in zip(a["bullets"], b["bullets"], strict=False))
            changed += abs(len(a["bullets"]) - len(b["bullets"]))
            fields = [k for k in CHANGES if a.get(k) != b.get(k)]
            if fields or a["bullets"] != b["bullets"]:
                moved.append((a, b, fields))
        if not moved:
            continue
        print(f"{name}: {len(moved)} question(s) changed")
        print(f"  before {summary(name, rows)}\n  after  {summary(name, list(later.values()))}")
        for a, b, fields in moved:
            print(f"  {a['id']}: {', '.join(fields) or 'bullets'}")
            if args.show and name not in blind:
                for tag, r in (("-", a), ("+", b)):
                    for doc, article, span, _ in r["bullets"][:3]:
                        print(f"    {tag} {doc} {article} {span[:80]}")
    print(f"bullets compared {compared}, changed {changed}")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--data-dir", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--blind", action="append", default=[], help="NAME=FILE: scored, never shown by diff --show")
    r.add_argument("files", nargs="*", help="more question files (JSONL)")
    d = sub.add_parser("diff")
    d.add_argument("before")
    d.add_argument("after")
    d.add_argument("--show", action="store_true", help="print the first bullets of each change (not for blind sets)")
    args = ap.parse_args(argv)
    (run if args.command == "run" else diff)(args)


if __name__ == "__main__":
    main(sys.argv[1:])
