"""Which quote is read first (query/order.py), which unit of an act named by the question is quoted (query/fit.py
`rarity`) and which candidates may be quoted at all (query/quote.py): synthetic acts, so that each rule is the only
thing that decides."""

import json
from dataclasses import replace

from regrag.domain.models import Filters
from regrag.domain.results import Candidate
from regrag.ingest.ingest import build_document
from regrag.ops.answer_keys import is_fragment
from regrag.ports import Blob
from regrag.query.fit import key_characters
from regrag.query.judge import RelevanceFloor
from regrag.query.question import analyse
from regrag.query.quote import quotable_candidates
from regrag.query.retrieve import measured

from conftest import compose_answer, sample_text

ASSESSMENT = """# 某某建设项目评估条例

第一条 为了规范建设项目的评估，制定本条例。

第九条 技术机构对建设项目进行技术评估，不得向建设单位收取任何费用。

第十条 技术机构收取评估费用的标准，由主管部门公布。

第十一条 技术机构应当公开其评估费用的收取情况。

第二十四条 违反本条例规定，技术机构向建设单位收取费用的，由主管部门责令退还所收费用，处所收费用1倍以上3倍以下的罚款。
"""

NATIONAL_LAND = """# 某某土地管理法

第四十四条 建设占用土地，涉及农用地转为建设用地的，应当办理农用地转用审批手续，由市、县人民政府批准。
"""

PROVINCE_LAND = """# 广东省某某土地条例

第二十五条 建设占用未利用地的，应当办理未利用地转用审批手续，由地级以上市人民政府批准。

第二十六条 建设占用未利用地的，应当依法办理转用审批手续。
"""

EMERGENCY = """# 某某突发事件应对法

第六十三条 地方各级人民政府和县级以上各级人民政府有关部门违反本法规定，不履行法定职责的，由其上级行政机关责令改正；\
有下列情形之一的，对直接负责的主管人员依法给予处分：

（一）未按规定采取预防措施，导致发生突发事件的；

第六十四条 有关单位有下列情形之一的，由所在地人民政府责令停产停业，并处五万元以上二十万元以下的罚款：

（一）未按规定采取预防措施，导致发生严重突发事件的；
"""

RENEWABLE = """# 中华人民共和国某某能源法

第二条 本法所称某某能源，是指风能、太阳能、水能、生物质能等非化石能源。

通过低效率炉灶直接燃烧方式利用秸秆、薪柴的，不适用本法。
"""


def act(doc_id: str, text: str, province: str = "national"):
    sidecar = json.dumps({"doc_id": doc_id, "effective_date": "2020-01-01", "province": province}).encode()
    return build_document(f"docs/{doc_id}.md", Blob(f"docs/{doc_id}.md", text.encode(), 3), Blob("m", sidecar, 1), 800)


def ranked(*pairs):
    """Candidates in the order given: (document, article label)."""
    out = []
    for i, (doc, label) in enumerate(pairs):
        chunk = next(c for c in doc.chunks if c.article == label)
        out.append(Candidate(chunk, 1.0 / (i + 1)))
    return out


def texts(*docs):
    by_id = {d.meta.doc_id: d.text for d in docs}
    return lambda doc_id: by_id.get(doc_id)


def firsts(answer):
    return [(b.citation.doc_id, b.citation.article) for b in answer.bullets]


def test_a_penalty_asked_puts_the_penalty_article_before_the_duty_it_enforces():
    doc = act("syn-assess", ASSESSMENT)
    cands = ranked((doc, "第九条"), (doc, "第二十四条"))
    asked = compose_answer("技术机构向建设单位收了评估费，会受到什么处罚？", cands, source_text=texts(doc))
    assert firsts(asked) == [("syn-assess", "第二十四条"), ("syn-assess", "第九条")]
    assert "责令退还所收费用" in asked.bullets[0].span
    # asked what the rule is, not what it costs: the ranking's order stands
    duty = compose_answer("技术机构可以向建设单位收取评估费用吗？", cands, source_text=texts(doc))
    assert firsts(duty) == [("syn-assess", "第九条"), ("syn-assess", "第二十四条")]


def test_a_question_not_asking_a_penalty_reads_the_rule_before_the_article_punishing_its_breach():
    doc = act("syn-assess", ASSESSMENT)
    penalty_first = ranked((doc, "第二十四条"), (doc, "第九条"))
    allowed = compose_answer("技术机构能不能向建设单位收取评估费用？", penalty_first, source_text=texts(doc))
    assert firsts(allowed) == [("syn-assess", "第九条"), ("syn-assess", "第二十四条")]
    assert "不得向建设单位收取任何费用" in allowed.bullets[0].span
    # asked what it costs: the penalty stays first
    punished = compose_answer("技术机构向建设单位收取评估费用怎么处罚？", penalty_first, source_text=texts(doc))
    assert firsts(punished) == [("syn-assess", "第二十四条"), ("syn-assess", "第九条")]
    # the rule shows less of what is asked than the penalty does: the ranking's order stands
    fee = compose_answer("技术机构退还所收费用的倍数", penalty_first, source_text=texts(doc))
    assert firsts(fee)[0] == ("syn-assess", "第二十四条")


PLANNING = """# 某某城乡规划法

第四十五条 县级以上地方人民政府城乡规划主管部门按照国务院规定对建设工程是否符合规划条件予以核实。\
未经核实或者经核实不符合规划条件的，建设单位不得组织竣工验收。

建设单位应当在竣工验收后六个月内向城乡规划主管部门报送有关竣工验收资料。

第六十七条 建设单位未在建设工程竣工验收后六个月内向城乡规划主管部门报送有关竣工验收资料的，\
由城乡规划主管部门责令限期补报；逾期不补报的，处一万元以上五万元以下的罚款。
"""


def test_the_rule_goes_first_when_its_article_shares_as_much_of_the_question_as_the_penalty_restating_it():
    """The 款 quoted from 第四十五条 leaves out the sentence naming 建设工程, which the penalty restates: the rule's
    article shares as much of the question, and the rule is read first."""
    doc = act("syn-plan", PLANNING)
    penalty_first = ranked((doc, "第六十七条"), (doc, "第四十五条"))
    answer = compose_answer(
        "建设工程竣工验收后，建设单位应在多长期限内向城乡规划主管部门报送竣工验收资料？",
        penalty_first,
        source_text=texts(doc),
    )
    assert firsts(answer) == [("syn-plan", "第四十五条"), ("syn-plan", "第六十七条")]
    assert "六个月内向城乡规划主管部门报送" in answer.bullets[0].span


EIA = """# 某某环境影响评价条例

第十二条 建设项目的环境影响报告书批准后，建设项目方开工建设的，应当报原审批部门重新审核。

第十三条 审批部门应当自收到环境影响报告书之日起60日内作出审批决定。
"""


def test_a_figure_asked_puts_the_quote_that_states_one_first():
    doc = act("syn-eia", EIA)
    cands = ranked((doc, "第十二条"), (doc, "第十三条"))
    asked = compose_answer("环境影响报告书交上去，审批部门要在多少天内作出审批决定？", cands, source_text=texts(doc))
    assert firsts(asked) == [("syn-eia", "第十三条"), ("syn-eia", "第十二条")]
    # no figure asked: the ranking's order stands
    plain = compose_answer("环境影响报告书批准后开工建设要重新审核吗？", cands, source_text=texts(doc))
    assert firsts(plain) == [("syn-eia", "第十二条"), ("syn-eia", "第十三条")]


OFFICIALS = (
    ASSESSMENT
    + """
第二十五条 违反本条例规定，主管部门工作人员对技术机构收取评估费用的行为不予查处的，依法给予处分。
"""
)


def test_the_discipline_of_officials_is_not_what_a_penalty_asked_by_a_company_moves_forward():
    doc = act("syn-assess", OFFICIALS)
    cands = ranked((doc, "第九条"), (doc, "第二十五条"), (doc, "第十条"), (doc, "第二十四条"))
    answer = compose_answer("我们公司向建设单位收取评估费用，会受到什么处罚？", cands, source_text=texts(doc), top_n=4)
    # the company's fine is beyond the quotes that may move; the officials' 处分 is no answer to put first
    assert firsts(answer)[0] == ("syn-assess", "第九条")
    # asked about the officials, their discipline is what is asked
    officials = "主管部门工作人员对收取评估费用不予查处，会受到什么处罚？"
    asked = compose_answer(officials, cands, source_text=texts(doc), top_n=4)
    assert firsts(asked)[0] == ("syn-assess", "第二十五条")


def test_only_the_first_quotes_are_reordered():
    doc = act("syn-assess", ASSESSMENT)
    # the penalty article ranked fourth: beyond the quotes that may move (the ranking knows better there)
    cands = ranked((doc, "第九条"), (doc, "第十条"), (doc, "第十一条"), (doc, "第二十四条"))
    answer = compose_answer("技术机构收取评估费用会受到什么处罚？", cands, source_text=texts(doc), top_n=4)
    assert firsts(answer) == [("syn-assess", a) for a in ("第九条", "第十条", "第十一条", "第二十四条")]


def test_in_a_province_its_own_rule_goes_before_the_national_one_when_it_holds_as_much():
    national, local = act("syn-land", NATIONAL_LAND), act("syn-gd-land", PROVINCE_LAND, "gd")
    cands = ranked((national, "第四十四条"), (local, "第二十五条"))
    question = "建设项目占用未利用地，转用审批由哪一级政府批准？"
    for filters, text in ((Filters(province=("gd", "national")), question), (Filters(), "在广东，" + question)):
        answer = compose_answer(text, cands, filters, source_text=texts(national, local))
        assert firsts(answer)[0] == ("syn-gd-land", "第二十五条"), text
    # no province in question or filters: the national rule stays first
    plain = compose_answer(question, cands, source_text=texts(national, local))
    assert firsts(plain)[0] == ("syn-land", "第四十四条")
    # the province's article holds no authority where the national one names it: not moved
    weaker = ranked((national, "第四十四条"), (local, "第二十六条"))
    kept = compose_answer("在广东，" + question, weaker, source_text=texts(national, local))
    assert firsts(kept)[0] == ("syn-land", "第四十四条")


def test_set_nowhere_a_national_rule_goes_before_a_provinces_own_when_it_holds_as_much():
    national, local = act("syn-land", NATIONAL_LAND), act("syn-gd-land", PROVINCE_LAND, "gd")
    cands = ranked((local, "第二十五条"), (national, "第四十四条"))
    question = "建设项目占用土地，转用审批由哪一级政府批准？"
    assert firsts(compose_answer(question, cands, source_text=texts(national, local)))[0] == ("syn-land", "第四十四条")
    # set in that province, its own rule stays first
    there = compose_answer("在广东，" + question, cands, source_text=texts(national, local))
    assert firsts(there)[0] == ("syn-gd-land", "第二十五条")
    # the national article holds less of what is asked (no authority named): not moved
    weaker = act("syn-land", NATIONAL_LAND.replace("由市、县人民政府批准", "依法办理"))
    kept = compose_answer(
        question, ranked((local, "第二十五条"), (weaker, "第四十四条")), source_text=texts(weaker, local)
    )
    assert firsts(kept)[0] == ("syn-gd-land", "第二十五条")


def test_the_words_naming_the_act_do_not_choose_its_unit():
    doc = act("syn-energy", RENEWABLE)
    cands = ranked((doc, "第二条"))
    named = compose_answer("农村用土灶直接烧秸秆做饭，也归某某能源法管吗？", cands, source_text=texts(doc))
    assert "直接燃烧方式利用秸秆" in named.bullets[0].span and "是指风能" not in named.bullets[0].span
    # not named: 某某能源 is a word of the question like any other and the definition fits it
    unnamed = compose_answer("某某能源包括哪些能源？", cands, source_text=texts(doc))
    assert "是指风能" in unnamed.bullets[0].span


def test_a_row_of_a_table_is_quoted_with_the_item_that_says_what_the_table_is():
    doc = act("nat-reg-0091", sample_text("nat-reg-0091"))
    answer = compose_answer(
        "500千伏架空电力线路的保护区，导线边线要向外延伸多少米？", ranked((doc, "第十条")), source_text=texts(doc)
    )
    first = answer.bullets[0]
    # not "第十条……500千伏 20米" alone; the item's 款 goes on after the row, and the quote says so
    assert "延伸距离如下：" in first.span and first.pieces[-1] == "500千伏 20米" and first.span.endswith("20米……")
    # and item （一） with the lead-in above it: no orphan item either
    assert first.span.startswith("第十条 电力线路保护区：(一)架空电力线路保护区") and not is_fragment(first.span)
    # one 款: the paragraph on crowded areas after the table is part of item (一), and (二) follows in the same list
    assert first.citation.provision == "第十条第（一）项"
    assert all(piece in doc.text for piece in first.pieces)


def test_a_company_asking_its_penalty_reads_the_article_on_companies_before_the_one_on_officials():
    doc = act("syn-emergency", EMERGENCY)
    cands = ranked((doc, "第六十三条"), (doc, "第六十四条"))
    company = compose_answer("企业没按规定采取预防措施引发突发事件，会受到什么处罚？", cands, source_text=texts(doc))
    assert firsts(company) == [("syn-emergency", "第六十四条"), ("syn-emergency", "第六十三条")]
    # a question about what the public body faces: the ranking's order stands
    officials = compose_answer(
        "有关部门没按规定采取预防措施引发突发事件，会受到什么处罚？", cands, source_text=texts(doc)
    )
    assert firsts(officials)[0] == ("syn-emergency", "第六十三条")


ENERGY_EMERGENCY = """# 某某能源法

第七十三条 违反本法规定，能源企业在能源应急状态时不服从有关人民政府的统一指挥和安排的，由县级以上人民政府能源主管部门\
责令改正；拒不改正的，对单位处十万元以上五十万元以下的罚款。

第七十四条 有关单位在能源应急状态时哄抬价格的，由市场监督管理部门处五万元以上二十万元以下的罚款。
"""


def test_a_body_the_act_clause_names_as_its_object_is_not_who_is_punished():
    """能源法 第七十三条 punishes 能源企业 for disobeying the government: it is not an article on officials, and rule 3
    does not put another penalty before it."""
    doc = act("syn-energy", ENERGY_EMERGENCY)
    cands = ranked((doc, "第七十三条"), (doc, "第七十四条"))
    asked = compose_answer(
        "能源应急状态下能源企业不服从统一指挥和安排，拒不改正的罚多少？", cands, source_text=texts(doc)
    )
    assert firsts(asked) == [("syn-energy", "第七十三条"), ("syn-energy", "第七十四条")]
    assert "对单位处十万元以上五十万元以下的罚款" in asked.bullets[0].span


def test_a_lead_in_whose_list_is_plain_paragraphs_is_quoted_with_them():
    # 济南市电力管理条例 第七十四条: 本条例下列用语的含义：, then one definition per paragraph, no （一）
    doc = act("sd-0090", sample_text("sd-0090"), "sd")
    answer = compose_answer("本条例下列哪些用语有专门的含义？", ranked((doc, "第七十四条")), source_text=texts(doc))
    span = answer.bullets[0].span
    assert span.startswith("第七十四条 本条例下列用语的含义：") and not span.rstrip().endswith("：")
    assert "电力企业，是指" in span and all(piece in doc.text for piece in answer.bullets[0].pieces)


TEMPORARY_LAND = """# 某某土地管理条例

第二十条 建设项目施工需要临时使用土地的，由县级以上人民政府自然资源主管部门批准，临时用地期限一般不超过二年。{filler}

土地使用者应当自临时用地期满之日起一年内完成土地复垦，使其达到可供利用状态。

临时使用土地的，应当按照合同约定支付临时使用土地补偿费。
"""


def test_a_unit_that_fits_nearly_as_well_is_shown_with_the_best_in_one_bullet():
    filler = "临时用地上不得修建永久性建筑物，使用者应当按照批准的用途使用土地。" * 5  # the 款 passes 200 characters
    doc = act("syn-temp", TEMPORARY_LAND.format(filler=filler))
    cands = ranked((doc, "第二十条"))
    two = compose_answer("临时用地最长能用几年？期满后多长时间内要完成复垦？", cands, source_text=texts(doc))
    span = two.bullets[0].span
    assert "期限一般不超过二年" in span and "一年内完成土地复垦" in span and "补偿费" not in span
    assert two.bullets[0].citation.provision == "第二十条第一款、第二款"  # as precise as the two units allow
    assert all(piece in doc.text for piece in two.bullets[0].pieces) and "……" in span
    # one unit fits far better than any other: it is quoted alone
    one = compose_answer("临时使用土地要按照合同约定支付补偿费吗？", cands, source_text=texts(doc))
    assert "补偿费" in one.bullets[0].span and "不超过二年" not in one.bullets[0].span
    assert one.bullets[0].citation.provision == "第二十条第三款"


SOLAR = """# 某某可再生能源条例

第十七条 国家鼓励单位和个人安装和使用太阳能热水系统、太阳能供热采暖和制冷系统等太阳能利用系统。

房地产开发企业应当在建筑物的设计和施工中，为太阳能热水系统的安装提供必备条件。

对已建成的建筑物，住户可以在不影响其质量与安全的前提下安装符合技术规范的太阳能利用系统。
"""


def test_a_question_whether_something_is_allowed_is_answered_by_the_unit_that_permits_it():
    doc = act("syn-solar", SOLAR)
    cands = ranked((doc, "第十七条"))
    # the first 款 shares more of the question's words (太阳能热水); the one that answers 能不能 says 可以
    allowed = compose_answer("我住的楼早就盖好了，我能不能自己在家装个太阳能热水器？", cands, source_text=texts(doc))
    assert "住户可以" in allowed.bullets[0].span and allowed.bullets[0].citation.provision == "第十七条第三款"
    # not asked whether it is allowed: the unit that shares the most
    policy = compose_answer("国家对安装使用太阳能热水系统是什么政策？", cands, source_text=texts(doc))
    assert "国家鼓励" in policy.bullets[0].span and "住户可以" not in policy.bullets[0].span


NOTICE = """# 某某省供用电条例

第四十四条 有下列情形之一的，供电企业可以中断供电：

（一）因供电设施检修、依法限电的；

（二）用电人逾期未交付电费，经催交仍未交付的；

（三）用电人窃电的。

第四十五条 供电企业采取中断供电措施，应当按照下列要求事先通告或者通知用电人：

（一）因供电设施计划检修的，供电企业应当提前七日通告用电人；

（二）因供电设施临时检修的，供电企业应当提前二十四小时通知重要用电人；

（三）因本条例第四十四条第（二）项至第（三）项情形的，供电企业应当提前三至七日将停电通知书送达用电人。
"""


def test_an_item_is_chosen_by_the_words_of_the_article_it_refers_to():
    """The item for 欠电费 names the case only as 本条例第四十四条第（二）项…情形: the words of the question
    (电费) are in that article, and the item referring to it is the one quoted."""
    doc = act("syn-notice", NOTICE)
    cands = ranked((doc, "第四十五条"))
    asked = compose_answer(
        "我家欠了电费一直没交，供电公司要停我家的电，得提前多久通知我？", cands, source_text=texts(doc)
    )
    assert "提前三至七日" in asked.bullets[0].span
    assert "第（三）项" in asked.bullets[0].citation.provision


LABELS = """# 某某节约能源法

第七十三条 违反本法规定，应当标注能源效率标识而未标注的，由市场监督管理部门责令改正，处三万元以上五万元以下罚款。

违反本法规定，未办理能源效率标识备案，或者使用的能源效率标识不符合规定的，由市场监督管理部门责令限期改正；逾期不改正的，处一万元以上三万元以下罚款。

伪造、冒用能源效率标识或者利用能源效率标识进行虚假宣传的，由市场监督管理部门责令改正，处五万元以上十万元以下罚款；情节严重的，吊销营业执照。
"""


def test_a_clause_naming_the_act_asked_about_holds_the_fine_of_the_rest_of_its_sentence():
    """The 款 on 未办理…备案 names its fine in the clause after its ；, which its quote shows: it is the one quoted for
    that act's fine, not a 款 stating another act's fine in one clause."""
    doc = act("syn-labels", LABELS)
    cands = ranked((doc, "第七十三条"))
    question = "用能产品未办理能源效率标识备案，被责令限期改正后逾期不改正的，罚款幅度是多少？"
    asked = compose_answer(question, cands, source_text=texts(doc))
    assert "逾期不改正的，处一万元以上三万元以下罚款" in asked.bullets[0].span
    assert "三万元以上五万元以下" not in asked.bullets[0].span


SECTIONS = """# 某某计量仪表检定规定

为实施计量法，现对电能计量仪表的检定、管理工作，规定如下：

一、电能计量仪表由电力部门计量检定机构负责检定。

二、供电单位与用电单位因电能计量准确度发生的纠纷，先由上一级电力部门进行第一次复核调解。
"""

ITEMS_ONLY = """# 某某电缆保护规定

(一) 保护海底电缆是加强海防建设的重要措施。

(二) 舰船锚泊要避开敷设有海底电缆的禁区。
"""


def test_a_section_of_a_text_without_articles_is_quoted_with_the_line_that_introduces_the_sections():
    doc = act("syn-sections", SECTIONS)
    cands = ranked((doc, "二、"))
    answer = compose_answer("电能计量准确度发生纠纷，先找谁调解？", cands, source_text=texts(doc))
    span = answer.bullets[0].span
    assert span.startswith("为实施计量法") and "规定如下：……二、供电单位" in span and "一、" not in span
    assert not is_fragment(span) and all(piece in doc.text for piece in answer.bullets[0].pieces)
    # with no such line, the section stands alone
    bare = act("syn-items", ITEMS_ONLY)
    alone = compose_answer("舰船锚泊要避开什么？", ranked((bare, "(二)")), source_text=texts(bare))
    assert alone.bullets[0].span.startswith("(二) 舰船锚泊")


SUPPLY = """# 某某供电条例
第二十八条 因供电设施检修需要停止供电时，供电企业应当提前七日通知用户或者进行公告。
第二十九条 供电企业需要中断供电时，应当事先通知用户。用户对供电企业中断供电有异议的，可以向电力管理部门投诉。
"""


def test_a_question_where_to_complain_reads_first_the_provision_that_opens_a_complaint():
    doc = act("syn-supply", SUPPLY)
    cands = ranked((doc, "第二十八条"), (doc, "第二十九条"))
    asked = compose_answer("供电所检修把村里停了电，我觉得不合理，能去哪里投诉？", cands, source_text=texts(doc))
    assert firsts(asked)[0] == ("syn-supply", "第二十九条")
    assert "可以向电力管理部门投诉" in asked.bullets[0].span
    # asked how long before, not where to complain: the ranking's order stands
    notice = compose_answer("供电设施检修停电，要提前几天通知？", cands, source_text=texts(doc))
    assert firsts(notice)[0] == ("syn-supply", "第二十八条")


POWER_CONTRACT = """# 某某合同法
第六百五十四条 用电人逾期不支付电费，经催告仍不支付的，供电人可以按照国家规定的程序中止供电。

供电人依据前款规定中止供电的，应当事先通知用电人。
"""


def test_a_duty_asked_quotes_the_unit_that_obliges_not_its_neighbour_that_allows():
    doc = act("syn-contract", POWER_CONTRACT)
    asked = compose_answer(
        "用电人逾期不交电费，供电人依程序中止供电前还负有什么义务？",
        ranked((doc, "第六百五十四条")),
        source_text=texts(doc),
    )
    assert "应当事先通知用电人" in asked.bullets[0].span


def test_the_forms_the_ordering_rules_name_are_the_data_files_forms():
    # a form renamed in question_forms.tsv must not silently switch a rule off
    from regrag.query import order
    from regrag.query.fit import DUTY, ENUMERATION, PERMISSION
    from regrag.query.forms import forms

    names = {f.name for f in forms()}
    assert names >= order.SPECIFIC_FORMS | {
        order.PENALTY,
        order.AUTHORITY,
        order.LIABILITY,
        order.RECOURSE,
        ENUMERATION,
        PERMISSION,
        DUTY,
    }


ACCIDENTS = """# 某某电力事故处置条例

第三条 发电机组因安全故障停止运行造成的事故，分为特别重大事故、重大事故、较大事故和一般事故，由发电厂报告。

第十条 发电机组因安全故障停止运行的，发电厂应当立即向电力调度机构报告。

第三十七条 本条例自2011年9月1日起施行。

附：

注：1．符合本表所列情形之一的，即构成相应等级的电力安全事故。

2．发电机组因安全故障停止运行，是指并网运行的发电机组因安全故障需要停止运行的状态。
"""


def test_below_the_first_quote_an_appendix_note_gives_way_to_the_articles():
    doc = act("syn-accidents", ACCIDENTS)
    appendix = next(c.article for c in doc.chunks if c.kind == "appendix")
    question = "发电机组因安全故障停止运行，发电厂应当向谁报告？"
    below = compose_answer(question, ranked((doc, "第十条"), (doc, appendix), (doc, "第三条")), source_text=texts(doc))
    assert firsts(below) == [("syn-accidents", "第十条"), ("syn-accidents", "第三条")]
    # first, where retrieval put it as the best match, it stays (cited as the appendix)
    meaning = "发电机组因安全故障停止运行是指什么状态？"
    first = compose_answer(meaning, ranked((doc, appendix), (doc, "第十条")), source_text=texts(doc))
    assert firsts(first) == [("syn-accidents", appendix), ("syn-accidents", "第十条")]


ENERGY = """# 中华人民共和国能源法

第七十三条 违反本法规定，有关单位在能源应急状态时不服从统一指挥和安排的，由能源主管部门责令改正；\
拒不改正的，对单位处十万元以上五十万元以下的罚款。
"""

MINERALS = """# 中华人民共和国矿产资源法

第七十二条 出现矿产资源应急状态时，有关单位不服从统一指挥和安排的，由自然资源主管部门责令改正；\
拒不改正的，对单位处十万元以上五十万元以下罚款。
"""

RENEWABLES = """# 中华人民共和国可再生能源法

第二十九条 违反本法规定，有关单位不服从统一安排的，由能源主管部门责令改正；拒不改正的，处五万元以上十万元以下的罚款。
"""


def test_the_act_the_question_names_is_quoted_first():
    energy, minerals, renewables = act("syn-en", ENERGY), act("syn-min", MINERALS), act("syn-re", RENEWABLES)
    source = texts(energy, minerals, renewables)
    cands = ranked((minerals, "第七十二条"), (energy, "第七十三条"))
    named = compose_answer("按能源法，能源应急状态下单位拒不服从统一指挥的，罚多少？", cands, source_text=source)
    assert firsts(named)[0] == ("syn-en", "第七十三条")
    unnamed = compose_answer("应急状态下单位拒不服从统一指挥的，罚多少？", cands, source_text=source)
    assert firsts(unnamed)[0] == ("syn-min", "第七十二条")  # the ranking's order stands
    # 能源法 inside 可再生能源法 is not the question naming 能源法
    cands = ranked((energy, "第七十三条"), (renewables, "第二十九条"))
    longer = compose_answer("按可再生能源法，单位拒不服从统一安排的，罚多少？", cands, source_text=source)
    assert firsts(longer)[0] == ("syn-re", "第二十九条")
    cands = ranked((renewables, "第二十九条"), (energy, "第七十三条"))
    assert firsts(compose_answer("按可再生能源法，单位拒不服从统一安排的，罚多少？", cands, source_text=source))[0] == (
        "syn-re",
        "第二十九条",
    )


LAND_REGISTRATION = """# 某某土地登记办法

第五条 申请土地登记，应当提交下列文件：

（一）土地登记申请书；

（二）土地权属证明，包括：

1.土地使用合同书；

2.付清地价款证明；

（三）测绘结果报告书。
"""


def test_a_sub_item_is_quoted_under_its_item_and_cited_as_that_item():
    doc = act("syn-land", LAND_REGISTRATION)
    answer = compose_answer("申请土地登记要提交土地使用合同书吗？", ranked((doc, "第五条")), source_text=texts(doc))
    first = answer.bullets[0]
    assert "提交下列文件：" in first.span and "（二）土地权属证明，包括：" in first.span
    assert "1.土地使用合同书" in first.span
    assert first.citation.provision == "第五条第（二）项"  # not 第（一）项, the sub-list's own number
    assert not is_fragment(first.span)


# Which candidates may be quoted (query/quote.py `quotable_candidates`): those clearing the quote floor (and the
# ranking's first when it comes near the best of them), and when none does, the best of what the relevance floor
# let through rather than a refusal for want of a quote.
# many words the act does not use (three rules it never names, 委托人, 咨询服务 …) dilute every article's coverage
LONG = "技术机构在做技术评估时，依照《某甲规程》《某乙细则》《某丙守则》向委托人额外加收咨询服务费用，是否恰当？"


def with_coverage(cands, *coverages):
    return [replace(c, features=replace(c.features, coverage=v)) for c, v in zip(cands, coverages, strict=True)]


def test_the_quote_floor_decides_when_something_clears_it():
    doc = act("syn-assess", ASSESSMENT)
    cands = with_coverage(ranked((doc, "第九条"), (doc, "第十条"), (doc, "第一条")), 0.15, 0.4, 0.3)
    assert [c.chunk.article for c in quotable_candidates(cands, 0.2)] == ["第十条", "第一条"]


def test_the_rankings_first_is_quoted_below_the_floor_when_it_comes_near_the_best():
    doc = act("syn-assess", ASSESSMENT)
    cands = ranked((doc, "第九条"), (doc, "第十条"), (doc, "第一条"))
    # the first ranked shares 0.17, the second clears the floor with 0.26: both are quoted, in ranking order; a
    # lower-ranked one sharing as little as the first stays out
    quoted = quotable_candidates(with_coverage(cands, 0.17, 0.26, 0.17), 0.2)
    assert [c.chunk.article for c in quoted] == ["第九条", "第十条"]
    # under half of the best, the first stays out too
    assert [c.chunk.article for c in quotable_candidates(with_coverage(cands, 0.12, 0.26, 0.3), 0.2)] == [
        "第十条",
        "第一条",
    ]


def test_a_candidate_below_the_floor_the_dense_leg_finds_as_close_as_any_quoted_is_quoted_among_the_first_three():
    doc = act("syn-assess", ASSESSMENT)
    cands = ranked((doc, "第九条"), (doc, "第十条"), (doc, "第十一条"), (doc, "第一条"))
    dense = [0.90, 0.92, 0.88, 0.95]
    scored = [replace(c, dense_score=d) for c, d in zip(with_coverage(cands, 0.3, 0.1, 0.1, 0.1), dense, strict=True)]
    # 第十条 shares few words but is closer than the one admitted: quoted, in its ranking place; 第十一条 is
    # farther; 第一条 is closer but fourth
    assert [c.chunk.article for c in quotable_candidates(scored, 0.2)] == ["第九条", "第十条"]
    # sharing nothing at all, it stays out however close
    none = [replace(c, dense_score=d) for c, d in zip(with_coverage(cands, 0.3, 0.0, 0.1, 0.1), dense, strict=True)]
    assert [c.chunk.article for c in quotable_candidates(none, 0.2)] == ["第九条"]


def test_a_candidate_the_dense_leg_found_is_closer_than_those_it_did_not_find():
    """Admitted on their words alone, with no dense score (the lexical leg alone found them), the admitted are
    farther from the question than anything the dense leg found: one ranked above them that it found is quoted
    (管道保护法's article on planting over a pipeline, cosine 0.887, was passed over for a village rule on
    protecting 输油管道 among 文物古迹 that shared more words); one ranked below them is not."""
    doc = act("syn-assess", ASSESSMENT)
    cands = ranked((doc, "第九条"), (doc, "第十条"), (doc, "第十一条"), (doc, "第一条"))
    dense = [0.887, None, 0.90, None]
    scored = [
        replace(c, dense_score=d) for c, d in zip(with_coverage(cands, 0.11, 0.42, 0.05, 0.42), dense, strict=True)
    ]
    assert [c.chunk.article for c in quotable_candidates(scored, 0.2)] == ["第九条", "第十条", "第一条"]
    # found by the dense leg but sharing none of the question's words: still out
    none = [replace(c, dense_score=d) for c, d in zip(with_coverage(cands, 0.0, 0.42, 0.05, 0.42), dense, strict=True)]
    assert [c.chunk.article for c in quotable_candidates(none, 0.2)] == ["第十条", "第一条"]


def test_when_nothing_clears_it_what_comes_near_the_best_is_quoted_in_ranking_order():
    doc = act("syn-assess", ASSESSMENT)
    cands = ranked((doc, "第九条"), (doc, "第十条"), (doc, "第一条"))
    # the first ranked shares fewer of the question's words than the second, but more than half as many: both
    # are quoted and the ranking keeps its say; the third shares under half and stays out
    assert [c.chunk.article for c in quotable_candidates(with_coverage(cands, 0.09, 0.17, 0.05), 0.2)] == [
        "第九条",
        "第十条",
    ]
    assert [c.chunk.article for c in quotable_candidates(with_coverage(cands, 0.15, 0.0, 0.05), 0.2)] == ["第九条"]
    assert [c.chunk.article for c in quotable_candidates(with_coverage(cands, 0.0, 0.0, 0.05), 0.2)] == ["第一条"]
    # one sharing no key term is never quoted, unless the floor is 0
    assert quotable_candidates(with_coverage(cands, 0.0, 0.0, 0.0), 0.2) == []
    assert len(quotable_candidates(with_coverage(cands, 0.0, 0.0, 0.0), 0.0)) == 3


def test_a_question_whose_words_dilute_coverage_is_answered_once_the_relevance_floor_lets_it_through():
    doc = act("syn-assess", ASSESSMENT)
    cands = ranked((doc, "第九条"), (doc, "第一条"))
    coverage = [c.features.coverage for c in measured(analyse(LONG, Filters()), cands)]
    assert 0.1 <= coverage[0] < 0.2 and coverage[1] < 0.1  # the case: under the quote floor (0.2), over half of it
    answer = compose_answer(LONG, cands, source_text=texts(doc), floor=RelevanceFloor(coverage_alone=0.1))
    assert not answer.abstained
    assert [(b.citation.article, b.span) for b in answer.bullets] == [
        ("第九条", "第九条 技术机构对建设项目进行技术评估，不得向建设单位收取任何费用。")
    ]


PENALTY_PARAGRAPH = """# 某某环境保护条例

第二十三条 违反本条例规定，需要配套建设的环境保护设施未建成、未经验收或者验收不合格，建设项目即投入生产或者使用，或者在\
环境保护设施验收中弄虚作假的，由县级以上环境保护行政主管部门责令限期改正，处20万元以上100万元以下的罚款；逾期不改正的，处100万元以上200万元以下的罚款；对直接负责的主管人员和其他责任人员，处5万元以上\
20万元以下的罚款；造成重大环境污染或者生态破坏的，责令停止生产或者使用，或者报经有批准权的人民政府批准，责令关闭。

违反本条例规定，建设单位未公开环境保护设施验收报告的，由环境保护行政主管部门责令公开，处5万元以上20万元以下的罚款。

第三十一条 禁止窃电行为。窃电行为包括：

（一）在供电企业的供电设施上，擅自接线用电；

（二）绕越供电企业的用电计量装置用电；

（三）伪造或者开启法定的或者授权的计量检定机构加封的用电计量装置封印用电。

第四十条 供电企业应当在受理用电申请之日起五个工作日内答复用电人，说明供电方案和所需时间。供电企业应当按照国家规定的标准\
收取费用，不得收取国家规定以外的费用，不得指定设计、施工和设备材料供应单位。用电人对供电方案有异议的，可以向电力管理部门申请\
协调，电力管理部门应当在十五日内作出处理，并书面告知当事人。因供电企业原因延误送电，给用电人造成损失的，供电企业应当依法承担\
赔偿责任，并向用电人说明理由。供电企业应当建立用电申请办理情况档案，定期向社会公布办理时限和办结情况，接受电力管理部门和\
社会公众的监督。

第四十一条 供电企业应当公告。
"""


def test_a_quote_that_stops_inside_its_paragraph_says_the_paragraph_goes_on():
    doc = act("syn-eia", PENALTY_PARAGRAPH)
    source = texts(doc)
    supply = compose_answer("受理用电申请后几个工作日内答复？", ranked((doc, "第四十条")), source_text=source)
    first = supply.bullets[0]
    # a 款 of several sentences too long to quote whole: the sentence that answers, marked as cut
    assert first.pieces[-1].endswith("说明供电方案和所需时间。") and first.span.endswith("所需时间。……")
    assert first.citation.provision is None and first.verbatim_in(source("syn-eia") or "")
    # a whole 款 is not cut, though another 款 follows
    other = compose_answer("建设单位未公开验收报告的，罚款多少？", ranked((doc, "第二十三条")), source_text=source)
    assert other.bullets[0].span.endswith("处5万元以上20万元以下的罚款。")
    # an item of a list that goes on: the item cited, the list's rest marked
    item = compose_answer("绕越计量装置用电算窃电吗？", ranked((doc, "第三十一条")), source_text=source)
    assert "（二）绕越" in item.bullets[0].span and item.bullets[0].span.endswith("用电；……")
    # the last item ends its list and its 款: nothing left out after it
    last = compose_answer("伪造计量检定机构的封印用电算窃电吗？", ranked((doc, "第三十一条")), source_text=source)
    assert last.bullets[0].span.endswith("封印用电。")


def test_a_clause_is_quoted_to_the_end_of_its_sentence():
    """The fine of 第二十三条第一款 is one clause of a sentence whose other clauses are the same rule's branches (逾期
    不改正的 / 对直接负责的主管人员): the quote goes on to its 。, not stopping at the first ；."""
    doc = act("syn-eia", PENALTY_PARAGRAPH)
    source = texts(doc)
    fine = compose_answer("环境保护设施未经验收就投入生产，罚款多少？", ranked((doc, "第二十三条")), source_text=source)
    first = fine.bullets[0]
    assert "处20万元以上100万元以下的罚款；逾期不改正的，处100万元以上200万元以下的罚款；" in first.span
    assert first.span.endswith("责令关闭。") and first.citation.provision == "第二十三条第一款"
    assert first.verbatim_in(source("syn-eia") or "")


LINES = """# 济南市某某供电条例

第十五条 架空电力线路跨越铁路、公路、航道，依法需经铁路、交通等相关部门同意的，应当事先取得同意。

架空电力线路一般不得跨越房屋。被架空电力线路跨越的房屋不得再行增加高度。
"""


def test_when_no_unit_holds_a_key_term_the_one_sharing_the_askers_characters_is_quoted():
    """高压线 / 房顶 / 加盖 are nowhere in the article: the 款 on 房屋 … 增加高度 shares their 房 and 加 (rarer in the
    article than 线), and is quoted instead of the article's first 款."""
    doc = act("syn-lines", LINES)
    # 济南 is in the title only: the article shares it (what lets it be quoted), none of its 款 does
    answer = compose_answer(
        "济南，我家平房上方有高压线，还能在房顶上加盖一层吗？",
        ranked((doc, "第十五条")),
        source_text=texts(doc),
        floor=RelevanceFloor(coverage_alone=0.0),
    )
    assert "不得再行增加高度" in answer.bullets[0].span and "铁路" not in answer.bullets[0].span
    # a key term held decides as before: the 款 holding it, though the other shares more characters
    held = compose_answer("架空电力线路跨越航道要谁同意？", ranked((doc, "第十五条")), source_text=texts(doc))
    assert "航道" in held.bullets[0].span


def test_a_quote_is_laid_out_a_line_per_paragraph_it_shows():
    """Two 款 run together in the span are two lines; a lead-in and its items a line each; the article's label
    before text left out stays on the line of what follows it. Joined, the lines are the span."""
    from regrag.domain.results import Bullet

    two = Bullet("第八条 第一款的话。第二款的话。", None, "c", ("第八条 第一款的话。", "第二款的话。"))  # type: ignore[arg-type]
    assert two.lines() == ("第八条 第一款的话。", "第二款的话。")
    listed = Bullet(
        "第三条 有下列情形之一的：（一）甲；……（三）丙；……",
        None,  # type: ignore[arg-type]
        "c",
        ("第三条 有下列情形之一的：", "（一）甲；", "（三）丙；"),
    )
    assert listed.lines() == ("第三条 有下列情形之一的：", "（一）甲；……", "（三）丙；……")
    labelled = Bullet("第九条……第三款的话。", None, "c", ("第九条", "第三款的话。"))  # type: ignore[arg-type]
    assert labelled.lines() == ("第九条……第三款的话。",)
    # a table's rows: lines of the source with nothing left out between, though no row ends in punctuation
    rows = Bullet(
        "第十条 保护区：1—10千伏 5米35—110千伏 10米", None, "c", ("第十条 保护区：", "1—10千伏 5米", "35—110千伏 10米")
    )  # type: ignore[arg-type]
    assert rows.lines() == ("第十条 保护区：", "1—10千伏 5米", "35—110千伏 10米")
    for bullet in (two, listed, labelled, rows):
        assert "".join(bullet.lines()) == bullet.span


EIA_APPROVAL = """# 某某环境影响评价法

第二十四条 建设项目的环境影响评价文件经批准后，建设项目的性质、规模、地点、采用的生产工艺发生重大变动的，\
建设单位应当重新报批建设项目的环境影响评价文件。

建设项目的环境影响评价文件自批准之日起超过五年，方决定该项目开工建设的，\
其环境影响评价文件应当报原审批部门重新审核。

原审批部门应当自收到建设项目环境影响评价文件之日起十日内，将审核意见书面通知建设单位。
"""


def test_a_question_asking_two_things_is_shown_the_unit_answering_each():
    doc = act("syn-eia", EIA_APPROVAL)
    cands = ranked((doc, "第二十四条"))
    two = compose_answer(
        "项目环评批准后规模发生重大变动，要怎么办？环评文件批准超过五年才开工建设，还能直接用吗？",
        cands,
        source_text=texts(doc),
    )
    bullet = two.bullets[0]
    assert "重新报批" in bullet.span and "重新审核" in bullet.span and "十日内" not in bullet.span
    assert bullet.citation.provision == "第二十四条第一款、第二款"
    assert all(piece in doc.text for piece in bullet.pieces)
    # asked one thing, the unit answering it is quoted alone
    one = compose_answer("环评批复超过五年才开工建设，还能直接用吗？", cands, source_text=texts(doc))
    assert "重新审核" in one.bullets[0].span and "重新报批" not in one.bullets[0].span


def test_a_second_clause_repeating_the_first_asks_nothing_new():
    q = analyse("行政许可证可以转让吗？行政许可可以转让吗？", Filters())
    assert q.parts == ()
    two = analyse("排污许可证快到期了，要提前多少天申请延续？审批部门多长时间审完？", Filters())
    assert [p.clause for p in two.parts] == ["排污许可证快到期了，要提前多少天申请延续？", "审批部门多长时间审完？"]
    assert two.parts[0].asks_figure and two.asking(two.parts[1]).focus == {k.term for k in two.parts[1].keywords}


OZONE = """# 某某消耗臭氧层物质管理条例

第三十一条 无生产配额许可证生产消耗臭氧层物质的，由所在地县级以上地方人民政府环境保护主管部门责令停止违法行为，\
处100万元的罚款。

第三十二条 依照本条例规定应当申请领取使用配额许可证的单位无使用配额许可证使用消耗臭氧层物质的，\
由所在地县级以上地方人民政府环境保护主管部门责令停止违法行为，处20万元的罚款。
"""


def test_a_penalty_asked_is_read_first_from_the_article_punishing_the_act_the_question_names():
    doc = act("syn-ozone", OZONE)
    cands = ranked((doc, "第三十二条"), (doc, "第三十一条"))
    asked = compose_answer("企业无生产配额许可证生产消耗臭氧层物质，罚多少？", cands, source_text=texts(doc))
    assert firsts(asked) == [("syn-ozone", "第三十一条"), ("syn-ozone", "第三十二条")]
    # the act named as much in both (only 消耗臭氧层物质): the ranking's order stands
    plain = compose_answer("违法使用或者生产消耗臭氧层物质怎么处罚？", cands, source_text=texts(doc))
    assert firsts(plain) == [("syn-ozone", "第三十二条"), ("syn-ozone", "第三十一条")]


def test_a_voltage_the_question_states_picks_the_table_row_whose_range_holds_it():
    """电力设施保护条例 第十条 lists its distances by ranges of voltage (154—330千伏 15米): a question on a 220千伏 line
    is answered by that row, shown under the line that introduces the rows, not by the table's first rows."""
    doc = act("nat-reg-0091", sample_text("nat-reg-0091"))
    cands = ranked((doc, "第十条"))
    answer = compose_answer(
        "220千伏架空电力线路在一般地区的保护区，导线边线向外侧延伸距离是多少米？", cands, source_text=texts(doc)
    )
    first = answer.bullets[0].span
    assert "154—330千伏 15米" in first and "延伸距离如下：" in first
    assert not is_fragment(first)


def test_a_unit_saying_may_about_another_matter_does_not_outweigh_the_item_naming_what_is_asked():
    """能否用于 asks whether something is allowed, and 可以 is in most units: the 款 on 接网费用 that 可以申请 the fund
    is not the answer to what the fund may support; the item naming 海岛 … 独立电力系统建设 is."""
    doc = act("nat-law-0015", sample_text("nat-law-0015"))
    question = "可再生能源发展基金能否用于支持海岛上的可再生能源独立电力系统建设？"
    first = compose_answer(question, ranked((doc, "第二十四条")), source_text=texts(doc)).bullets[0]
    assert "（三）偏远地区和海岛可再生能源独立电力系统建设" in first.span and "用于支持以下事项：" in first.span
    assert "接网费用" not in first.span


LAND_APPROVAL = """# 某某土地法

第三十五条 永久基本农田经依法划定后，任何单位和个人不得擅自占用或者改变其用途。\
重点建设项目选址确实难以避让永久基本农田，涉及土地征收的，必须经国务院批准。

第四十六条 征收下列土地的，由国务院批准：

（一）永久基本农田；

（二）永久基本农田以外的耕地超过三十五公顷的；

（三）其他土地超过七十公顷的。

征收前款规定以外的土地的，由省、自治区、直辖市人民政府批准。
"""


def test_the_state_council_is_an_authority_so_the_item_under_its_approval_answers_who_approves():
    """由国务院批准 names the authority as 由省…人民政府批准 does: the item on 40 hectares of arable land is quoted
    under the lead-in naming the State Council, not the 款 on the land left over."""
    doc = act("syn-land", LAND_APPROVAL)
    question = "某光伏项目需要征收永久基本农田以外的耕地40公顷，由哪一级批准？"
    answer = compose_answer(question, ranked((doc, "第四十六条")), source_text=texts(doc))
    first = answer.bullets[0].span
    assert "由国务院批准：" in first and "超过三十五公顷" in first


def test_a_figure_of_the_askers_case_puts_the_quote_stating_a_threshold_in_its_unit_first():
    doc = act("syn-land", LAND_APPROVAL)
    cands = ranked((doc, "第三十五条"), (doc, "第四十六条"))
    case = compose_answer("要征收大约40公顷一般耕地，征地要报哪一级批准？", cands, source_text=texts(doc))
    assert firsts(case) == [("syn-land", "第四十六条"), ("syn-land", "第三十五条")]
    # no figure of the case: the ranking's order stands
    plain = compose_answer("要征收一般耕地，征地要报哪一级批准？", cands, source_text=texts(doc))
    assert firsts(plain) == [("syn-land", "第三十五条"), ("syn-land", "第四十六条")]
    # a figure asked: rule 1 reads the unit asked, not the unit the case is told in
    asked = compose_answer("征收40公顷耕地，批准要在几天内作出？", cands, source_text=texts(doc))
    assert firsts(asked) == [("syn-land", "第三十五条"), ("syn-land", "第四十六条")]


def test_the_key_characters_are_weighed_in_the_question_order_not_a_sets():
    """Summed in a set's order, two units' weights could differ in the last bit from one process to the next (string
    hashes are salted per process), so a tie broke differently and the same question quoted another 款."""
    q = analyse("平房上方有高压线，房顶上还能加盖一层吗？", Filters())
    chars = key_characters(q, ["架空电力线路保护区内不得兴建建筑物", "房屋不得增加高度"])
    assert list(chars) == list(dict.fromkeys(c for k in q.keywords for c in k.term))


PIPELINE = """# 某某管道保护法

第三十三条 在管道专用隧道中心线两侧各一千米地域范围内，因修建铁路、公路、水利工程等公共工程，确需实施采石、爆破作业的，\
应当经管道所在地县级人民政府主管管道保护工作的部门批准。

第三十五条 进行下列施工作业，施工单位应当向管道所在地县级人民政府主管管道保护工作的部门提出申请：

（一）穿跨越管道的施工作业；

（二）在管道线路中心线两侧各五米至五十米地域范围内，新建、改建、扩建铁路、公路、河渠。
"""


def test_a_later_quote_repeating_the_questions_own_phrase_goes_first():
    doc = act("syn-pipe", PIPELINE)
    cands = ranked((doc, "第三十五条"), (doc, "第三十三条"))
    named = compose_answer("在管道专用隧道中心线两侧一千米内爆破，要经谁批准？", cands, source_text=texts(doc))
    assert firsts(named) == [("syn-pipe", "第三十三条"), ("syn-pipe", "第三十五条")]
    # no phrase of the question in one quote more than in the other: the ranking's order stands
    plain = compose_answer("在管道附近施工，要经谁批准？", cands, source_text=texts(doc))
    assert firsts(plain) == [("syn-pipe", "第三十五条"), ("syn-pipe", "第三十三条")]


SAFETY = """# 某某安全生产法

第二十四条 矿山、金属冶炼、建筑施工、运输单位和危险物品的生产、经营、储存、装卸单位，应当设置安全生产管理机构或者配备\
专职安全生产管理人员。

前款规定以外的其他生产经营单位，从业人员超过一百人的，应当设置安全生产管理机构或者配备专职安全生产管理人员；从业人员\
在一百人以下的，应当配备专职或者兼职的安全生产管理人员。
"""


def test_the_unit_whose_threshold_admits_the_askers_figure_is_quoted():
    doc = act("syn-safety", SAFETY)
    cands = ranked((doc, "第二十四条"))
    case = compose_answer(
        "一家从业人员120人的普通制造企业，不属于矿山、建筑施工等高危行业，是否必须设置安全生产管理机构？",
        cands,
        source_text=texts(doc),
    )
    assert "从业人员超过一百人的" in case.bullets[0].span
    assert "第二款" in case.bullets[0].citation.marker
    # no figure of the case: the 款 sharing most of the question's words
    plain = compose_answer("建筑施工单位是否必须设置安全生产管理机构？", cands, source_text=texts(doc))
    assert "矿山、金属冶炼、建筑施工" in plain.bullets[0].span
    assert "超过一百人" not in plain.bullets[0].span


WATER = """# 某某水污染防治法

第八十五条 有下列行为之一的，由县级以上地方人民政府环境保护主管部门责令停止违法行为，处二万元以上二十万元以下的罚款：

（一）工厂向河里排放有毒废水的；
"""

CRIMINAL = """# 某某刑法

第三百三十八条 违反国家规定，排放、倾倒或者处置有毒物质，严重污染环境的，处三年以下有期徒刑或者拘役，并处或者单处罚金。
"""


def test_a_later_quote_holding_more_of_what_is_asked_goes_first():
    water, criminal = act("syn-water", WATER), act("syn-criminal", CRIMINAL)
    cands = ranked((water, "第八十五条"), (criminal, "第三百三十八条"))
    both = compose_answer(
        "工厂往河里排放有毒废水，老板会受到什么处罚？一般判几年？", cands, source_text=texts(water, criminal)
    )
    assert firsts(both) == [("syn-criminal", "第三百三十八条"), ("syn-water", "第八十五条")]
    # the penalty alone is asked: the fine holds it as the years do, and the ranking's order stands
    penalty = compose_answer("工厂往河里排放有毒废水，会受到什么处罚？", cands, source_text=texts(water, criminal))
    assert firsts(penalty) == [("syn-water", "第八十五条"), ("syn-criminal", "第三百三十八条")]
