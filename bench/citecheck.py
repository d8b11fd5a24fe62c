"""The citation check: quality on memos with answer keys, a synthetic memo with planted problems at scale, and
bad input. Prints figures (bench/README.md records them).

    REGRAG_EMBEDDER=hash python bench/citecheck.py --data-dir /tmp/cc-full [--memos ../shared/eval/citecheck-dev]
        [--citations 5000]

1. `--memos`: per problem kind planted / found / missed, false alarms, references located (regrag.ops.citecheck).
2. A synthetic memo of N citations built from the index (full titles, short titles, 《条例》 back-references,
   verbatim, altered and misplaced quotations, missing articles, superseded and not-yet-in-force versions, laws
   outside the corpus, invented titles), checked in one call: wall time, time per citation, peak RSS, and the
   ratio to a tenth of it checked in the same process (linear is 10×); then the same per-kind table. The plants
   are the generator's own and are self-consistent by construction: this measures the matching at scale and
   its cost, not the parser's coverage of real writing (the memos do that).
3. Bad input through the HTTP app (in process): a 50 MB upload, a binary file, a document with no citation.
"""

from __future__ import annotations

import argparse
import io
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import ROOT, peak_rss_mb
from regrag.check.catalogue import load_catalogue
from regrag.check.provisions import fold
from regrag.check.run import check_text
from regrag.check.titles import TitleIndex
from regrag.config import Settings
from regrag.domain.models import DocumentMeta
from regrag.ops.citecheck import evaluate_memos, format_memo_table
from regrag.text.numerals import parse_numeral
from regrag.text.relations import title_key
from regrag.views.version_diff import Article, articles_of
from regrag.wiring import build_services

AS_OF = "2025-03-01"  # before the catalogue's date, so an invented national title is a wrong_title
_CLAUSE_SPLIT = "，。；："


def clauses(article: Article) -> list[str]:
    """Pieces of an article's body between punctuation, long enough to be a quotation."""
    out, current = [], []
    for ch in article.body:
        if ch in _CLAUSE_SPLIT or ch == "\n":
            piece = "".join(current).strip()
            if 12 <= len(piece) <= 80 and "“" not in piece and "”" not in piece:
                out.append(piece)
            current = []
        else:
            current.append(ch)
    return out


def alter(text: str, rng: random.Random) -> str:
    """One change a careless quotation makes: a figure changed, else a word dropped or swapped."""
    for i, ch in enumerate(text):
        if ch.isdigit():
            return text[:i] + str((int(ch) + 3) % 10) + text[i + 1 :]
    for a, b in (("应当", "可以"), ("不得", "可以"), ("以上", "以下"), ("并", "或")):
        if a in text:
            return text.replace(a, b, 1)
    i = rng.randrange(2, len(text) - 2)
    return text[:i] + text[i + 1 :]


def synthetic_memo(store: Any, n: int, seed: int = 7) -> tuple[str, list[tuple[str, str]]]:
    """A memo of `n` citations and [(reference text, planted code)] in order."""
    rng = random.Random(seed)
    metas = [m for m in store.list_documents() if m.effective_date]
    index = TitleIndex(metas, load_catalogue())
    catalogue = load_catalogue()
    texts: dict[str, list[Article]] = {}

    def arts(meta: DocumentMeta) -> list[Article]:
        if meta.doc_id not in texts:
            texts[meta.doc_id] = articles_of(store.document_chunks(meta.doc_id))
        return texts[meta.doc_id]

    # single-version laws in force on AS_OF whose title names them alone
    singles = [
        m
        for m in metas
        if not m.supersedes
        and not m.superseded_by
        and (m.effective_date or "") <= AS_OF
        and len(index.by_key.get(title_key(m.title), [])) == 1
        and len(arts(m)) >= 5
    ]
    chains = [m for m in metas if m.superseded_by]  # older versions
    corpus_keys = set(index.by_key)
    outside = [k for k in catalogue.titles if k not in corpus_keys and not any(k in c for c in corpus_keys)]
    lines: list[str] = [f"日期：{AS_OF.replace('-', '年', 1).replace('-', '月')}日", ""]
    planted: list[tuple[str, str]] = []
    kinds = ["ok", "ok", "ok", "quote_mismatch", "quote_elsewhere", "article_missing", "version", "outside"]
    while len(planted) < n:
        kind = rng.choice(kinds)
        if kind == "outside":
            if rng.random() < 0.5:
                ref = f"《中华人民共和国{rng.choice(outside)}》第{rng.choice('一二三四五六七八九')}条"
                code = "unknown_law"
            else:
                subject = rng.choice(["新能源", "储能", "绿电", "充电设施"]) + rng.choice(["投资", "建设"])
                invented = f"中华人民共和国{subject}促进法"
                ref, code = f"《{invented}》第八条", "wrong_title"
            lines.append(f"依{ref}办理。")
            planted.append((ref, code))
            continue
        if kind == "version":
            old = rng.choice(chains)
            new = next(m for m in metas if m.doc_id == old.superseded_by)
            new_arts = {a.label: a for a in arts(new)}
            # a clause the newer version's article of the same label lacks (compared as the check compares)
            changed = [a for a in arts(old) if a.label in new_arts and new_arts[a.label].body != a.body]
            pairs = [
                (a, q) for a in changed for q in clauses(a) if fold(q).text not in fold(new_arts[a.label].body).text
            ]
            if not pairs:
                continue
            article, quote = rng.choice(pairs)
            if (new.effective_date or "") <= AS_OF:
                code = "superseded"
                ref = f"《{old.title}》{article.label}"
            elif (old.effective_date or "") <= AS_OF:
                continue  # the older version is the one in force: no problem to plant
            else:
                continue
            lines.append(f"依{ref}，“{quote}”。")
            planted.append((ref, code))
            continue
        meta = rng.choice(singles)
        articles = arts(meta)
        title = meta.title
        short = title.removeprefix("中华人民共和国")
        written = rng.choice([f"《{title}》", f"《{short}》"]) if short != title else f"《{title}》"
        if kind == "article_missing":
            last = max(parse_numeral(a.label[1 : a.label.index("条")]) for a in articles)  # 民法典: global numbers
            ref = f"{written}第{_cn(last + rng.randint(3, 40))}条"
            lines.append(f"依{ref}处理。")
            planted.append((ref, "article_missing"))
            continue
        article = rng.choice(articles)
        pool = clauses(article)
        if not pool:
            continue
        quote = rng.choice(pool)
        code = "ok"
        if kind == "quote_mismatch":
            quote = alter(quote, rng)
            whole = fold("".join(a.text for a in articles)).text
            if fold(quote).text in whole:
                continue
            code = "quote_mismatch"
        elif kind == "quote_elsewhere":
            other = rng.choice(articles)
            others = [q for q in clauses(other) if fold(q).text not in fold(article.text).text]
            if other.label == article.label or not others:
                continue
            quote, code = rng.choice(others), "quote_elsewhere"
        ref = f"{written}{article.label}"
        if meta.title.endswith("条例") and planted and rng.random() < 0.3:
            # the full title once, then 《条例》 for the next citation of it
            lines.append(f"依{ref}，“{quote}”。")
            planted.append((ref, code))
            article2 = rng.choice(articles)
            ref = f"《条例》{article2.label}"
            lines.append(f"另依{ref}办理。")
            planted.append((ref, "ok"))
            continue
        lines.append(f"依{ref}，“{quote}”。")
        planted.append((ref, code))
    return "\n".join(lines) + "\n", planted[:n]


def _cn(n: int) -> str:
    from regrag.text.legal import int_to_chinese

    return int_to_chinese(n)


def score(report: dict[str, Any], planted: list[tuple[str, str]]) -> str:
    got = report["citations"]
    rows: Counter[tuple[str, str]] = Counter()
    located = 0
    for (ref, code), c in zip(planted, got, strict=False):
        located += int(c["text"] == ref)
        ok = c["status"] == code or (
            code in ("unknown_law", "wrong_title") and c["status"] in ("unknown_law", "wrong_title")
        )
        rows[(code, "found" if ok else f"got {c['status']}")] += 1
    lines = [
        f"located in order: {located}/{len(planted)} (reported {len(got)})",
        "| planted | outcome | n |",
        "|---|---|---|",
    ]
    lines += [f"| {code} | {outcome} | {n} |" for (code, outcome), n in sorted(rows.items())]
    return "\n".join(lines)


def bad_input(services: Any) -> None:
    from werkzeug.test import Client

    from regrag.api.server import wsgi_app

    client = Client(wsgi_app(services))
    cases = [
        ("50 MB upload", {"file": (io.BytesIO(b"%PDF-1.7\n" + b"0" * 50_000_000), "big.pdf")}),
        ("binary .txt", {"file": (io.BytesIO(bytes(range(256)) * 400), "memo.txt")}),
        ("no citation", {"file": (io.BytesIO("本合同第三条约定的价款应于十日内付清。".encode() * 200), "memo.md")}),
    ]
    for name, data in cases:
        started = time.perf_counter()
        response = client.post("/check", data=data, content_type="multipart/form-data")
        ms = 1000 * (time.perf_counter() - started)
        body = response.get_json()
        what = body["error"]["code"] if "error" in body else f"{len(body['citations'])} citations"
        print(f"{name:<14} HTTP {response.status_code}  {what:<28} {ms:8.1f} ms")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", required=True, help="a local index (REGRAG_DATA_DIR), e.g. of ../shared/corpus")
    p.add_argument("--memos", default=str(ROOT.parent / "shared" / "eval" / "citecheck-dev"))
    p.add_argument("--citations", type=int, default=5000)
    args = p.parse_args()
    settings = Settings.from_env({"REGRAG_EMBEDDER": "hash"}, data_dir=Path(args.data_dir))
    services = build_services(settings)
    store = services.store
    print(f"index: {store.stats()['documents']} documents")
    if args.memos and Path(args.memos).is_dir():
        started = time.perf_counter()
        report = evaluate_memos(store, args.memos, services.lexical)
        print(format_memo_table(report))
        print(f"({time.perf_counter() - started:.2f} s for {report['memos']} memos)\n")

    memo, planted = synthetic_memo(store, args.citations)
    tenth, tenth_planted = synthetic_memo(store, max(1, args.citations // 10), seed=11)
    started = time.perf_counter()
    check_text(tenth, store, lexical=services.lexical)
    small_s = time.perf_counter() - started
    started = time.perf_counter()
    report = check_text(memo, store, lexical=services.lexical)
    full_s = time.perf_counter() - started
    n = len(report["citations"])
    print(
        f"synthetic memo: {len(memo):,} characters, {n:,} citations checked in {full_s:.2f} s "
        f"({1000 * full_s / max(n, 1):.2f} ms each); {len(tenth_planted)} citations in {small_s:.2f} s; "
        f"ratio {full_s / small_s:.1f}× for {args.citations / len(tenth_planted):.0f}× the citations; "
        f"peak RSS {peak_rss_mb():.0f} MB"
    )
    print(score(report, planted))
    print()
    bad_input(services)
    services.close()


if __name__ == "__main__":
    main()
