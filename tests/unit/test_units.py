"""The unit table (data/units.tsv, regrag.text.units) and the figure checks built on it (regrag.text.figures)."""

import re

import pytest

from regrag.text import figures, units
from regrag.text.units import QUESTION, TEXT


def test_the_table_is_consistent() -> None:
    table = units.units()
    symbols = {u.symbol for u in table}
    assert all(set(u.family) <= symbols for u in table), "a family names a symbol no unit has"
    assert all(u.source and u.quantity for u in table)
    # a unit a question can ask in is read as a figure after digits, so a quote stating it can answer
    assert all(u.reads(TEXT, chinese=False) for u in table if u.asked)


def names(pattern: str) -> set[str]:
    return {re.sub(r"\\(.)", r"\1", n) for n in pattern.split("|")}


def test_one_unit_written_two_ways_and_the_units_that_answer_for_it() -> None:
    assert names(units.unit_pattern("日")) == {"日", "天"}  # a count of calendar days, never 个工作日
    assert names(units.answering_pattern("天")) == {"天", "日", "个工作日"}
    assert names(units.answering_pattern("个工作日")) == {"天", "日", "个工作日"}
    assert names(units.answering_pattern("元")) == {"元", "万元", "亿元"}
    assert names(units.answering_pattern("度")) == {"度", "千瓦时", "℃", "摄氏度"}
    assert names(units.answering_pattern("千瓦时")) == {"千瓦时", "度"}
    assert names(units.answering_pattern("公斤")) == {"公斤", "千克"}
    assert names(units.answering_pattern("个月")) == {"个月", "月"}
    assert units.answering_pattern("光年") == "光年"  # not in the table: itself


def test_longest_unit_first() -> None:
    assert units.alternation(["千瓦", "千瓦时", "瓦"]) == "千瓦时|千瓦|瓦"


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("禁止在二十五度以上陡坡地开垦种植农作物", {25}),  # a slope in degrees
        ("征收耕地超过三十五公顷的", {35}),
        ("市区内电缆两侧各零点七五米的范围内", {0}),  # a decimal reads as its integer part, as 0.75米 does
        ("自一九九三年起", {1993}),  # a year written digit by digit
        ("第三人", set()),  # an ordinal: a party, not three people
        ("检查人员进行现场检查，不得少于两人", {2}),
        ("自期满之日起第三十日", set()),  # an ordinal day, in any unit
        ("9．天平", set()),  # item 9 of a list, a balance
        ("罚款5000元", {5000}),
        ("连续驾驶时间不得超过四个小时", {4}),
    ],
)
def test_figures_in_a_regulation(text: str, values: set[int]) -> None:
    assert figures.figure_values(text) == values


@pytest.mark.parametrize(
    ("question", "values"),
    [
        ("是否每五年更换一次？", {5}),
        ("按两倍收购吗？", {2}),
        ("三元锂电池储能电站需要什么许可？", set()),  # 三元 is a word part in a question
        ("填海大概40公顷，用海申请找谁提？", set()),  # the asker's case, not a rule it presumes
        ("一家50人的企业需要考核吗？", set()),
        ("罚款是5000元吗？", {5000}),
        # a 概数 is the asker's case (GB/T 15835-2011: 三五天, 四十五六岁), no rule the quotes must state
        ("施工队说要用三四年，临时占地最长能占多久？", set()),
        ("电费拖了七八天，要交多少滞纳金？", set()),
        ("四十五六岁还能报考吗？", set()),
        # a calendar year is the day asked about (query/temporal.py), not a figure of the rule
        ("2015年时，企业没落实预防措施罚多少？", set()),
        ("二〇一五年的时候，超过5年的怎么办？", {5}),
    ],
)
def test_figures_a_question_states(question: str, values: set[int]) -> None:
    assert figures.stated_figure_values(question) == values


def test_the_units_a_question_asks_in() -> None:
    assert figures.asked_units("每亩多少元？要提前几个工作日？几个小时？") == ("元", "个工作日", "个小时")
    assert figures.asked_units("比例是百分之几？") == ("%",)
    assert figures.figure_in_units(("公斤",), "每瓶不得超过5千克")
    assert figures.figure_in_units(("个小时",), "不得超过四小时")
    assert not figures.figure_in_units(("元",), "每年12月31日前")


def test_stated_and_text_readings_differ_only_where_the_table_says() -> None:
    for unit in units.units():
        assert unit.reads(QUESTION, chinese=True) <= unit.reads(QUESTION, chinese=False)
        assert unit.reads(TEXT, chinese=False)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("50万元", "五十万元", True),  # 万 after digits counts as it does inside a Chinese numeral
        ("1.5万元", "15000元", True),  # a decimal scaled by 万 keeps its fraction
        ("5万千瓦", "五万千瓦", True),  # the unit is 万千瓦, not 千瓦 after 五万千 (51000)
        ("10万元", "10元", False),
        ("一百一十千伏", "110千伏", True),  # the unit is 千伏: 一百一十, not 一百一十千
    ],
)
def test_a_figure_is_valued_with_the_myriads_its_unit_is_written_with(a: str, b: str, same: bool) -> None:
    assert (figures.figure_values(a) == figures.figure_values(b)) is same, (
        figures.figure_values(a),
        figures.figure_values(b),
    )
    assert figures.states_values(figures.figure_quantities(a), b) is same


@pytest.mark.parametrize(
    ("text", "ranges"),
    [
        ("1—10千伏 5米35—110千伏 10米154—330千伏 15米500千伏 20米", [(1, 10), (35, 110), (154, 330)]),
        ("处五万元以上二十万元以下的罚款", [(50000, 200000)]),
        ("处5万元以上20万元以下罚款", [(50000, 200000)]),  # 万 counts in the value, written in digits or not
        ("处5至10万元罚款", [(50000, 100000)]),  # the lower bound in the upper's unit, 万 included
        ("一百公顷以上、七百公顷以下不改变海域自然属性的", [(100, 700)]),  # 以上、…以下
        ("处三年以上七年以下有期徒刑", [(3, 7)]),
        ("处十万元以上的罚款", []),  # a floor alone is no range
        ("提前7天通知，30日内办结", []),
        ("在管道线路中心线两侧各五米至五十米范围内", [(5, 50)]),  # 至, the lower bound with its unit
        ("处1个月至3个月的拘留，或者百分之五至百分之十的罚款", [(1, 3), (5, 10)]),
        ("自2020年1月1日至2020年12月31日", []),  # a bound in another unit bounds nothing: two days
        ("六个月至三年以内", []),
    ],
)
def test_the_ranges_a_regulation_states(text: str, ranges: list[tuple[int, int]]) -> None:
    assert [(low, high) for low, high, _ in figures.figure_ranges(text)] == ranges


@pytest.mark.parametrize(
    ("question", "text", "stated"),
    [
        ("卧室只有十七度，能退多少热费？", "卧室、起居室温度低于十八摄氏度、高于十六摄氏度的", True),
        ("卧室只有十五度，能退多少热费？", "卧室、起居室温度低于十六摄氏度的", True),
        ("罚了60万元，合法吗？", "处50万元以上的罚款", True),  # 以上 includes the figure (刑法 第九十九条)
        ("罚了40万元，合法吗？", "处超过50万元的罚款", False),
        ("罚了60万元，合法吗？", "处不超过50万元的罚款", False),
        ("1000千伏线路保护区多宽？", "500千伏以下的线路", False),
    ],
)
def test_a_figure_a_question_states_is_stated_by_a_bound_that_admits_it(question: str, text: str, stated: bool) -> None:
    """A bound stated in the figure's unit that admits it: the rule covers the asker's case (each bound is read
    alone, so of a band, 低于十八摄氏度、高于十六摄氏度, one side admitting it is enough)."""
    assert figures.states_values(figures.stated_quantities(question), text) is stated


def test_a_figure_a_question_states_is_stated_in_its_unit_inside_a_range_or_as_hours_for_days() -> None:
    """220千伏 is in the row 154—330千伏; 10万元 in 5万元以上20万元以下; a day is 24 hours (法定计量单位 表4), so
    停暖一天以上 is 超过二十四小时, and 24小时 is 1日; a number in another unit is another figure."""
    assert figures.states_values(figures.stated_quantities("220千伏线路保护区多宽？"), "154—330千伏 15米")
    assert not figures.states_values(figures.stated_quantities("500千伏线路保护区多宽？"), "154—330千伏 15米")
    assert figures.states_values(figures.stated_quantities("会罚10万元吗？"), "处5万元以上20万元以下罚款")
    one_day = figures.stated_quantities("停暖一天以上，要提前几天通知？")
    assert one_day == {(1, frozenset({"d"})), (24, frozenset({"h"}))}
    assert figures.states_values(one_day, "连续停止供热超过二十四小时的")
    assert figures.states_values(figures.stated_quantities("停电超过24小时的怎么赔？"), "1日内恢复")
    assert not figures.states_values(figures.stated_quantities("停电超过48小时的怎么赔？"), "1日内恢复")
    # 30米 from a pipeline is inside 五米至五十米: the quote states the case the question is about
    assert figures.states_values(figures.stated_quantities("在管道一侧约30米处架线找谁批？"), "两侧各五米至五十米")
    # the same number in a unit of another thing states nothing the question presumes
    assert not figures.states_values(figures.stated_quantities("1000千伏线路保护区多宽？"), "在天线外1000米范围内")
    assert not figures.states_values(figures.stated_quantities("是否每五年更换一次？"), "5日内更换")
    assert figures.states_values(figures.stated_quantities("是否每五年更换一次？"), "每5年更换")
    # a percentage is the number after 百分之, not the 百 it starts with
    assert figures.stated_quantities("是否按百分之五十收取？") == {(50, frozenset({"%"}))}
    assert not figures.states_values(figures.stated_quantities("是否按百分之五十收取？"), "按百分之三十收取")
    assert figures.states_values(figures.stated_quantities("是否按百分之五十收取？"), "按50%收取")
    # besides the units asked in: the asker's own figures in them are left out, a day with its hours
    assert figures.stated_quantities("才住三年就开裂，保修几年？", besides=("年",)) == set()
    assert figures.stated_quantities("停暖一天以上，要提前几天通知？", besides=("天",)) == set()
    assert figures.stated_quantities("750千伏线路延伸多少米？", besides=("米",)) == {(750, frozenset({"kV"}))}


def test_a_bound_after_bu_de_reads_as_after_bu():
    """不得少于5年 is at least five years and 不得超过1年 at most one: read as 少于 / 超过 they said the reverse."""
    bounds = figures.figure_bounds("保存期限不得少于5年，期限最长不得超过1年，温度不得低于十八摄氏度")
    assert [(b.side, b.value) for b in bounds] == [("ge", 5), ("le", 1), ("ge", 18)]


@pytest.mark.parametrize(
    ("said", "article", "unstated"),
    [
        ("，供电企业应提前3天通知用户", "计划检修需要停电时，应当提前7天通知；临时检修，应当提前24小时通知", ("3天",)),
        ("，应当在两日内恢复供电", "供电企业应当在二十四小时内恢复供电", ("两日",)),  # days against hours
        ("，应当在一日内恢复供电", "供电企业应当在二十四小时内恢复供电", ()),
        ("，单位最高可被处以十万元罚款", "处五千元以上五万元以下罚款", ("十万元",)),  # beyond the range's end
        ("，可处五十万元罚款", "处10万元以上100万元以下的罚款", ()),  # inside the range
        ("，至少应保存三年", "原始监测记录保存期限不得少于5年", ("三年",)),
        ("，处应交电费三倍罚款", "处应交电费五倍以下的罚款", ()),  # a bound alone admits it
        ("，本项目装机50兆瓦，应提前7天通知", "应当提前7天通知", ()),  # the project's own figure: no unit to compare
    ],
)
def test_the_figures_a_memo_gives_an_article_that_it_does_not_state(
    said: str, article: str, unstated: tuple[str, ...]
) -> None:
    assert figures.unstated_figures(said, article) == unstated


@pytest.mark.parametrize(
    ("question", "text", "admitted"),
    [
        ("一家从业人员120人的企业", "从业人员超过一百人的，应当设置安全生产管理机构", True),
        ("一家从业人员120人的企业", "从业人员在一百人以下的，应当配备专职或者兼职的安全生产管理人员", False),
        ("要征收大约40公顷一般耕地", "永久基本农田以外的耕地超过三十五公顷的", True),
        ("填海30公顷的项目", "填海五十公顷以上的项目用海", False),
        ("一台220千伏的线路", "154—330千伏 15米", True),
        # the same figure stated alone is no threshold the case falls under: two people are another matter
        ("我们两人合伙", "不得少于两人", True),
        ("我们两人合伙", "由两人共同签字", False),
        ("2020年建的厂，占地5公顷", "2020年12月31日前", False),  # a day of the calendar tells no case
    ],
)
def test_a_threshold_admits_the_figure_a_question_tells_its_case_in(question: str, text: str, admitted: bool) -> None:
    assert figures.admits_case(figures.case_figures(question), text) is admitted


@pytest.mark.parametrize(
    ("question", "asks", "asked_in"),
    [
        ("检查人员至少要有几人？", True, ()),  # a count: a number, its unit left open
        ("每户能装几个电表？", True, ()),
        ("要提前几天通知？", True, ("天",)),
        ("多少钱？", True, ()),
        ("几乎所有人都知道吗？", False, ()),  # 几乎 is no question for a number
        ("哪几种情形？", False, ()),
        # a ratio asked: a figure of quantity ratio answers (1‰至3‰, 百分之五十, 两倍), not 五千吨
        ("分成比例是多少？", True, ("倍", "%", "％", "‰")),
        ("税率是百分之几？", True, ("%",)),  # the unit it names
    ],
)
def test_how_many_before_any_unit_asks_for_a_number(question: str, asks: bool, asked_in: tuple[str, ...]) -> None:
    assert figures.asks_figure(question) is asks
    assert figures.asked_units(question) == asked_in


def test_a_ratio_asked_is_answered_by_a_ratio_not_by_any_figure() -> None:
    asked = figures.asked_units("节能效益的分成比例是多少？")
    assert figures.figure_in_units(asked, "每日按照电费总额的1‰至3‰加收违约金")
    assert figures.figure_in_units(asked, "减征百分之五十")
    assert not figures.figure_in_units(asked, "年综合能源消费总量五千吨标准煤以上的用能单位")
