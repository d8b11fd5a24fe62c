"""held: the acts a question about a past day would be answered from, whose text of that day the library lacks."""

from dataclasses import replace

from regrag.domain.errors import Unavailable
from regrag.domain.models import Chunk, DocumentMeta, Filters
from regrag.domain.requests import QueryRequest
from regrag.domain.results import Candidate
from regrag.query.answer import answer
from regrag.query.held import later_only, note

OLD = DocumentMeta("old", "电力法", effective_date="1996-04-01", effective_to="2018-12-29", superseded_by="new")
NEW = DocumentMeta("new", "电力法", effective_date="2018-12-29", supersedes="old", effective_date_uncertain=True)
ONLY_NEW = DocumentMeta("reg", "电力供应与使用条例", effective_date="2019-03-02")
LOCAL = DocumentMeta("sh", "上海市供用电条例", effective_date="2018-05-24", province="sh")
IN_FORCE = DocumentMeta("ha", "河南省供用电条例", effective_date="2013-01-01", province="ha")
METAS = {m.doc_id: m for m in (OLD, NEW, ONLY_NEW, LOCAL, IN_FORCE)}


def chain(doc_id):
    """The supersedes chain through `doc_id`, oldest first, as views/documents.version_chain reads it."""
    versions = [METAS[doc_id]]
    while versions[0].supersedes:
        versions.insert(0, METAS[versions[0].supersedes])
    while versions[-1].superseded_by:
        versions.append(METAS[versions[-1].superseded_by])
    return versions


def ranked(*metas):
    text = "第一条 ……"
    return [
        Candidate(Chunk(f"{m.doc_id}-{i}", m.doc_id, "article", "第一条", 0, 1, i, (), 0, 5, text, text, m), 1.0)
        for i, m in enumerate(metas)
    ]


def test_only_acts_with_no_version_in_force_that_day_are_named_once_each():
    found = later_only("2015-12-31", ranked(ONLY_NEW, ONLY_NEW, NEW, IN_FORCE), chain, 5)
    assert found == [ONLY_NEW]  # 电力法's 1996 version was searched; 河南's rule was in force
    assert later_only("1990-01-01", ranked(NEW, ONLY_NEW), chain, 5) == [NEW, ONLY_NEW]  # none in force yet


def test_a_place_the_question_is_not_about_and_candidates_past_those_quoted_from_are_left_out():
    assert later_only("2015-12-31", ranked(LOCAL, ONLY_NEW), chain, 5) == [ONLY_NEW]
    assert later_only("2015-12-31", ranked(LOCAL, ONLY_NEW), chain, 5, {"sh"}) == [LOCAL, ONLY_NEW]
    assert later_only("2015-12-31", ranked(IN_FORCE, ONLY_NEW), chain, 1) == []


def test_the_note_gives_each_text_s_day_and_marks_a_day_to_check():
    text = note("1990-01-01", [NEW, ONLY_NEW])
    assert "《电力法》（2018-12-29起施行，日期待核）、《电力供应与使用条例》（2019-03-02起施行）" in text
    assert "1990-01-01" in text and "该时点有效的文本不在库中" in text


class _TodayFails:
    """The retriever, whose second search of a request (the one among today's law) meets an outage."""

    def __init__(self, retriever):
        self.inner, self.config, self.calls = retriever, retriever.config, 0

    def search(self, q, corpora, **kwargs):
        self.calls += 1
        if self.calls > 1:
            raise Unavailable("no corpus answered")
        return self.inner.search(q, corpora, **kwargs)


def test_a_past_day_is_answered_with_the_note_and_without_it_when_the_second_search_fails(hash_services):
    from conftest import ingest_sample

    ingest_sample(hash_services, ["nat-reg-0088", "ha-0001"])
    request = QueryRequest("2015年时，供电企业计划检修停电要提前几天通知用户？", Filters())
    told = answer(request, hash_services.read_path)
    assert any(n.startswith("库中《电力供应与使用条例》（2019-03-02起施行）") for n in told.answer.notes)
    assert "later_only" in told.timings_ms
    failing = _TodayFails(hash_services.retriever)
    untold = answer(request, replace(hash_services.read_path, retriever=failing))
    assert failing.calls == 2 and not any(n.startswith("库中") for n in untold.answer.notes)
    assert untold.answer.bullets == told.answer.bullets  # the answer itself stands
