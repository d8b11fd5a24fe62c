"""Peer baselines side by side with ours, on the same corpus, questions, filters and metrics, in one run.

    python bench/baselines.py --data-dir DIR [--questions ../shared/eval/dev.jsonl] [--k 10]

DIR is an index of the whole corpus built by `regrag ingest ../shared/corpus` (or bench/ingest_corpus.py).
Baselines rank whole articles (the unit the gold labels use) with rank_bm25's BM25Okapi:
  - whitespace BM25: tokens are `\\w+` runs, what an English-default tokenizer (LlamaIndex's) does to Chinese;
  - single-character BM25: every CJK character a token;
  - jieba BM25: jieba search-mode words (the same segmenter and dictionary as ours), alone.
Ours: dense alone, lexical (our BM25 over jieba words + single characters) alone, hybrid (RRF), and the full
query path (hybrid → rerank → compose).
Every method sees only the articles that pass the question's filters (including as_of), as the eval README says.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from _common import DEFAULT_EVAL
from regrag.api import endpoints
from regrag.config import Settings
from regrag.inputs.filters import parse_filters
from regrag.ops.evaluation import score_ranking, unique_articles
from regrag.query.retrieve import RetrievalConfig, Retriever, effective_filters
from regrag.text.segment import tokenize
from regrag.wiring import build_services

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def whitespace_tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def char_tokens(text: str) -> list[str]:
    return _CJK.findall(text)


def in_force(meta: Any, as_of: str | None) -> bool:
    """The eval README's rule: effective_date ≤ as_of and no newer version in force on as_of."""
    if not as_of:
        return True
    if meta.effective_date and meta.effective_date > as_of:
        return False
    return not (meta.effective_to and meta.effective_to <= as_of)


def passes(meta: Any, filters: dict[str, Any]) -> bool:
    for key in ("province", "asset", "doc_class", "regulation_level"):
        if key in filters:
            allowed = filters[key] if isinstance(filters[key], list) else [filters[key]]
            if getattr(meta, key) not in allowed:
                return False
    return in_force(meta, filters.get("as_of"))


def main() -> None:
    from rank_bm25 import BM25Okapi

    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--questions", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()

    # no query-embedding cache: each method pays for its own embedding, so latencies compare
    services = build_services(Settings.from_env({"LOG_LEVEL": "WARNING"}, data_dir=args.data_dir, query_cache_size=0))
    questions = [json.loads(x) for x in args.questions.read_text(encoding="utf-8").splitlines() if x.strip()]
    answerable = [q for q in questions if q.get("answerable", True) and q.get("relevant")]

    # Articles as units: the parts of a long article are joined back.
    units: list[tuple[Any, str, str]] = []  # (meta, article label, text)
    for meta in services.store.list_documents():
        texts: dict[tuple[str, int], list[str]] = defaultdict(list)
        for chunk in services.store.document_chunks(meta.doc_id):
            texts[(chunk.article, chunk.ordinal)].append(chunk.search_text)
        units.extend((meta, label, "\n".join(parts)) for (label, _), parts in texts.items())
    documents = len(services.store.list_documents())
    print(f"{len(units)} articles in {documents} documents; {len(answerable)} answerable questions")

    methods: dict[str, Any] = {}
    for name, tok in (
        ("whitespace BM25 (\\w+ tokens)", whitespace_tokens),
        ("single-character BM25", char_tokens),
        ("jieba BM25 alone", tokenize),
    ):
        t = time.perf_counter()
        bm25 = BM25Okapi([tok(text) or ["∅"] for _, _, text in units])
        print(f"built {name} in {time.perf_counter() - t:.1f} s")

        def run(q: dict[str, Any], bm25: Any = bm25, tok: Any = tok) -> list[tuple[str, str]]:
            scores = bm25.get_scores(tok(q["question"]))
            filters = q.get("filters") or {}
            order = sorted((i for i in range(len(units)) if passes(units[i][0], filters)), key=lambda i: -scores[i])
            return [(units[i][0].doc_id, units[i][1]) for i in order[: 3 * args.k] if scores[i] > 0]

        methods[name] = run

    base = services.retriever
    # the legs and the fusion alone: no key-term coverage ranking, no place scope, no national preference (the
    # full path adds all three; the rows below add them one at a time)
    scoped = replace(base.config, national_preference=1.0)
    covered = replace(scoped, place_scope=False)
    plain = replace(covered, coverage_weight=0.0)
    for name, cfg in (
        ("ours: dense alone", replace(plain, lexical_weight=0.0)),
        ("ours: lexical alone (BM25, jieba words + characters)", replace(plain, dense_weight=0.0)),
        ("ours: hybrid (RRF)", plain),
        ("ours: hybrid + key-term coverage ranking", covered),
        ("ours: hybrid + coverage + place scope", scoped),
        ("ours: hybrid + coverage + place scope + national preference", base.config),
    ):
        retriever = Retriever(
            embedder=base.embedder,
            vectors=base.vectors,
            lexical=base.lexical,
            store=base.store,
            config=RetrievalConfig(**{**cfg.__dict__}),
        )

        def run_ours(q: dict[str, Any], retriever: Retriever = retriever, cfg: Any = cfg) -> list[tuple[str, str]]:
            filters = effective_filters(parse_filters(q.get("filters")))
            found = retriever.retrieve(q["question"], filters, 3 * args.k).candidates
            if cfg.dense_weight == 0:
                found = [c for c in found if c.lexical_rank is not None]
            if cfg.lexical_weight == 0:
                found = [c for c in found if c.dense_rank is not None]
            return unique_articles([c.to_dict() for c in found])

        methods[name] = run_ours

    def run_full(q: dict[str, Any]) -> list[tuple[str, str]]:
        body = endpoints.query(
            services, {"question": q["question"], "filters": q.get("filters") or {}, "top_k": 3 * args.k}
        )
        return unique_articles(body["candidates"])

    methods[f"ours: full query path (rerank: {endpoints.health(services)['rerank']})"] = run_full

    rows = []
    for name, run in methods.items():
        scores: dict[str, list[float]] = defaultdict(list)
        latencies = []
        for q in answerable:
            t = time.perf_counter()
            ranked = run(q)
            latencies.append((time.perf_counter() - t) * 1000)
            for metric, value in score_ranking(ranked, q["relevant"], args.k).items():
                scores[metric].append(value)
        rows.append((name, {m: statistics.fmean(v) for m, v in scores.items()}, statistics.median(latencies)))

    print()
    print(f"| method | nDCG@10 | Recall@5 | Recall@{args.k} | MRR | p50 ms |")
    print("|---|---|---|---|---|---|")
    for name, m, p50 in rows:
        recall_k = m[f"recall@{args.k}"]
        print(f"| {name} | {m['ndcg@10']:.3f} | {m['recall@5']:.3f} | {recall_k:.3f} | {m['mrr']:.3f} | {p50:.1f} |")


if __name__ == "__main__":
    main()
