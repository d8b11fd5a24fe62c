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
