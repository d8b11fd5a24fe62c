"""The law in force on a date: each of the corpus's 10 supersedes pairs, asked before and after the switch."""

from __future__ import annotations

import datetime as dt
import json

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


def stored(services, doc_id):
    return services.store.get_document(doc_id)[0]


def ask(services, question, **filters):
    status, body = call(endpoints.query, services, {"question": question, "filters": filters})
    assert status == 200, body
    return body


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"{o}->{n}" for o, n in PAIRS])
def test_as_of_before_and_after_the_newer_version_took_effect(e5_services, old, new):
    """The switch is the day the newer version took effect (its text's 施行 date), not its promulgation."""
    newer = stored(e5_services, new)
    assert stored(e5_services, old).effective_to == newer.effective_date  # the older one ends when the newer starts
    switch = dt.date.fromisoformat(str(newer.effective_date))
    before = (switch - dt.timedelta(days=1)).isoformat()
    question = question_for(new)

    body = ask(e5_services, question, as_of=before)
    doc_ids = {c["doc_id"] for c in body["candidates"]}
    assert old in doc_ids and new not in doc_ids
    assert body["candidates"][0]["doc_id"] == old
    for cite in [c for c in body["citations"] if c["doc_id"] == old]:
        # in force that day, with a newer version already promulgated (upcoming) or replaced since; never marked
        # as replaced already, which is what a version not in force that day is
        assert cite["version_status"] in ("upcoming", "superseded_since") and cite["successor"]["doc_id"] == new
        assert "，已被取代〕" not in cite["marker"]
        assert cite["effective_date"] == stored(e5_services, old).effective_date

    body = ask(e5_services, question, as_of=switch.isoformat())
    doc_ids = {c["doc_id"] for c in body["candidates"]}
    assert new in doc_ids and old not in doc_ids
    assert body["candidates"][0]["doc_id"] == new
    assert all(c["effective_date"] == newer.effective_date for c in body["citations"] if c["doc_id"] == new)

    # include_superseded lifts the as-of filter: the version not yet in force on `before` is eligible again,
    # and quoted it is marked as not yet in force that day, never as the law then in force
    body = ask(e5_services, question, as_of=before, include_superseded=True)
    assert new in {c["doc_id"] for c in body["candidates"]}
    for bullet in body["bullets"]:
        if bullet["citation"]["doc_id"] == new:
            assert bullet["citation"]["version_status"] == "not_yet_in_force"
    # the versions in force that day are read first, the others after them
    not_the_law = [b["citation"]["version_status"] in ("superseded", "not_yet_in_force") for b in body["bullets"]]
    assert not_the_law == sorted(not_the_law)


def test_with_superseded_versions_asked_for_too_the_law_in_force_is_read_first(e5_services):
    """包含已失效的版本 adds the old versions for comparison: a new user's question read the 2009 矿产资源法 first and
    the law in force second."""
    body = ask(e5_services, "未取得采矿许可证擅自采矿的，怎么处罚？", include_superseded=True)
    statuses = [b["citation"]["version_status"] for b in body["bullets"]]
    assert "superseded" in statuses and statuses[0] == "in_force"
    not_the_law = [s in ("superseded", "not_yet_in_force") for s in statuses]
    assert not_the_law == sorted(not_the_law)


# the pairs whose newer version took effect months after its promulgation (test_the_window_pairs_of_the_sample)
WINDOWS = (
    "nat-law-0018",
    "nat-law-0058",
    "nat-law-0073",
    "nat-law-0077",
    "nat-reg-0035",
    "nat-reg-0080",
    "nat-reg-0081",
)
WINDOW_PAIRS = [(old, new) for old, new in PAIRS if new in WINDOWS]


@pytest.mark.parametrize(("old", "new"), WINDOW_PAIRS, ids=[f"{o}->{n}" for o, n in WINDOW_PAIRS])
def test_inside_the_window_between_promulgation_and_entry_into_force(e5_services, old, new):
    """Promulgated but not yet in force: the older version is the law, quoted as the law of that day, with a
    note naming both dates of the newer one and that it was not yet in force then; the newer one is never
    presented as in force. Every window of the sample has closed by now, so the older version has been replaced
    since (superseded_since), which its marker says."""
    newer = stored(e5_services, new)
    day = str(newer.promulgated)  # promulgated that day, in force months later
    body = ask(e5_services, question_for(new), as_of=day)
    assert new not in {c["doc_id"] for c in body["candidates"]}
    assert body["candidates"][0]["doc_id"] == old
    cited = [c for c in body["citations"] if c["doc_id"] == old]
    assert cited, "the version in force that day is quoted"
    assert cited[0]["version_status"] == "superseded_since"
    assert cited[0]["marker"].endswith(f"{newer.effective_date}起已被取代〕")
    assert cited[0]["successor"]["promulgated"] == newer.promulgated
    assert cited[0]["successor"]["effective_date"] == newer.effective_date
    note = next(n for n in body["notes"] if newer.title in n)
    assert newer.promulgated in note and str(newer.effective_date) in note and "当时已公布、尚未施行" in note


def test_the_window_pairs_of_the_sample():
    """Seven of the ten pairs have a window (公布 → 施行 months apart): six the manifest dates got wrong, and
    消耗臭氧层物质管理条例 2023, whose amending decision's date the sample's manifest gives
    (amendment_effective_date)."""
    from regrag.ingest.ingest import build_document
    from regrag.ports import Blob

    windows = []
    for _, new in PAIRS:
        record = MANIFEST[new]
        sidecar = {k: v for k, v in record.items() if k not in ("file", "chars", "articles") and v is not None}
        blob = Blob(record["file"], sample_text(new).encode("utf-8"), 1)
        meta = build_document(record["file"], blob, Blob("s", json.dumps(sidecar).encode(), 1), 800).meta
        if meta.promulgated and meta.promulgated < str(meta.effective_date):
            windows.append(new)
    assert tuple(sorted(windows)) == WINDOWS


def test_a_past_day_whose_law_the_library_holds_only_in_later_versions_is_told_so(e5_services):
    """2015年 is searched among the versions in force on 2015-12-31: 电力供应与使用条例 is stored only as amended
    in 2019 (the 1996 text is not in the sample), so the answer quotes the 河南 and 济南 rules in force then. The
    reader is told the library lacks the national acts' text of that day, not left to read "no national rule"
    as the law's silence; asked of 1990, before any of the texts, the refusal says so first."""
    past = ask(e5_services, "2015年时，供电企业计划检修停电要提前几天通知用户？")
    assert past["temporal"]["as_of"] == "2015-12-31" and not past["abstained"]
    held = [n for n in past["notes"] if n.startswith("库中")]
    assert len(held) == 1 and "《电力供应与使用条例》（2019-03-02起施行）" in held[0] and "2015-12-31" in held[0]
    assert "上海" not in held[0]  # a place's rule the question is not about is not named
    assert held[0] in past["answer_zh"]
    before = ask(e5_services, "供电企业计划检修停电要提前几天通知用户？", as_of="1990-01-01")
    assert before["abstained"] and before["notes"][0].startswith("库中《")
    assert before["answer_zh"].index("库中《") < before["answer_zh"].index("用语重合很少")
    today = ask(e5_services, "供电企业计划检修停电要提前几天通知用户？")
    assert not any(n.startswith("库中") for n in today["notes"])
