"""The query path withholds quotes that miss what the question specifically asks, and says why."""

import pytest

from regrag.api import endpoints
from regrag.api.routes import call
from regrag.wiring import build_services

from conftest import ingest_sample, make_settings

FIGURE = "因电力运行事故给用户造成损害的，每户最高赔偿多少元？"  # the regulation states no amount


@pytest.fixture
def ask(tmp_path):
    made = []

    def run(question, filters=None, **overrides):
        # the relevance floor off, so that only the answer-level rule decides
        settings = make_settings(tmp_path / str(len(made)), relevance_floor=0.0, relevance_floor_alone=0.0, **overrides)
        services = build_services(settings)
        made.append(services)
        ingest_sample(services, ["nat-reg-0088"])
        status, body = call(endpoints.query, services, {"question": question, "filters": filters or {}})
        assert status == 200, body
        return body

    yield run
    for services in made:
        services.close()


def test_a_figure_no_quote_states_is_withheld_with_the_reason_and_the_candidates_kept(ask):
    body = ask(FIGURE, abstain_below=0.95)
    assert body["abstained"] and body["bullets"] == []
    assert any("引文中没有相应数值" in note for note in body["notes"])
    inputs = body["confidence"]["inputs"]
    assert inputs["abstained_by"] == "confidence" and inputs["signals"]["asks_figure"]
    assert not inputs["signals"]["figure_quoted"] and body["candidates"]  # the evidence stays visible


def test_with_the_rule_off_the_same_question_is_quoted_with_the_signals_shown(ask):
    body = ask(FIGURE, abstain_below=0.0)
    assert not body["abstained"] and body["bullets"]
    assert body["confidence"]["inputs"]["reasons"] == ["问题询问具体数值，但引文中没有相应数值"]
    assert "请注意：问题询问具体数值，但引文中没有相应数值" in body["notes"]  # answered, and the user is told


def test_a_rule_quoted_with_another_figure_than_the_question_presumes_is_answered_with_a_note(ask):
    """第二十八条 says 提前7天; asked whether it is 十五天, the quote is the answer, and the mismatch is said."""
    body = ask("法律是否规定供电企业计划检修停电要提前十五天通知用户？", abstain_below=0.1)
    assert not body["abstained"] and "7天" in "".join(b["span"] for b in body["bullets"])
    assert body["confidence"]["inputs"]["signals"]["stated_unquoted"]
    assert "请注意：问题所述的数值在引文中没有出现" in body["notes"]
    assert "请注意：问题所述的数值在引文中没有出现" in body["answer_zh"]


def test_a_figure_that_is_quoted_is_answered_even_with_a_high_cut_off(ask):
    body = ask("供电设施计划检修需要停电时，供电企业应当提前几天通知用户？", abstain_below=0.95)
    assert not body["abstained"] and "7天" in "".join(b["span"] for b in body["bullets"])


def test_filters_that_leave_no_document_are_named_as_the_reason_nothing_is_quoted(ask):
    """nat-reg-0088 is tagged 电网 (grid): asked with 光伏 (solar), nothing is searched at all, and the answer says
    that the filters, not the law, left it empty."""
    body = ask("电网企业不按规定收购电量，要承担什么责任？", filters={"asset": ["solar"]})
    assert body["abstained"] and body["bullets"] == [] and body["candidates"] == []
    assert any("所选筛选条件下没有可检索的条文" in note for note in body["notes"]), body["notes"]
    # the same question without the filter is searched
    assert ask("电网企业不按规定收购电量，要承担什么责任？")["candidates"]
