"""The law in force on a date: each of the corpus's 10 supersedes pairs, asked before and after the switch."""

from __future__ import annotations

import datetime as dt

import pytest

from regrag.api import endpoints
from regrag.api.routes import call
from regrag.text.chunking import KIND_ARTICLE, split_structure
from regrag.text.normalize import normalize

from conftest import sample_manifest, sample_text

pytestmark = pytest.mark.slow

MANIFEST = sample_manifest()
PAIRS = sorted((r["supersedes"], r["doc_id"]) for r in MANIFEST.values() if r.get("supersedes"))


def question_for(doc_id: str) -> str:
    """What a user asks about an act: its name and the opening words of its first article (the purpose clause
    of the newer version, which the older version words differently or not at all)."""
    text = sample_text(doc_id)
    first = next(s for s in split_structure(normalize(text), markdown=True).segments if s.kind == KIND_ARTICLE)
    body = text[first.start : first.end].split(" ", 1)[1]
    return f"《{MANIFEST[doc_id]['title']}》{body[:40]}"


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"{o}->{n}" for o, n in PAIRS])
def test_as_of_before_and_after_the_newer_version(e5_services, old, new):
    switch = dt.date.fromisoformat(MANIFEST[new]["effective_date"])
    before = (switch - dt.timedelta(days=1)).isoformat()
    question = question_for(new)

    status, body = call(endpoints.query, e5_services, {"question": question, "filters": {"as_of": before}})
    assert status == 200
    doc_ids = {c["doc_id"] for c in body["candidates"]}
    assert old in doc_ids and new not in doc_ids
    assert body["candidates"][0]["doc_id"] == old
    cited = [c for c in body["citations"] if c["doc_id"] == old]
    if cited:  # quoted: the answer says a newer version replaced it, on the citation and on each bullet
        assert cited[0]["version_status"] == "superseded" and cited[0]["successor"]["doc_id"] == new
        assert any("取代" in n for n in body["notes"])
        for bullet in body["bullets"]:
            if bullet["citation"]["doc_id"] == old:
                assert bullet["citation"]["version_status"] == "superseded"

    status, body = call(endpoints.query, e5_services, {"question": question, "filters": {"as_of": switch.isoformat()}})
    doc_ids = {c["doc_id"] for c in body["candidates"]}
    assert new in doc_ids and old not in doc_ids
    assert body["candidates"][0]["doc_id"] == new

    # include_superseded lifts the as-of filter: the version not yet in force on `before` is eligible again
    status, body = call(
        endpoints.query, e5_services, {"question": question, "filters": {"as_of": before, "include_superseded": True}}
    )
    assert new in {c["doc_id"] for c in body["candidates"]}


def test_upcoming_version_is_announced(e5_services):
    """A newer version promulgated but not yet in force: the current one is quoted, the answer says what comes."""
    services = e5_services
    old_meta, _ = services.store.get_document("nat-reg-0034")
    new_meta, _ = services.store.get_document("nat-reg-0035")
    switch = dt.date.fromisoformat(new_meta.effective_date)
    # Ask on the day before the switch, as if that were today: the answer quotes the old one and flags the new.
    from regrag.pipeline.citations import version_note

    status, note_text = version_note(
        old_meta,
        new_meta,
        (switch - dt.timedelta(days=1)).isoformat(),
        today=(switch - dt.timedelta(days=1)).isoformat(),
    )[0::2]
    assert status == "upcoming" and new_meta.effective_date in note_text
