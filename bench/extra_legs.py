"""Extra retrieval legs for lay questions, measured and not adopted (bench/README "Lay questions and abstention").

    python bench/extra_legs.py term-bridge --data-dir /tmp/full --weight 0.5 --min-cosine 0.93 --neighbours 2
    python bench/extra_legs.py definitions --data-dir /tmp/full --weight 0.25 --min-shared 2
    python bench/extra_legs.py sub-questions --data-dir /tmp/full --weight 0.5 [--lexical-weight 0.25] [--context]

Each adds one or more legs to the product's fusion (as the retrieval aids do: `AidLeg`, RRF with its own weight)
and runs `regrag eval` on the dev and lay dev sets, printing one Markdown row like bench/eval_sets.py:
- `term-bridge`: each question word the corpus never uses (not in the lexical vocabulary: 偷电, 盗刷, 话剧) is
  embedded and its nearest corpus words (by the embedder's own query vectors of the vocabulary, cached in
  --cache) are added to the question's words as a weighted lexical query: a lay→statute term table built by the
  embedding model over the corpus's own words (偷电 → 窃电 0.970, 盗刷 → 盗窃 0.946).
- `definitions`: the corpus's definitions (本法所称X，是指Y) as a table from the words of Y to X: a question that
  shares at least --min-shared words with a definition's Y searches X too.
- `sub-questions`: a question that asks two things (…？…？) gets a dense leg (and optionally a lexical one) per
  sub-question, the later ones optionally prefixed with the first one's opening clause (they often drop it).
"""

from __future__ import annotations

import argparse
import math
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

import eval_sets
from regrag.domain.models import Filters, Hit
from regrag.pipeline.keywords import question_keywords
from regrag.pipeline.lexical import query_tokens
from regrag.pipeline.retrieve import AidLeg, QueryAids, Retriever
from regrag.text.segment import tokenize

_CJK_WORD = re.compile(r"^[\u4e00-\u9fff]{2,8}$")
_DEFINITION = re.compile(r"(?:所称|“)([^，。；：“”（）\s]{2,16})”?，?(?:是指|指)([^。；]{4,200})")

# question → the extra legs' searches, given the retriever (its embedder and indexes)
LegMaker = Callable[[Retriever, str], list[tuple[str, float, Callable[[Filters, int], list[Hit]]]]]


@dataclass(frozen=True)
class ExtraLegRetriever(Retriever):
    """The product's retriever with the experiment's legs added to the aids of every query."""

    extra: LegMaker | None = None

    def _prepare_aids(self, question: str, qvec: np.ndarray, timings: dict[str, float]) -> QueryAids:
        aids = super()._prepare_aids(question, qvec, timings)
        if self.extra is None:
            return aids
        legs = tuple(AidLeg(name, weight, search) for name, weight, search in self.extra(self, question))
        return replace(aids, legs=aids.legs + legs)


def _vocabulary(data_dir: Path) -> list[str]:
    con = sqlite3.connect(f"file:{data_dir / 'index.sqlite'}?mode=ro", uri=True)
    return sorted(term for (term,) in con.execute("SELECT term FROM lex_vocab"))


def term_bridge(args: argparse.Namespace, retriever: Retriever) -> LegMaker:
    known = set(_vocabulary(args.data_dir))
    words = sorted(t for t in known if _CJK_WORD.match(t))
    cache = args.cache or args.data_dir / "vocabulary-vectors.npz"
    if cache.exists():
        stored = np.load(cache, allow_pickle=True)
        words, vectors = list(stored["words"]), stored["vectors"]
    else:  # the same query-side vectors as the question's words, so that the two compare like for like
        vectors = np.vstack([retriever.embedder.embed_query(w) for w in words]).astype(np.float32)
        np.savez(cache, words=np.array(words, dtype=object), vectors=vectors)

    def legs(r: Retriever, question: str) -> list[tuple[str, float, Callable[[Filters, int], list[Hit]]]]:
        unknown = [k.term for k in question_keywords(question) if _CJK_WORD.match(k.term) and k.term not in known]
        bridged = []
        for word in unknown:
            sims = vectors @ r.embedder.embed_query(word)
            for i in np.argsort(-sims)[: args.neighbours]:
                if sims[i] >= args.min_cosine and words[i] not in question:
                    bridged.append(words[i])
        if not bridged:
            return []
        tokens = query_tokens(question) + [t for w in bridged for t in query_tokens(w)]
        return [("term_bridge", args.weight, lambda f, k: r.lexical.search(tokens, f, k))]

    return legs


def definitions(args: argparse.Namespace, retriever: Retriever) -> LegMaker:
    con = sqlite3.connect(f"file:{args.data_dir / 'index.sqlite'}?mode=ro", uri=True)
    table: dict[tuple[str, str], set[str]] = {}
    for (raw,) in con.execute("SELECT json_extract(data_json, '$.text') FROM chunk"):
        for m in _DEFINITION.finditer(raw or ""):
            table[(m.group(1), m.group(2))] = {w for w in tokenize(m.group(2)) if len(w) >= 2}
    entries = [(term, body_words) for (term, _), body_words in table.items()]
    df = Counter(w for _, ws in entries for w in ws)
    idf = {w: math.log(1 + len(entries) / n) for w, n in df.items()}
    postings = defaultdict(list)
    for i, (_, ws) in enumerate(entries):
        for w in ws:
            postings[w].append(i)
    print(f"{len(entries)} definitions")

    def legs(r: Retriever, question: str) -> list[tuple[str, float, Callable[[Filters, int], list[Hit]]]]:
        score, shared = Counter(), Counter()
        for w in {w for w in tokenize(question) if len(w) >= 2}:
            for i in postings.get(w, ()):
                score[i] += idf[w]
                shared[i] += 1
        terms = [entries[i][0] for i, _ in score.most_common() if shared[i] >= args.min_shared]
        terms = [t for t in terms if t not in question][:2]
        tokens = [tok for t in terms for tok in query_tokens(t)]
        return [("definitions", args.weight, lambda f, k: r.lexical.search(tokens, f, k))] if tokens else []

    return legs


def sub_questions(args: argparse.Namespace, retriever: Retriever) -> LegMaker:
    def legs(r: Retriever, question: str) -> list[tuple[str, float, Callable[[Filters, int], list[Hit]]]]:
        parts = [p.strip() for p in re.split(r"(?<=[？?])", question) if p.strip()]
        if len(parts) < 2:
            return []
        if args.context:
            opening = re.split(r"[，,。；]", parts[0])[0]
            parts = [parts[0]] + [f"{opening}，{p}" for p in parts[1:]]
        out = []
        for part in parts:
            vec, tokens = r.embedder.embed_query(part), query_tokens(part)
            out.append(("sub_dense", args.weight, lambda f, k, v=vec: r.vectors.search(v, f, k)))
            if args.lexical_weight > 0 and tokens:
                out.append(("sub_lexical", args.lexical_weight, lambda f, k, t=tokens: r.lexical.search(t, f, k)))
        return out

    return legs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("leg", choices=["term-bridge", "definitions", "sub-questions"])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--weight", type=float, default=0.5)
    ap.add_argument("--min-cosine", type=float, default=0.93)
    ap.add_argument("--neighbours", type=int, default=2)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--min-shared", type=int, default=2)
    ap.add_argument("--lexical-weight", type=float, default=0.0)
    ap.add_argument("--context", action="store_true")
    args = ap.parse_args()
    services = eval_sets.services(args.data_dir)
    base = services.retriever
    maker = {"term-bridge": term_bridge, "definitions": definitions, "sub-questions": sub_questions}[args.leg]
    retriever = ExtraLegRetriever(**{f.name: getattr(base, f.name) for f in fields(base)}, extra=maker(args, base))
    label = f"{args.leg} weight {args.weight}"
    print(eval_sets.row(replace(services, retriever=retriever), label, eval_sets.DEFAULT_SETS))


if __name__ == "__main__":
    main()
