"""Extra retrieval legs for lay questions, measured and not adopted (bench/README "Lay questions and abstention").

    python bench/extra_legs.py term-bridge --data-dir /tmp/full --weight 0.5 --min-cosine 0.93 --neighbours 2
    python bench/extra_legs.py definitions --data-dir /tmp/full --weight 0.25 --min-shared 2
    python bench/extra_legs.py sub-questions --data-dir /tmp/full --weight 0.5 [--lexical-weight 0.25] [--context]
    python bench/extra_legs.py query-variant --variant keywords --data-dir /tmp/full --weight 0.5
    python bench/extra_legs.py sections --data-dir /tmp/full --weight 0.5 --section-weight 0.5
    python bench/extra_legs.py dense-by-length --data-dir /tmp/full --short 1.25 --long 0.75 --cut 20

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
- `query-variant`: a second dense leg from another view of the question: embedded as a passage (e5's other
  prefix), its keywords alone, or its last clause (a lay question's narrative first, its ask last).
- `sections`: each section (document title + heading path, 3,064 in the corpus) embedded once (cached in
  --cache); a dense leg re-scores the dense top --pool by cosine + --section-weight × its section's cosine, so
  an article under 借款合同 gains from a question about lending even when its own text does not say so.
- `dense-by-length`: not a leg: the dense leg's RRF weight by question length (--short below --cut characters,
  --long from it), since alone e5 ranks short questions' gold better and BM25 long ones' (gold article in each
  leg's top 10, MRR, lay-dev < 20 characters: dense 0.518, lexical 0.470; 30 – 45: 0.299 against 0.394).
"""

from __future__ import annotations

import argparse
import json
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
from regrag.query.question import question_keywords
from regrag.query.retrieve import AidLeg, QueryAids, Retriever
from regrag.text.segment import tokenize
from regrag.text.terms import query_tokens

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


def query_variant(args: argparse.Namespace, retriever: Retriever) -> LegMaker:
    def legs(r: Retriever, question: str) -> list[tuple[str, float, Callable[[Filters, int], list[Hit]]]]:
        if args.variant == "passage":
            vec = r.embedder.embed_documents([question])[0]
        elif args.variant == "keywords":
            words = [k.term for k in question_keywords(question)]
            if not words:
                return []
            vec = r.embedder.embed_query(" ".join(words))
        else:  # last-clause
            clauses = [c for c in re.split(r"[，,。；;！!]", question) if c.strip()]
            if len(clauses) < 2:
                return []
            vec = r.embedder.embed_query(clauses[-1])
        return [(args.variant, args.weight, lambda f, k: r.vectors.search(vec, f, k))]

    return legs


def sections(args: argparse.Namespace, retriever: Retriever) -> LegMaker:
    con = sqlite3.connect(f"file:{args.data_dir / 'index.sqlite'}?mode=ro", uri=True)
    titles = {doc: json.loads(meta)["title"] for doc, meta in con.execute("SELECT doc_id, meta_json FROM document")}
    section_of: dict[str, tuple[str, tuple[str, ...]]] = {}
    rows = con.execute("SELECT id, doc_id, json_extract(data_json, '$.heading_path') FROM chunk")
    for chunk_id, doc_id, path in rows:
        section_of[chunk_id] = (doc_id, tuple(json.loads(path) if path else ()))
    keys = sorted(set(section_of.values()))
    cache = args.cache or args.data_dir / "section-vectors.npy"
    if cache.exists():
        vectors = np.load(cache)
    else:
        vectors = retriever.embedder.embed_documents([" ".join([titles[doc], *path]) for doc, path in keys])
        np.save(cache, vectors)
    row = {key: i for i, key in enumerate(keys)}

    def rescored(r: Retriever, qvec: np.ndarray, f: Filters, k: int) -> list[Hit]:
        near = vectors @ qvec
        scored = sorted(
            (
                (h.score + args.section_weight * float(near[row[section_of[h.chunk_id]]]), h.chunk_id)
                for h in r.vectors.search(qvec, f, args.pool)
                if h.chunk_id in section_of
            ),
            reverse=True,
        )
        return [Hit(chunk_id, score, i + 1) for i, (score, chunk_id) in enumerate(scored[:k])]

    def legs(r: Retriever, question: str) -> list[tuple[str, float, Callable[[Filters, int], list[Hit]]]]:
        qvec = r.embedder.embed_query(question)
        return [("sections", args.weight, lambda f, k: rescored(r, qvec, f, k))]

    return legs


@dataclass(frozen=True)
class ByLengthRetriever(Retriever):
    """The product's retriever with the dense leg's weight set per question by its length."""

    weights: tuple[float, float, int] = (1.0, 1.0, 20)  # short, long, cut (characters)

    def _search(self, tokens, qvec, filters, top_k, timings=None, aids=()):  # type: ignore[no-untyped-def]
        short, long_, cut = self.weights
        weight = short if _QUESTION_LENGTH[0] < cut else long_
        weighted = replace(self, config=replace(self.config, dense_weight=weight))
        return Retriever._search(weighted, tokens, qvec, filters, top_k, timings, aids)

    def _encode(self, question: str, timings: dict[str, float]) -> tuple[list[str], np.ndarray]:
        _QUESTION_LENGTH[0] = len(question)  # the eval runs one question at a time
        return super()._encode(question, timings)


_QUESTION_LENGTH = [0]

LEG_MAKERS: dict[str, Callable[[argparse.Namespace, Retriever], LegMaker]] = {
    "term-bridge": term_bridge,
    "definitions": definitions,
    "sub-questions": sub_questions,
    "query-variant": query_variant,
    "sections": sections,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("leg", choices=[*LEG_MAKERS, "dense-by-length"])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--weight", type=float, default=0.5)
    ap.add_argument("--min-cosine", type=float, default=0.93)
    ap.add_argument("--neighbours", type=int, default=2)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--min-shared", type=int, default=2)
    ap.add_argument("--lexical-weight", type=float, default=0.0)
    ap.add_argument("--context", action="store_true")
    ap.add_argument("--variant", choices=["passage", "keywords", "last-clause"], default="keywords")
    ap.add_argument("--section-weight", type=float, default=0.5)
    ap.add_argument("--pool", type=int, default=1000)
    ap.add_argument("--short", type=float, default=1.25)
    ap.add_argument("--long", type=float, default=0.75)
    ap.add_argument("--cut", type=int, default=20)
    args = ap.parse_args()
    services = eval_sets.services(args.data_dir)
    base = services.retriever
    same = {f.name: getattr(base, f.name) for f in fields(base)}
    if args.leg == "dense-by-length":
        retriever: Retriever = ByLengthRetriever(**same, weights=(args.short, args.long, args.cut))
        label = f"dense weight {args.short} below {args.cut} characters, {args.long} from it"
    else:
        retriever = ExtraLegRetriever(**same, extra=LEG_MAKERS[args.leg](args, base))
        label = f"{args.variant if args.leg == 'query-variant' else args.leg} weight {args.weight}"
    print(eval_sets.row(replace(services, retriever=retriever), label, eval_sets.DEFAULT_SETS))


if __name__ == "__main__":
    main()
