"""What kind of provision a question asks for, read from how it asks: a vocabulary bridge that does not depend
on the question's nouns.

A lay question rarely shares its nouns with the statute (偷电 / 窃电, 老板不给钱 / 拖欠劳动报酬), but the form of
the question says which kind of article answers it: 怎么处罚 / 判几年 asks for a penalty provision (罚款, 有期徒刑,
吊销 …), 需要什么手续 for a procedure (申请, 审批, 备案 …), 什么是 for a definition (本法所称……是指), 赔多少 for
liability, 多久 / 几天 for a time limit. Each form is matched to the article's own wording (and the 法律责任 chapter
in its heading path), and candidates of the asked kind move up as one more ranking fused by RRF (query/score.py),
like the key-term coverage ranking: a preference, never a filter, and no score is compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrag.text.numerals import ARABIC, FIGURE_DIGITS
from regrag.text.units import quantity_units


@dataclass(frozen=True)
class Form:
    name: str
    asked: re.Pattern[str]  # in the question
    answered: re.Pattern[str]  # in the article text (heading path included)


FORMS = (
    Form(
        "penalty",
        re.compile(
            r"处罚|罚款|罚多少|怎么罚|被罚|判几年|判刑|坐牢|拘留|刑事责任|法律责任|什么责任|什么后果|违法吗|犯法吗|犯罪吗"
        ),
        re.compile(r"罚款|有期徒刑|拘役|管制|吊销|没收|行政拘留|处分|追究刑事责任|法律责任"),
    ),
    Form(
        "procedure",
        re.compile(r"手续|怎么办理|如何办理|怎么申请|如何申请|审批|备案|报批|许可证|要批准|要登记|流程|程序"),
        re.compile(r"申请|审批|批准|备案|许可|登记|核准|提交|材料|受理"),
    ),
    Form(
        "definition",
        re.compile(
            r"什么是|是指什么|指的是|算不算|属不属于|是否属于|属于.{0,8}吗|构成.{0,8}吗|是不是|定义|怎么认定|如何认定|认定为"
        ),
        re.compile(r"所称|是指|包括下列|认定为"),
    ),
    Form(
        "liability",
        re.compile(r"赔偿|赔多少|补偿|索赔|谁赔|谁负责|谁承担|担责|承担.{0,8}(?:责任|损失)"),
        re.compile(r"赔偿|补偿|承担.{0,6}责任|损失"),
    ),
    Form(
        # who decides, approves or enforces: the answer names a body (the corpus's own words for one)
        "authority",
        re.compile(
            r"由谁|谁来|谁负责|谁审批|谁批准|谁管|向谁|找谁|哪个部门|哪些部门|什么部门|哪一级|哪级|哪个机关|什么机关|哪个单位"
        ),
        re.compile(r"部门|人民政府|机关|机构|委员会"),
    ),
    Form(
        # a list asked for as a whole: the answer introduces its items (下列 / 以下)
        "enumeration",
        re.compile(r"哪些|哪几|有什么|包括什么|几种|什么情形|什么情况下"),
        re.compile(r"下列|以下(?:情形|行为|事项|条件|内容)"),
    ),
    Form(
        "time_limit",
        re.compile(r"多久|几天|几日|期限|时限|多长时间|提前几|几个月|几年内"),
        re.compile(rf"(?:[{ARABIC}]+|[{FIGURE_DIGITS}]+)\s*(?:{quantity_units('time')})|期限|日内|提前"),
    ),
)


def asked_forms(question: str) -> tuple[Form, ...]:
    return tuple(f for f in FORMS if f.asked.search(question))
