"""The question-form ranking: the kind of provision a question asks for moves that kind up, nothing else."""

import re

import pytest

from regrag.domain.models import Chunk, DocumentMeta, Filters
from regrag.domain.results import Candidate
from regrag.query.forms import SOURCES, asked_forms, forms, wordings
from regrag.query.question import analyse
from regrag.query.score import ScoringConfig, score

from conftest import SAMPLE


def cand(cid, text, heading=()):
    meta = DocumentMeta(doc_id="d", title="t", effective_date="2020-01-01")
    chunk = Chunk(cid, "d", "article", cid, 0, 1, 1, tuple(heading), 0, len(text), text, text, meta)
    return Candidate(chunk, 1.0)


def form_rerank(ranked, question, k, weight):
    cfg = ScoringConfig(rrf_k=k, coverage_weight=0.0, form_weight=weight, place_scope=True, national_preference=1.0)
    return [c.chunk.article for c in score(analyse(question, Filters()), ranked, cfg).candidates]


def test_forms_are_read_from_how_the_question_asks():
    assert [f.name for f in asked_forms("偷电被发现了会怎么处罚？")] == ["penalty"]
    # the verb 罚 in any form a question asks it, not only 罚多少 / 怎么罚 / 被罚
    assert [f.name for f in asked_forms("没装燃气泄漏报警器，查到了会挨罚吗？")] == ["penalty"]
    assert [f.name for f in asked_forms("这种情况罚不罚？")] == ["penalty"]
    assert [f.name for f in asked_forms("建光伏电站需要办理哪些手续？")] == ["procedure", "enumeration"]
    assert [f.name for f in asked_forms("由哪一级政府责令改正？")] == ["authority"]
    assert [f.name for f in asked_forms("停电要提前几天通知？")] == ["time_limit"]
    assert asked_forms("光伏电站的土地怎么使用") == ()


def test_where_to_complain_is_asked_by_the_statutes_words_for_it_and_by_where_with_an_everyday_verb():
    """能去哪里投诉 asks for the provision that opens a complaint (可以向电力管理部门投诉), a form of its own: the
    statute's words for lodging one (投诉, 举报, 仲裁, 复议 …) and 哪里 with the everyday verbs (反映, 告)."""
    assert [f.name for f in asked_forms("发现小厂半夜往河里排污水，能找哪里反映？")] == ["recourse"]
    assert [f.name for f in asked_forms("老板欠薪，我能去劳动仲裁吗？")] == ["recourse"]
    recourse = next(f for f in forms() if f.name == "recourse")
    assert recourse.answered.search("用户对供电企业中断供电有异议的，可以向电力管理部门投诉；")
    assert not recourse.answered.search("供电企业应当按照国家有关规定事先通知用户。")
    # 反映 alone is how a statute says a text reflects something (反映实际情况): only asked with 哪里
    assert asked_forms("统计数据应当真实反映能耗情况吗？") == ()


def test_the_latest_day_asked_is_a_time_limit_but_when_alone_is_not():
    """最晚 / 最迟 ask for a deadline (最晚什么时候之前要提出); 什么时候 alone asks when something happens, which a
    condition answers as often as a period (仓储合同什么时候成立: 意思表示一致时), so it is not a time limit."""
    assert "time_limit" in [f.name for f in asked_forms("想申请行政复议，最晚什么时候之前要提出？")]
    assert [f.name for f in asked_forms("施工单位最迟什么时候要报告？")] == ["time_limit"]
    assert asked_forms("仓储合同什么时候成立？") == ()


def test_what_someone_must_do_is_asked_as_a_duty_and_answered_by_the_words_of_obligation():
    assert [f.name for f in asked_forms("停电时商场应该怎么做？")] == ["duty"]
    assert [f.name for f in asked_forms("邻居死活不让，他有义务配合吗？")] == ["duty"]
    # 义务 inside a name (土地复垦义务人) asks nothing
    assert asked_forms("土地复垦义务人提交的报告由谁审查？") == tuple(f for f in forms() if f.name == "authority")
    duty = next(f for f in forms() if f.name == "duty")
    assert duty.answered.search("供电人依据前款规定中止供电的，应当事先通知用电人。")
    assert not duty.answered.search("供电人可以按照国家规定的程序中止供电。")


def test_who_bears_a_cost_is_asked_of_the_clause_that_puts_it_on_someone_not_of_an_authority():
    """检定费用由谁承担 asks who pays (由谁 + a verb of bearing), not which body decides: it was read as asking an
    authority too, and the 款 naming 计量检定机构 was quoted instead of the one saying 检定费用由供电企业承担."""
    assert [f.name for f in asked_forms("检定费用由谁承担？")] == ["liability"]
    assert [f.name for f in asked_forms("由谁批准？")] == ["authority"]
    # 赔 is how a lay question asks for liability (能让他们赔吗), as 赔偿 is the statute's
    assert [f.name for f in asked_forms("停电没提前通知，冰柜里的货全坏了，能让他们赔吗？")] == ["liability"]
    liability = next(f for f in forms() if f.name == "liability")
    assert liability.answered.search("异议成立的，检定费用由供电企业承担；")
    assert not liability.answered.search("可以委托计量检定机构检定，供电企业应当配合。")


def test_candidates_of_the_asked_kind_move_up_and_nothing_is_dropped():
    ranked = [
        cand("第一条", "为了加强电力供应与使用的管理，制定本条例。"),
        cand("第二条", "禁止窃电行为。"),
        cand("第三十一条", "窃电的，由电力管理部门责令停止违法行为，并处应交电费五倍以下的罚款。", ["第六章 法律责任"]),
    ]
    out = form_rerank(ranked, "偷电会被怎么处罚？", k=20, weight=1.0)
    # RRF: a preference of one rank here, past the article that shares only the noun
    assert out == ["第一条", "第三十一条", "第二条"]
    assert set(out) == {c.chunk.article for c in ranked}


def test_no_known_form_or_zero_weight_leaves_the_order():
    ranked = [cand("a", "罚款"), cand("b", "其他")]
    assert form_rerank(ranked, "光伏电站的土地怎么使用", 20, 1.0) == ["a", "b"]
    assert form_rerank(list(reversed(ranked)), "怎么处罚", 20, 0.0) == ["b", "a"]


def test_the_wordings_come_from_a_data_file_that_says_where_each_came_from():
    rows = wordings()
    assert {r.form for r in rows} == {f.name for f in forms()} and len(rows) > 100
    assert all(r.source.split()[0] in SOURCES for r in rows)
    # an everyday word is the asker's, not the statute's: no sample document uses it
    texts = [p.read_text(encoding="utf-8") for p in (SAMPLE / "docs").glob("*.md")]
    everyday = [r.pattern for r in rows if r.source == "everyday"]
    assert everyday and not [w for w in everyday if any(re.search(w, t) for t in texts)]


def test_a_bad_row_is_an_error_naming_its_line():
    header = "# form\tside\tpattern\tsource\n"
    with pytest.raises(ValueError, match=r"question_forms\.tsv line 2: expected 4 tab-separated cells"):
        wordings(header + "penalty\tasked\t处罚\n")
    with pytest.raises(ValueError, match="line 2: expected form"):
        wordings(header + "penalty\tanswer\t罚款\tcorpus 1/1\n")
    with pytest.raises(ValueError, match="line 2: expected form"):
        wordings(header + "penalty\tasked\t处罚\tmy guess\n")
    with pytest.raises(ValueError, match="line 2: expected a regular expression"):
        wordings(header + "penalty\tasked\t处罚(\tquestion\n")


def test_the_forms_asked_are_read_from_the_clauses_that_ask():
    """报批 tells the act fined, not a procedure asked, when the clause that asks names the fine; a question whose
    asking clause names no form is read whole."""
    fine = analyse("建设单位未报批环评报告书就擅自开工建设，罚款幅度是多少？", Filters())
    assert [f.name for f in fine.forms] == ["penalty"]
    whole = analyse("风电项目开工前的审批手续，具体是什么？", Filters())
    assert [f.name for f in whole.forms] == ["procedure"]
    # the situation's procedure is not what 这样行吗 asks: whether it is allowed
    allowed = analyse("没有办审批手续就开工，这样行吗？", Filters())
    assert [f.name for f in allowed.forms] == ["permission"]


def test_a_sentence_stating_the_case_asks_nothing_with_its_indefinite_numbers():
    """几 / 多少 in a sentence that ends in 。 is an indefinite number (几个月: some months), not a figure asked: only
    the sentences ending in a question mark ask, when there is one."""
    case = analyse("我欠了几个月物业费，物业说再不交就给我家停电。他们能这么干吗？", Filters())
    assert not case.asks_figure and case.units == ()
    assert case.forms == ()  # no time limit asked either: 能这么干吗 names no form
    asked = analyse("物业说再不交就停电。最多能拖几个月？", Filters())
    assert asked.asks_figure and asked.units == ("个月",)
    # no question mark at all (keyword style): read whole
    assert analyse("临时检修 停电 提前几个小时通知", Filters()).asks_figure


def test_a_clause_stating_the_case_asks_nothing_with_its_indefinite_numbers():
    """The case is as often stated with a comma as with a full stop: within an asking sentence, the figure is read
    from its last clause with an interrogative, and the clauses before it state the case."""
    case = analyse("我欠了几个月物业费，物业说再不交就给我家停水停电，他们有这个权力吗？", Filters())
    assert not case.asks_figure and case.units == ()
    asked = analyse("临时检修要停电，至少提前多少小时通知？", Filters())
    assert asked.asks_figure and asked.units == ("小时",)
    # a clause naming the unit of what it asks, after one stating another figure
    rows = analyse("线路电压是220千伏，保护区向外延伸多少米？", Filters())
    assert rows.asks_figure and rows.units == ("米",)
    # each asking sentence of a question of two parts is read so
    two = analyse("欠了几个月电费，供电公司能停电吗？停电前要提前几天通知？", Filters())
    assert two.asks_figure and two.units == ("天",)
    assert [p.asks_figure for p in two.parts] == [False, True]
