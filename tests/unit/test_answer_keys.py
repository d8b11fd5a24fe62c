"""The reading figures of `regrag eval` (ops/answer_keys.py): answer keys, fragments, labels."""

import pytest

from regrag.ops.answer_keys import holds_key, is_fragment, labelled


@pytest.mark.parametrize(
    ("span", "fragment"),
    [
        ("第十六条 电力用户有下列情形之一的，供电企业可以中止供电：", True),  # a lead-in without its items
        ("第十六条 电力用户有下列情形之一的，供电企业可以中止供电：……（二）盗窃电能的；", False),
        ("（二）盗窃电能的；", True),  # an item alone
        ("第十六条 （二）盗窃电能的；", True),  # the label does not make it whole
        ("第十条……(一)架空电力线路保护区：导线边线……500千伏 20米", True),  # nor the label and …… after it
        ("第一百七十七条之一……（四）出售、购买、为他人提供伪造的信用卡", True),
        ("第二十九条 供电企业在发电、供电系统正常的情况下，应当连续向用户供电，不得中断。", False),
        ("第二十三条……技术服务机构出具的年度排放报告存在重大缺陷的，处罚款。", False),
    ],
)
def test_a_fragment_is_a_bare_lead_in_or_an_item_without_its_lead_in(span, fragment):
    assert is_fragment(span) is fragment


def test_keys_compare_without_width_or_spacing_and_a_label_is_in_the_span_or_the_marker():
    assert holds_key("应当提前２４小时 通知重要用户", ["提前24小时通知"])
    assert not holds_key("应当提前7天通知用户", ["提前24小时通知"])
    assert labelled({"span": "第二十八条 ……", "citation": {}})
    assert labelled(
        {
            "span": "除本条例另有规定外……",
            "citation": {"marker": "〔《电力供应与使用条例》第二十八条，生效：2019-03-02〕"},
        }
    )
    assert not labelled(
        {"span": "除本条例另有规定外……", "citation": {"marker": "〔《电力供应与使用条例》，生效：2019-03-02〕"}}
    )
