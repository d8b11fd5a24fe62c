"""Where a document was issued, from its title and issuer lines: the province of a document without a sidecar."""

from __future__ import annotations

import pytest

from regrag.text.inference import UNKNOWN_PROVINCE, infer_level, national_body, signature_lines
from regrag.text.places import FROM_ISSUER, FROM_TITLE, document_places, issuing_place

NPC = ["2005年2月28日 第十届全国人民代表大会常务委员会第十四次会议通过"]
JINAN = [
    "2011年5月25日 济南市第十四届人民代表大会常务委员会第三十次会议修订通过",
    "2011年7月29日 山东省第十一届人民代表大会常务委员会第二十五次会议批准",
]


@pytest.mark.parametrize(
    ("title", "issuer_lines", "province", "source", "names"),
    [
        ("深圳市充电设施管理办法", [], "gd", FROM_TITLE, ("深圳",)),  # a city → its province
        ("上海市供用电条例", [], "sh", FROM_TITLE, ("上海",)),
        ("深圳经济特区绿色建筑条例", [], "gd", FROM_TITLE, ("深圳",)),
        ("《济南市电力管理条例》", JINAN, "sd", FROM_TITLE, ("济南",)),
        ("昆山市分布式光伏项目管理办法", [], "js", FROM_TITLE, ("昆山市",)),  # a county-level city
        ("长阳土家族自治县清江保护条例", [], "hb", FROM_TITLE, ("长阳土家族自治县",)),
        ("鼓楼区光伏备案办法", ["福州市鼓楼区人民政府"], "fj", FROM_ISSUER, ("福州",)),  # 3 provinces' name
        ("中华人民共和国可再生能源法", NPC, "national", FROM_TITLE, ("中华人民共和国",)),
        ("国务院关于加强节能工作的决定", [], "national", FROM_TITLE, ("国务院",)),
        ("国家能源局关于印发分布式光伏发电项目管理办法的通知", [], "national", FROM_TITLE, ("国家能源局",)),
        ("生态环境部关于发布建设项目环评分类管理名录的公告", [], "national", FROM_TITLE, ("生态环境部",)),
        ("电力设施保护条例", ["1987年9月15日 国务院发布"], "national", FROM_ISSUER, ("国务院",)),
        (
            "市场监督管理行政处罚信息公示规定",
            ["2021年7月30日 国家市场监督管理总局令第45号公布"],
            "national",
            FROM_ISSUER,
            ("国家市场监督管理总局",),
        ),
        ("电动汽车充电设施管理办法", ["深圳市发展和改革委员会"], "gd", FROM_ISSUER, ("深圳",)),  # a signature
        (
            "分布式光伏管理办法",
            ["2023年1月5日 住房和城乡建设部令第1号公布"],
            "national",
            FROM_ISSUER,
            ("住房和城乡建设部",),
        ),
        ("稀土管理条例", [], "national", FROM_TITLE, ("条例",)),  # a 条例 naming no region: 行政法规
        ("可再生能源法", [], "national", FROM_TITLE, ("法",)),  # only the NPC makes a 法
    ],
)
def test_the_place_of_issue_is_read_from_the_title_or_the_issuer(title, issuer_lines, province, source, names):
    place = issuing_place(title, issuer_lines)
    assert (place.province, place.source, place.names, place.doubt) == (province, source, names, None)
    assert place.evidence == f"{source}: {'、'.join(names)}"


@pytest.mark.parametrize(
    ("title", "issuer_lines", "doubt"),
    [
        # national documents about a province: the place is not the issuer
        ("关于支持海南全面深化改革开放的指导意见", [], "the title names 海南, but not as its issuer"),
        # a city merged into 济南 in 2019, not in the gazetteer: local all the same, never national
        ("莱芜市钢结构建筑应用促进条例", [], "the title opens with 莱芜市, a place the gazetteer does not know"),
        ("鼓楼区光伏备案办法", [], "the title opens with 鼓楼区, a name of several provinces (ha/js/fj)"),
        ("光伏电站运行管理办法", [], "neither the title nor an issuer line names a place or a national body"),
        ("电动汽车充电管理办法", ["深圳市发展和改革委员会", "上海市发展和改革委员会"], "several provinces"),
    ],
)
def test_an_unknown_place_is_flagged_not_taken_for_national(title, issuer_lines, doubt):
    place = issuing_place(title, issuer_lines)
    assert place.province is None and place.source == "" and place.evidence is None
    assert doubt in (place.doubt or "")
    assert infer_level(title, UNKNOWN_PROVINCE) in (None, "national_law")  # never "local_regulation" by guess


def test_a_local_issuer_outweighs_a_national_body_in_its_header():
    # a local regulation approved by the province, whose header cites a State Council decision
    lines = ["根据《国务院关于修改部分行政法规的决定》", "2019年 东莞市人民代表大会常务委员会通过"]
    assert issuing_place("城乡规划实施办法", lines).province == "gd"


def test_national_bodies_are_whole_names_not_words():
    assert national_body("2019年1月1日生态环境部令第1号公布") == "生态环境部"  # the date is not part of it
    assert national_body("各单位内部管理制度") is None  # 内部 is a word
    assert national_body("第十届全国人民代表大会常务委员会") == "全国人民代表大会"
    assert national_body("市场监督管理规定", at_start=True) is None


def test_signature_lines_are_the_issuer_block_at_the_end():
    notice = "各单位：\n现将办法印发给你们，请遵照执行。\n\n深圳市发展和改革委员会\n深圳市住房和建设局\n2023年5月1日"
    assert signature_lines(notice) == ["深圳市发展和改革委员会", "深圳市住房和建设局"]
    assert signature_lines("第三十二条 本条例自2024年10月1日起施行。\n") == []  # ends with its last article


def test_counties_are_whole_names_with_known_provinces():
    places, _ = document_places()
    assert places["宝安区"].provinces == ("gd",)
    assert set(places["鼓楼区"].provinces) == {"ha", "js", "fj"}
    assert "城区" not in places and "矿区" not in places  # words, left out (bench/make_counties.py)
