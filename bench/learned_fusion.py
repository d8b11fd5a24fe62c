"""A learned re-ranking of the fused candidates, cross-validated by question (measured, not adopted).

    python bench/learned_fusion.py --data-dir /tmp/full [--features 0,1,2,3,4,5,6] [--l2 0.01]

Retrieves the top 60 of every dev and lay dev question with the product's retriever, describes each of the top 30
candidates by what retrieval already knows (its fused position, each leg's rank and score, key-term coverage,
how many of its document's articles the legs rank, the document's level and place, whether it is a 法律责任
article, its length), fits a pairwise logistic ranker (RankNet, linear) on 4/5 of the questions (both sets
pooled) and re-ranks the other 1/5, five folds, three shuffles. Prints nDCG@10 and the share of questions whose
first candidate is a grade-3 article, before and after, per set. Article level, as `regrag eval` counts
(unique (doc_id, article), gain 2^grade − 1); the retrieval order only (no rerank, no compose), so the "before"
figures differ a little from `regrag eval`'s.
"""

from __future__ import annotations

import argparse
import math
import random
from collections import defaultdict
from pathlib import Path

import numpy as np

import eval_sets
from regrag.inputs.filters import parse_filters
from regrag.ops.evaluation import load_questions, score_ranking, unique_articles

TOP = 30
FEATURES = (
    "1/(position+1)",
    "dense RRF",
    "lexical RRF",
    "dense cosine",
    "cosine − best cosine",
    "BM25 / best BM25",
    "key-term coverage",
    "document's other candidates (RRF)",
    "document's articles in dense top 20",
    "document's articles in lexical top 20",
    "national law",
    "local rule",
    "法律责任 / 罚则 chapter",
    "log length",
)


def capture(data_dir: Path) -> list[dict]:
    services = eval_sets.services(data_dir)
    rows = []
    for path in eval_sets.DEFAULT_SETS:
        for q in load_questions(path):
            if not q.get("answerable", True) or not q.get("relevant"):
                continue
            found = services.retriever.retrieve(q["question"], parse_filters(q.get("filters") or {}), 60).candidates
            coverage = [c.features.coverage for c in found]
            grades = {(r["doc_id"], r["article"]): int(r["grade"]) for r in q["relevant"]}
            found_coverage = list(zip(found, coverage, strict=True))
            rows.append({"set": path.stem, "relevant": q["relevant"], "grades": grades, "found": found_coverage})
    return rows


def features(found: list) -> np.ndarray:
    top = found[:TOP]
    best_bm25 = max((c.lexical_score or 0.0) for c, _ in top) or 1.0
    best_cos = max((c.dense_score or 0.0) for c, _ in top) or 1.0
    vote, dense_vote, lexical_vote = defaultdict(float), defaultdict(int), defaultdict(int)
    for pos, (c, _) in enumerate(found):
        vote[c.chunk.doc_id] += 1 / (20 + pos)
        dense_vote[c.chunk.doc_id] += c.dense_rank is not None and c.dense_rank < 20
        lexical_vote[c.chunk.doc_id] += c.lexical_rank is not None and c.lexical_rank < 20
    rows = []
    for pos, (c, cov) in enumerate(top):
        doc, meta, heading = c.chunk.doc_id, c.chunk.meta, "/".join(c.chunk.heading_path or ())
        rows.append(
            [
                1 / (pos + 1),
                1 / (20 + c.dense_rank) if c.dense_rank is not None else 0.0,
                1 / (20 + c.lexical_rank) if c.lexical_rank is not None else 0.0,
                c.dense_score or 0.0,
                (c.dense_score or 0.0) - best_cos,
                (c.lexical_score or 0.0) / best_bm25,
                cov,
                vote[doc] - 1 / (20 + pos),
                math.log1p(dense_vote[doc]),
                math.log1p(lexical_vote[doc]),
                meta.regulation_level == "national_law",
                meta.province != "national",
                "法律责任" in heading or "罚则" in heading,
                math.log(len(c.chunk.text) + 1),
            ]
        )
    return np.array(rows, dtype=float)


def ndcg_top1(order: list, relevant: list[dict]) -> tuple[float, bool]:
    """nDCG@10 as `regrag eval` scores it, and whether the first article is a grade-3 one."""
    ranked = unique_articles([{"doc_id": c.chunk.doc_id, "article": c.chunk.article} for c in order])
    grade3 = {(r["doc_id"], r["article"]) for r in relevant if int(r["grade"]) == 3}
    return score_ranking(ranked, relevant)["ndcg@10"], bool(ranked) and ranked[0] in grade3


def fit(items: list, l2: float, epochs: int = 300, rate: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    stacked = np.vstack([x for x, _ in items])
    mu, sd = stacked.mean(0), stacked.std(0) + 1e-9
    diffs = []
    for x, y in items:
        z = (x - mu) / sd
        diffs += [z[i] - z[j] for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]
    d = np.array(diffs)
    w = np.zeros(d.shape[1])
    for _ in range(epochs):
        p = 1 / (1 + np.exp(-(d @ w)))
        w -= rate * (-(d * (1 - p)[:, None]).mean(0) + l2 * w)
    return w, mu, sd


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--features", default=",".join(str(i) for i in range(len(FEATURES))))
    ap.add_argument("--l2", type=float, default=0.01)
    args = ap.parse_args()
    keep = [int(i) for i in args.features.split(",")]
    print("features:", "; ".join(FEATURES[i] for i in keep))
    rows = capture(args.data_dir)
    data = []
    for row in rows:
        x = features(row["found"])[:, keep]
        y = np.array([row["grades"].get((c.chunk.doc_id, c.chunk.article), 0) for c, _ in row["found"][:TOP]])
        data.append((row, x, y))
    before: dict[str, list] = defaultdict(list)
    after: dict[str, list] = defaultdict(list)
    rng = random.Random(0)
    for _ in range(3):
        order = list(range(len(data)))
        rng.shuffle(order)
        for fold in (order[i::5] for i in range(5)):
            held = set(fold)
            w, mu, sd = fit([(x, y) for i, (_, x, y) in enumerate(data) if i not in held], args.l2)
            for i in fold:
                row, x, _ = data[i]
                found = [c for c, _ in row["found"]]
                ranked = [found[j] for j in np.argsort(-(((x - mu) / sd) @ w), kind="stable")] + found[TOP:]
                before[row["set"]].append(ndcg_top1(found, row["relevant"]))
                after[row["set"]].append(ndcg_top1(ranked, row["relevant"]))
    for name in before:
        b, a = np.array(before[name], dtype=float), np.array(after[name], dtype=float)
        print(
            f"{name}: nDCG@10 {b[:, 0].mean():.3f} → {a[:, 0].mean():.3f}, "
            f"first candidate grade 3 {b[:, 1].mean():.3f} → {a[:, 1].mean():.3f}"
        )
    w, _, _ = fit([(x, y) for _, x, y in data], args.l2)
    print("weights, all questions:", ", ".join(f"{FEATURES[i]} {v:+.2f}" for i, v in zip(keep, w, strict=True)))


if __name__ == "__main__":
    main()
