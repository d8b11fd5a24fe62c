"""Which signal tells the quote that answers from the one read before it: the first three quotes of every answered
question with answer keys, each with the signals the ordering could read, and how often each signal prefers the
quote holding a key.

    python bench/first_quote_signals.py --data-dir /tmp/full [FILE …]

Every question of the files given (default: quotes-dev and bench/questions/quotes-tune*.jsonl; each id once) is asked
as `POST /query` asks it (top 20, rerank off unless RERANK is set). For the answered ones whose first quote holds no
key and the second or third does, it counts, per signal, how often that quote beats the first (better / worse /
tied); for those whose first quote holds a key, how often a later quote without one beats it. A signal worth an
ordering rule wins the first count and loses the second. Signals: the candidate's retrieval rank, dense
similarity, lexical rank and key-term coverage (query/score.py), the quoted unit's fit (query/fit.py), the share of
the question's key terms the quote shows and the longest run of the question's characters it shares (order.py
rules 5 and 8).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from _common import DEFAULT_EVAL, ROOT
from regrag.config import Settings
from regrag.inputs.parse import parse_query_request
from regrag.ops.answer_keys import holds_key
from regrag.ops.evaluation import load_questions
from regrag.query.answer import answer
from regrag.query.lookups import StoreLookups
from regrag.query.order import FIRST_AMONG, shared_run
from regrag.query.quote import quote
from regrag.wiring import build_services

TOP_K = 20
LOWER_IS_BETTER = {"retrieval rank", "lexical rank"}


def quote_signals(services: Any, q: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The first FIRST_AMONG quotes of one question (those the order rules may move), with their signals and whether
    each holds a key; None when refused."""
    path = services.read_path
    body = {"question": q["question"], "filters": q.get("filters") or {}, "top_k": TOP_K}
    done = answer(parse_query_request(body), path)
    if done.answer.abstained:
        return None
    # the quotes again, with their fits (the response keeps only the bullets): the same deterministic step
    quotes = quote(done.question, done.ranked, StoreLookups(path.store).text, path.options.quote)
    by_id = {c.chunk.id: c for c in done.ranked}
    out = []
    for bullet, fit in list(zip(quotes.bullets, quotes.fits, strict=True))[:FIRST_AMONG]:
        cand = by_id[bullet.chunk_id]
        out.append(
            {
                "key": holds_key(bullet.span, q["answer_keys"]),
                "retrieval rank": cand.features.retrieval_rank,
                "dense similarity": cand.dense_score,
                "lexical rank": cand.lexical_rank,
                "coverage (article)": cand.features.coverage,
                "unit fit": fit.score,
                "key-term share of the quote": done.question.coverage(bullet.span),
                "longest run of the question's words": shared_run(done.question.text, bullet.span),
            }
        )
    return out


def _prefers(name: str, a: Any, b: Any) -> int:
    """1 when `b` beats `a` on signal `name`, -1 when it loses, 0 when tied or unknown."""
    if a is None or b is None or a == b:
        return 0
    better = b < a if name in LOWER_IS_BETTER else b > a
    return 1 if better else -1


def tally(rows: list[list[dict[str, Any]]], names: list[str]) -> dict[str, dict[str, int]]:
    counts = {n: {"better": 0, "worse": 0, "tied": 0, "against_right": 0, "for_right": 0} for n in names}
    for quotes in rows:
        first, later = quotes[0], quotes[1:]
        holder = next((x for x in later if x["key"]), None)
        for name in names:
            if not first["key"] and holder is not None:
                verdict = _prefers(name, first[name], holder[name])
                counts[name][{1: "better", -1: "worse", 0: "tied"}[verdict]] += 1
            elif first["key"]:
                for other in (x for x in later if not x["key"]):
                    verdict = _prefers(name, first[name], other[name])
                    if verdict:
                        counts[name]["against_right" if verdict > 0 else "for_right"] += 1
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    files = args.files or [
        DEFAULT_EVAL.parent / "quotes-dev.jsonl",
        *sorted((ROOT / "bench" / "questions").glob("quotes-tune*.jsonl")),
    ]
    env = {"RERANK": "false", **os.environ, "LOG_LEVEL": "ERROR"}  # as bench/question_sets.py asks
    services = build_services(Settings.from_env(env, data_dir=args.data_dir))
    seen: set[str] = set()
    rows = []
    for path in files:
        for q in load_questions(path):
            if q["id"] in seen or not q.get("answer_keys"):
                continue
            seen.add(q["id"])
            quotes = quote_signals(services, q)
            if quotes and len(quotes) > 1:
                rows.append(quotes)
    names = [n for n in rows[0][0] if n != "key"] if rows else []
    missed = sum(1 for r in rows if not r[0]["key"] and any(x["key"] for x in r[1:]))
    print(f"{len(seen)} keyed questions, {len(rows)} answered with two quotes or more; key later, not first: {missed}")
    print("| signal | key-holder vs first: better / worse / tied | keyless later vs a right first: beats / loses |")
    print("|---|---|---|")
    for name, c in tally(rows, names).items():
        print(f"| {name} | {c['better']} / {c['worse']} / {c['tied']} | {c['against_right']} / {c['for_right']} |")


if __name__ == "__main__":
    main()
