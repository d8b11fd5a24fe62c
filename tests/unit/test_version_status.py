"""What a citation says of its version, seen from the day asked: the law of that day, replaced since, replaced
already, or not yet in force; in the status, the note and the marker a lawyer pastes."""

import datetime as dt

import pytest

from regrag.domain.models import DocumentMeta
from regrag.domain.results import Bullet, Citation
from regrag.query.citations import (
    IN_FORCE,
    NOT_YET_IN_FORCE,
    SUPERSEDED,
    SUPERSEDED_SINCE,
    UPCOMING,
    annotate_versions,
    version_status,
)
from regrag.views.documents import reader_notes

OLD = DocumentMeta(
    "old", "电力供应与使用条例", effective_date="1996-09-01", promulgated="1996-04-17", superseded_by="new"
)
NEW = DocumentMeta("new", "电力供应与使用条例", effective_date="2019-03-02", promulgated="2019-03-02", supersedes="old")
TODAY = "2026-11-26"


@pytest.mark.parametrize(
    ("day", "status"),
    [
        ("2010-01-01", SUPERSEDED_SINCE),  # the law that day, replaced since
        ("2019-03-02", SUPERSEDED),  # the newer version took effect that very day
        ("2020-01-01", SUPERSEDED),
    ],
)
def test_an_older_version_is_the_law_of_a_day_before_its_successor_took_effect(day, status):
    assert version_status(OLD, NEW, day, TODAY).status == status


def test_a_successor_promulgated_but_not_in_force_makes_the_older_version_upcoming():
    later = DocumentMeta("new", "电力供应与使用条例", effective_date="2027-01-01", promulgated="2026-10-01")
    found = version_status(OLD, later, TODAY, TODAY)
    assert found.status == UPCOMING and "2027-01-01" in (found.note or "")


def test_a_successor_published_on_the_day_and_in_force_by_now_has_replaced_the_version_cited():
    # 修订前 dates a question the day before the newer version took effect, after its promulgation: read today,
    # "已公布、尚未施行" would hide that the newer text has been the law since
    later = DocumentMeta("new", "电力供应与使用条例", effective_date="2024-11-01", promulgated="2024-06-28")
    found = version_status(OLD, later, "2024-10-31", TODAY)
    assert found.status == SUPERSEDED_SINCE
    assert found.note is not None and "当时已公布、尚未施行" in found.note and found.note.endswith("此后已被其取代。")
    assert "2024-06-28" in found.note and "2024-11-01" in found.note
    # the same window seen on a day before the newer version took effect: still to come
    assert version_status(OLD, later, "2024-10-31", "2024-10-31").status == UPCOMING


def test_a_version_not_yet_in_force_on_the_day_is_never_the_law_then():
    found = version_status(NEW, None, "2010-01-01", TODAY)
    assert found.status == NOT_YET_IN_FORCE and "尚未施行" in (found.note or "")
    assert version_status(NEW, None, TODAY, TODAY).status == IN_FORCE


def _marker(day: str) -> str:
    citation = Citation("电力供应与使用条例", "1996-09-01", None, "old", "第二十八条")
    bullet = Bullet("第二十八条 ……", citation, "c1")
    metas = {"old": OLD, "new": NEW}
    bullets, _, _ = annotate_versions([bullet], [citation], day, metas.get, today=dt.date.fromisoformat(TODAY))
    return bullets[0].citation.marker


def test_the_marker_of_the_law_of_a_past_day_says_from_when_it_was_replaced_not_that_it_was_wrong_then():
    # a memo about 2010 cites the 1996 text rightly; a reader today learns it is no longer the law
    assert _marker("2010-01-01") == "〔《电力供应与使用条例》第二十八条，生效：1996-09-01，2019-03-02起已被取代〕"
    # asked about a day when it was no longer in force (a request for superseded versions too): it says so
    assert _marker("2020-01-01") == "〔《电力供应与使用条例》第二十八条，生效：1996-09-01，已被取代〕"


ODS_OLD = DocumentMeta("ods-old", "消耗臭氧层物质管理条例", effective_date="2018-03-19", superseded_by="ods-new")
# dated by the revision's adoption; the text does not say it took effect then (it did on 2024-03-01)
ODS_NEW = DocumentMeta(
    "ods-new",
    "消耗臭氧层物质管理条例",
    effective_date="2023-12-29",
    supersedes="ods-old",
    effective_date_uncertain=True,
)


def test_a_day_soon_after_a_date_the_text_does_not_confirm_is_told_the_version_may_not_apply():
    found = version_status(ODS_NEW, None, "2024-02-01", TODAY)
    assert found.status == IN_FORCE
    assert "施行日期待核" in (found.note or "") and "可能仍是修订前的版本" in (found.note or "")
    assert "2023-12-29（待核）" in (found.note or "")
    # a year on, the doubt no longer touches the day asked; nor does it touch a date the text confirms
    assert version_status(ODS_NEW, None, "2025-02-01", TODAY).note is None
    assert version_status(NEW, None, "2019-04-01", TODAY).note is None
    older = version_status(ODS_OLD, ODS_NEW, "2024-02-01", TODAY)
    assert older.status == SUPERSEDED and "可能已被" in (older.note or "") and "（待核）" in (older.note or "")
    assert "已被" in (version_status(ODS_OLD, ODS_NEW, "2025-02-01", TODAY).note or "")


def test_the_document_view_says_a_date_only_the_metadata_gives_and_an_end_set_by_such_a_date_are_to_check():
    metadata_only = DocumentMeta(
        "new", "建设项目环境保护管理条例", effective_date="2017-07-16", effective_date_uncertain=True
    )
    assert "来自元数据" in reader_notes(metadata_only)["effective_date"]
    ended = DocumentMeta("ods-old", "消耗臭氧层物质管理条例", effective_date="2018-03-19", effective_to="2023-12-29")
    assert "该日期待核" in reader_notes(ended, ODS_NEW)["effective_to"]
    assert "effective_to" not in reader_notes(ended, NEW)  # a successor whose date the text confirms


def test_an_article_no_article_of_the_other_version_reads_like_is_not_said_to_have_no_counterpart(hash_services):
    """The counterpart is found by wording, so a rewritten article is missed: old 环境噪声污染防治法 第五十六条
    (夜间施工 penalty) is 噪声污染防治法 第七十七条（二） in other words. The reader is told none reads like it,
    not that none corresponds; an article whose wording was kept still names its counterpart."""
    from regrag.query.lookups import NO_COUNTERPART_NOTE, StoreLookups

    from conftest import ingest_sample

    ingest_sample(hash_services, ["nat-law-0067", "nat-law-0018"])
    lookups = StoreLookups(hash_services.store)
    new = lookups.meta("nat-law-0018")
    cited = Citation("中华人民共和国环境噪声污染防治法", "2018-12-29", None, "nat-law-0067", "第五十六条")
    missed = lookups.counterpart(cited, new)
    assert missed is not None and missed["article"] is None and missed["note"] == NO_COUNTERPART_NOTE
    assert "没有与本条对应" not in NO_COUNTERPART_NOTE and "可能已被改写" in NO_COUNTERPART_NOTE
    first = Citation("中华人民共和国环境噪声污染防治法", "2018-12-29", None, "nat-law-0067", "第一条")
    kept = lookups.counterpart(first, new)
    assert kept is not None and kept["article"] == "第一条" and "note" not in kept
