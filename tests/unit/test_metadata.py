"""Sidecar metadata checked against its schema, and the two dates of a version resolved from text and sidecar."""

from __future__ import annotations

import json
import re

import pytest

from regrag.domain.errors import InvalidInput
from regrag.domain.models import DateException
from regrag.ingest.metadata import articles_named, resolve_dates, sidecar_values, with_chapter_articles
from regrag.ports import Blob


def sidecar(data: object) -> Blob:
    return Blob("docs/a.md.meta.json", json.dumps(data, ensure_ascii=False).encode("utf-8"), 1)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"doc_id": 123}, "doc_id must be a string, got an integer"),
        ({"supersedes": True}, "supersedes must be a string"),
        ({"title": ["a", "b"]}, "title must be a string, got a list"),
        ({"effective_date": "2024-13-01"}, "not a valid date"),
        ({"province": "guangdong"}, "unknown value 'guangdong'"),
        ({"supercedes": "x"}, "unknown field 'supercedes'; did you mean 'supersedes'?"),
        ({"source_url": "javascript:alert(1)"}, "not a valid http(s) URL"),
        (["not", "an", "object"], "must hold a JSON object"),
    ],
)
def test_a_bad_sidecar_is_refused_naming_the_field(data: object, words: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(words)) as err:
        sidecar_values("docs/a.md.meta.json", sidecar(data))
    assert "docs/a.md.meta.json" in str(err.value)


def test_invalid_json_names_the_sidecar() -> None:
    with pytest.raises(InvalidInput, match=re.escape("docs/a.md.meta.json: sidecar is not valid UTF-8 JSON")):
        sidecar_values("docs/a.md.meta.json", Blob("x", b"{oops", 1))


def test_a_good_sidecar_is_normalised() -> None:
    values = sidecar_values(
        "s", sidecar({"title": "《电力法》", "province": "GD", "url": "https://x.cn/a", "asset": None})
    )
    assert values == {"title": "电力法", "province": "gd", "source_url": "https://x.cn/a"}


HEADER = ["2023年12月29日 第十四届全国人民代表大会常务委员会第七次会议第二次修订"]
TEXT = "第二百六十六条 本法自2024年7月1日起施行。"


def test_a_sidecar_promulgation_date_given_as_effective_is_corrected_by_the_text() -> None:
    found = resolve_dates({"effective_date": "2023-12-29"}, {"effective_date": "sidecar"}, TEXT, HEADER)
    assert found.values["effective_date"] == "2024-07-01" and found.provenance["effective_date"] == "text"
    assert found.values["promulgated"] == "2023-12-29" and found.provenance["promulgated"] == "sidecar"
    assert found.values["effective_clause"] == "第二百六十六条 本法自2024年7月1日起施行"
    [warning] = found.values["date_warnings"]
    assert "earlier than the entry into force the text states" in warning and "2024-07-01" in warning


def test_a_later_sidecar_date_is_kept_with_a_warning() -> None:
    header = ["2014年11月24日 中华人民共和国国务院令第656号公布"]
    found = resolve_dates(
        {"effective_date": "2019-03-24"}, {"effective_date": "sidecar"}, "本条例自2015年3月1日起施行。", header
    )
    assert (found.values["effective_date"], found.values["promulgated"]) == ("2019-03-24", "2019-03-24")
    assert "later than the date the text implies" in found.values["date_warnings"][0]


def test_without_a_sidecar_the_text_decides_and_explicit_promulgation_wins() -> None:
    found = resolve_dates({}, {}, TEXT, HEADER)
    assert (found.values["effective_date"], found.values["promulgated"]) == ("2024-07-01", "2023-12-29")
    assert found.values["date_warnings"] == ()
    given = resolve_dates({"promulgated": "2023-12-30"}, {"promulgated": "sidecar"}, TEXT, HEADER)
    assert given.values["promulgated"] == "2023-12-30" and given.provenance["promulgated"] == "sidecar"


def test_a_text_that_states_nothing_falls_back_to_its_header() -> None:
    found = resolve_dates({}, {}, "第八条 ……", ["2016年9月23日 某市人民代表大会常务委员会通过"])
    assert found.values["effective_date"] == "2016-09-23" and found.provenance["effective_date"] == "inferred"


def test_exception_scopes_become_article_labels() -> None:
    assert articles_named("本法第三十六条、第三十七条") == ("第三十六条", "第三十七条")
    assert articles_named("第十条至第十二条的规定") == ("第十条", "第十二条", "第十一条")
    chapter = DateException("第五章的规定", (), "2022-07-01", "第五章的规定自二〇二二年七月一日起施行")
    headings = {"第四十条": ("第五章 法律责任",), "第三条": ("第一章 总则",)}
    assert with_chapter_articles((chapter,), headings)[0].articles == ("第四十条",)


RENEWABLES_HEADER = [
    "2005年2月28日 第十届全国人民代表大会常务委员会第十四次会议通过",
    "2009年12月26日 第十一届全国人民代表大会常务委员会第十二次会议《关于修改<中华人民共和国可再生能源法>的决定》修正",
]
RENEWABLES_TEXT = "第三十三条 本法自2006年1月1日起施行。"


def test_an_amendment_whose_entry_into_force_the_text_does_not_state_is_marked_uncertain() -> None:
    found = resolve_dates({}, {}, RENEWABLES_TEXT, RENEWABLES_HEADER)
    assert found.values["effective_date"] == "2009-12-26" and found.values["effective_date_uncertain"] is True
    assert "《关于修改<中华人民共和国可再生能源法>的决定》修正" in found.values["amendment_line"]
    assert found.values["date_warnings"] == ()  # a doubt, not a correction: audit lists it by the flag
    # the corpus manifest gives the amendment's adoption as effective_date: no more certain for that
    same = resolve_dates({"effective_date": "2009-12-26"}, {"effective_date": "sidecar"}, RENEWABLES_TEXT,
                         RENEWABLES_HEADER)  # fmt: skip
    assert same.values["effective_date_uncertain"] is True


def test_a_sidecar_gives_the_amendments_entry_into_force() -> None:
    values = {"effective_date": "2009-12-26", "amendment_effective_date": "2010-04-01"}
    provenance = {"effective_date": "sidecar", "amendment_effective_date": "sidecar"}
    found = resolve_dates(values, provenance, RENEWABLES_TEXT, RENEWABLES_HEADER)
    assert found.values["effective_date"] == "2010-04-01" and found.provenance["effective_date"] == "sidecar"
    assert found.values["promulgated"] == "2009-12-26" and found.values["effective_date_uncertain"] is False
    # so does an effective_date later than the adoption (headers omit what took effect later)
    later = resolve_dates({"effective_date": "2010-04-01"}, {"effective_date": "sidecar"}, RENEWABLES_TEXT,
                          RENEWABLES_HEADER)  # fmt: skip
    assert later.values["effective_date"] == "2010-04-01" and later.values["effective_date_uncertain"] is False


@pytest.mark.parametrize(
    ("amendment", "text", "header", "words"),
    [
        ("2009-01-01", RENEWABLES_TEXT, RENEWABLES_HEADER, "is before the amendment's adoption (2009-12-26"),
        ("2024-08-01", TEXT, HEADER, "the text states when this version took effect (2024-07-01"),
        ("2024-08-01", "第十条 本条例自2020年1月1日起施行。", ["2019年12月1日 国务院公布"], "states when this version"),
        ("2024-08-01", "第十条 保护电力设施。", ["2019年12月1日 国务院公布"], "the text records no amendment"),
    ],
)
def test_an_amendment_date_the_text_contradicts_is_not_used(amendment, text, header, words) -> None:
    values = {"amendment_effective_date": amendment}
    found = resolve_dates(values, {"amendment_effective_date": "sidecar"}, text, header)
    assert found.values.get("effective_date") != amendment
    [warning] = found.values["date_warnings"]
    assert warning.startswith(f"sidecar amendment_effective_date {amendment}") and words in warning
