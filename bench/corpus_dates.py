"""The dates and version links the corpus's own texts state, against its manifest; and the CI fixtures.

    python bench/corpus_dates.py                 # print the report (counts by basis, disagreements, links)
    python bench/corpus_dates.py --fixtures      # and rewrite tests/fixtures/corpus_{clauses.jsonl,dates,links}.tsv

CI has no ../shared/corpus, so the fixtures keep, for each of its 444 documents, the lines that can state a
date or a link (the header, and every line with 施行/实施/生效/执行/废止/制定 or a legal basis), and the results
the parser gives on the whole text; tests/unit/test_corpus_dates.py checks the parser still gives them.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
from pathlib import Path

from _common import DEFAULT_CORPUS, ROOT
from regrag.ingest.metadata import resolve_dates
from regrag.text.chunking import split_structure
from regrag.text.dates import CLAUSE_RE, entry_into_force
from regrag.text.normalize import normalize
from regrag.text.relations import find_parents, find_repeals, title_key

FIXTURES = ROOT / "tests" / "fixtures"
_LINK = re.compile(r"废止.*|制定本")


def read_corpus(corpus: Path) -> list[tuple[dict[str, object], str, list[str]]]:
    """(manifest record, normalised text, header lines) per document."""
    out = []
    for line in (corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        norm = normalize((corpus / str(record["file"])).read_text(encoding="utf-8"))
        structure = split_structure(norm, markdown=True)
        out.append((record, norm.text, structure.header_lines))
    return out


def excerpt(text: str, header_lines: list[str]) -> str:
    """The lines of the body that can state a date or a link (an entry-into-force clause, a repeal, a legal
    basis), whole, in order; the rest of the text cannot change what the parser reads."""
    body = text.split("<!-- INFO END -->", 1)[-1]
    keep = [line for line in body.splitlines() if CLAUSE_RE.search(line) or ("《" in line and _LINK.search(line))]
    return "\n".join(keep)


def facts(text: str, header_lines: list[str], title: str) -> dict[str, object]:
    """What the parser reads from one document: dates and links."""
    found = entry_into_force(text, header_lines)
    start = text.find("第一条")
    return {
        "promulgated": found.promulgated,
        "effective": found.effective,
        "basis": found.basis,
        "exceptions": [[e.scope, e.date] for e in found.exceptions],
        "repeals": [[r.title, r.date] for r in find_repeals(text)],
        "implements": [r.title for r in find_parents(text[start:] if start >= 0 else text, title)],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--fixtures", action="store_true", help="rewrite the CI fixtures")
    args = ap.parse_args()
    docs = read_corpus(args.corpus)
    by_key: dict[str, list[str]] = collections.defaultdict(list)
    for record, _, _ in docs:
        by_key[title_key(str(record["title"]))].append(str(record["doc_id"]))

    basis = collections.Counter()
    unstated = collections.Counter()  # amended texts that do not state when their latest amendment took effect
    uncertain = collections.Counter()  # what ingest marks 施行日期待核, with the manifest's date as the sidecar's
    rows, links, clauses = [], [], []
    for record, text, header in docs:
        doc_id, given = str(record["doc_id"]), str(record["effective_date"])
        found = facts(text, header, str(record["title"]))
        read = entry_into_force(text, header)
        if read.amendment:
            unstated[read.basis] += 1
        resolved = resolve_dates({"effective_date": given}, {"effective_date": "sidecar"}, text, header)
        if resolved.values["effective_date_uncertain"]:
            uncertain["amendment" if read.amendment else "a later manifest date the text does not record"] += 1
        effective = found["effective"]
        relation = (
            "same"
            if effective == given
            else "none"
            if effective is None
            else ("later" if str(effective) > given else "earlier")
        )
        basis[(found["basis"], relation)] += 1
        rows.append((doc_id, given, found["promulgated"] or "", effective or "", found["basis"], relation))
        for title, date in found["repeals"]:  # type: ignore[misc]
            match = [d for d in by_key.get(title_key(title), []) if d != doc_id]
            links.append((doc_id, "repeals", title, ",".join(match), date or ""))
        for title in found["implements"]:  # type: ignore[union-attr]
            match = [d for d in by_key.get(title_key(title), []) if d != doc_id]
            links.append((doc_id, "implements", title, ",".join(match), ""))
        clauses.append(
            {
                "doc_id": doc_id,
                "title": record["title"],
                "header": header,
                "excerpt": excerpt(text, header),
                **found,
            }
        )

    print("documents by basis and how the text's entry into force compares with the manifest date:")
    for (b, rel), n in sorted(basis.items()):
        print(f"  {b:<20} {rel:<8} {n}")
    changed = sum(n for (b, rel), n in basis.items() if rel in ("later",))
    print(f"text states a later entry into force than the manifest: {changed} of {len(docs)}")
    print(
        f"amended, the amendment's entry into force not in the text (effective_date_uncertain): "
        f"{sum(unstated.values())} ({', '.join(f'{b} {n}' for b, n in sorted(unstated.items()))})"
    )
    print(
        f"marked 施行日期待核 by ingest (the manifest's date as a sidecar): {sum(uncertain.values())} "
        f"({', '.join(f'{b} {n}' for b, n in sorted(uncertain.items()))})"
    )
    pairs = {(str(r["supersedes"]), str(r["doc_id"])) for r, _, _ in docs if r.get("supersedes")}
    found_pairs = {(m, d) for d, kind, _, match, _ in links if kind == "repeals" for m in match.split(",") if m}
    print(
        f"repeal clauses: {sum(1 for x in links if x[1] == 'repeals')}, matched to a corpus document: "
        f"{sum(1 for x in links if x[1] == 'repeals' and x[3])}; manifest pairs recovered: "
        f"{sorted(pairs & found_pairs)} of {len(pairs)}"
    )
    print(
        f"implements: {sum(1 for x in links if x[1] == 'implements')}, matched: "
        f"{sum(1 for x in links if x[1] == 'implements' and x[3])}"
    )
    if args.fixtures:
        with (FIXTURES / "corpus_clauses.jsonl").open("w", encoding="utf-8") as fh:
            for c in clauses:
                fh.write(json.dumps(c, ensure_ascii=False) + "\n")
        (FIXTURES / "corpus_dates.tsv").write_text(
            "doc_id\tmanifest_date\tpromulgated\teffective\tbasis\tversus_manifest\n"
            + "".join("\t".join(map(str, r)) + "\n" for r in rows),
            encoding="utf-8",
        )
        (FIXTURES / "corpus_links.tsv").write_text(
            "doc_id\tkind\ttitle\tmatched_doc_ids\tdate\n" + "".join("\t".join(r) + "\n" for r in links),
            encoding="utf-8",
        )
        print(f"fixtures written to {FIXTURES}")


if __name__ == "__main__":
    main()
