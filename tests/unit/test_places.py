"""Place names in a question → the provinces whose rules apply there."""

import pytest

from regrag.text.inference import PROVINCES
from regrag.text.places import gazetteer, mentioned_provinces, rule_authors


@pytest.mark.parametrize(
    ("question", "provinces", "names"),
    [
        ("在广东建分布式光伏并网要满足什么条件？", ("gd",), ("广东",)),
        ("广东省深圳市的充电站", ("gd",), ("广东", "深圳")),  # a city of the same province adds no province
        ("济南 偷电 处罚 罚款标准", ("sd",), ("济南",)),
        ("我们在郑州一个产业园租厂房", ("ha",), ("郑州",)),
        ("山东和江苏的规定有什么不同", ("sd", "js"), ("山东", "江苏")),  # order of first mention
        ("内蒙古自治区的风电项目", ("nm",), ("内蒙古",)),
        ("新疆哈密的光伏基地", ("xj",), ("新疆", "哈密")),
        ("吉林市的供热", ("jl",), ("吉林",)),  # province and city of the same name
        ("珠三角地区还能新建燃煤电厂吗", ("gd",), ("珠三角",)),
        ("长三角的绿电交易", ("sh", "js", "zj", "ah"), ("长三角",)),  # a region spans provinces
    ],
)
def test_provinces_and_cities_are_found(question, provinces, names):
    scope = mentioned_provinces(question)
    assert scope.provinces == provinces
    assert scope.names == names
    assert scope.to_dict() == {"provinces": list(provinces), "names": list(names)}


@pytest.mark.parametrize(
    "question",
    [
        "分布式光伏项目的并网条件是什么？",
        "日照时数不足的地区能不能建光伏电站？",  # 日照 is sunshine unless 日照市
        "电能表的封印被开封了怎么处理？",  # 开封 is to unseal unless 开封市
        "黄河北岸的取水许可",  # the river, not 河北
        "太湖南岸的排污口",  # the lake, not 湖南
        "全国统一的电力市场",
    ],
)
def test_everyday_words_and_rivers_name_no_province(question):
    scope = mentioned_provinces(question)
    assert not scope
    assert scope.provinces == ()


def test_longest_match_reads_left_to_right():
    # 浙江西部 holds 江西 across the boundary of 浙江 and 西部
    assert mentioned_provinces("浙江西部山区的小水电").provinces == ("zj",)
    assert mentioned_provinces("日照市和开封市").provinces == ("sd", "ha")


def test_the_gazetteer_covers_every_province_with_known_codes():
    places = gazetteer()
    codes = {code for p in places.values() for code in p.provinces}
    assert codes == set(PROVINCES.values())
    assert len(places) > 350  # 31 provinces, about 330 prefecture-level divisions, a few water bodies


@pytest.mark.parametrize(
    ("question", "provinces"),
    [
        ("四川省小水电站退出的补偿标准怎么算？", ("sc",)),  # the place, then what its rule sets
        ("海南省供用电条例对计划检修停电的公告期限是如何规定的？", ("hi",)),  # an act of that place
        ("我们在江苏南京，小区想装光伏，南京本地对居民装光伏有什么补贴规定？", ("js",)),  # the clause that asks
        ("在江苏建一条架空输电线路要跨越国道，需要向哪个部门申请？", ()),  # where the project is, not whose rule
        ("在辽宁省沈阳市建光伏电站有什么补贴政策？", ()),  # the city goes on saying where
        ("我们在沈阳，辽宁对居民装光伏有什么补贴规定？", ("ln",)),  # a place named again, as whose rule
        ("我在辽宁沈阳住，冬天家里暖气不热，找谁？", ()),  # no rule named
        ("分布式光伏项目的并网标准是什么？", ()),  # no place named
    ],
)
def test_a_question_asks_a_places_own_rule_when_it_names_the_place_then_a_rule(question, provinces):
    assert rule_authors(question).provinces == provinces
