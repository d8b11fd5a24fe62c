"""Every document of the shared corpus: the dates and links its text states, as reviewed (bench/corpus_dates.py
wrote the fixtures; tests/fixtures/corpus_dates.tsv and corpus_links.tsv are the reviewed tables). CI has no
../shared/corpus, so the fixture keeps each document's header and every line that can state a date or a link;
when the corpus is here too, the whole texts must read the same."""

from __future__ import annotations

import json
from typing import Any

import pytest

from regrag.text.chunking import split_structure
from regrag.text.dates import entry_into_force
from regrag.text.normalize import normalize
from regrag.text.relations import find_parents, find_repeals

from conftest import FIXTURES, ROOT

CORPUS = ROOT.parent / "shared" / "corpus"
CLAUSES = [json.loads(line) for line in (FIXTURES / "corpus_clauses.jsonl").read_text(encoding="utf-8").splitlines()]


def read(text: str, header: list[str], title: str) -> dict[str, Any]:
    found = entry_into_force(text, header)
    start = text.find("第一条")
    return {
        "promulgated": found.promulgated,
        "effective": found.effective,
        "basis": found.basis,
        "exceptions": [[e.scope, e.date] for e in found.exceptions],
        "repeals": [[r.title, r.date] for r in find_repeals(text)],
        "implements": [r.title for r in find_parents(text[start:] if start >= 0 else text, title)],
    }


def test_the_fixture_covers_the_whole_corpus() -> None:
    assert len(CLAUSES) == 444 and len({c["doc_id"] for c in CLAUSES}) == 444


def test_every_document_reads_as_reviewed() -> None:
    rows = (FIXTURES / "corpus_dates.tsv").read_text(encoding="utf-8").splitlines()[1:]
    reviewed = {r.split("\t")[0]: r.split("\t") for r in rows}
    for c in CLAUSES:
        got = read(c["excerpt"], c["header"], c["title"])
        doc_id, _, promulgated, effective, basis, _ = reviewed[c["doc_id"]]
        assert (got["promulgated"] or "", got["effective"] or "", got["basis"]) == (promulgated, effective, basis), (
            doc_id
        )
        assert got == {k: c[k] for k in got}, doc_id


def test_known_documents() -> None:
    by_id = {c["doc_id"]: c for c in CLAUSES}
    # 噪声污染防治法: promulgated 2021-12-24, in force 2022-06-05; it repeals the 环境噪声污染防治法
    noise = by_id["nat-law-0018"]
    assert (noise["promulgated"], noise["effective"], noise["basis"]) == ("2021-12-24", "2022-06-05", "text")
    assert ["中华人民共和国环境噪声污染防治法", None] in noise["repeals"]
    # 电力法: amended 2018 by decision; its 1996 enactment clause must not date the current version
    assert (by_id["nat-law-0069"]["effective"], by_id["nat-law-0069"]["basis"]) == ("2018-12-29", "amendment")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not on this machine (the fixture test ran)")
def test_the_whole_texts_read_like_their_excerpts() -> None:
    manifest = {json.loads(x)["doc_id"]: json.loads(x) for x in (CORPUS / "manifest.jsonl").read_text().splitlines()}
    for c in CLAUSES:
        norm = normalize((CORPUS / manifest[c["doc_id"]]["file"]).read_text(encoding="utf-8"))
        header = split_structure(norm, markdown=True).header_lines
        assert read(norm.text, header, c["title"]) == {k: c[k] for k in read("", [], "")}, c["doc_id"]


def test_amendments_whose_entry_into_force_the_text_does_not_state() -> None:
    """An amended text dated by its latest amendment's adoption, the amending decision's own date not reprinted:
    170 of the 444 documents. A text revised whole re-enacts its clause, which dates it."""
    found = {c["doc_id"]: entry_into_force(c["excerpt"], c["header"]) for c in CLAUSES}
    unstated = {d for d, f in found.items() if f.amendment}
    assert len(unstated) == 170
    # 可再生能源法: amended 2009-12-26 by a decision in force on 2010-04-01, which its text does not say
    renewables = found["nat-law-0015"]
    assert (renewables.effective, renewables.amendment) == ("2009-12-26", "2009-12-26")
    assert "《关于修改<中华人民共和国可再生能源法>的决定》修正" in (renewables.amendment_line or "")
    # 个人所得税法: 本法自公布之日起施行 is the 1980 act's; the 2018-08-31 decision took effect on 2019-01-01
    assert found["nat-law-0003"].amendment == "2018-08-31"
    # 北京市优化营商环境条例: revised whole in 2024 (…第一次修订, no decision): its clause dates the revision
    assert found["bj-0001"].amendment is None and found["bj-0001"].basis == "on_promulgation"
    # 噪声污染防治法: a new law, its clause states its own date
    assert found["nat-law-0018"].amendment is None
