"""The deterministic stand-in generator: it reads the real prompt files' data blocks and answers without a model."""

from __future__ import annotations

import pytest

from regrag.adapters.local.generator import ExtractiveGenerator, data_block, template_questions
from regrag.domain.generation import GenerationRejected
from regrag.domain.models import Chunk, DocumentMeta
from regrag.ingest.questions import QuestionsIndexer, response_schema
from regrag.prompts import load_prompt
from regrag.query.aids.hyde import RESPONSE_SCHEMA, Hyde

HITS = [
    "第二十八条 除本条例另有规定外，供电企业应当连续向用户供电；因故需要停止供电时，应当事先通知用户。",
    "第三十条　因供电设施计划检修需要停电的，供电企业应当提前7日通知用户或者进行公告。其他内容。",
    "（一）因供电设施临时检修需要停止供电时，供电企业应当提前24小时通知重要用户",
    "第四条 第四个命中不会被使用。",
]


def chunk(text, article="第十四条", heading_path=("第三章 电力线路设施的保护",), title="电力设施保护条例"):
    meta = DocumentMeta(doc_id="d", title=title)
    return Chunk("c", "d", "article", article, 0, 1, 1, heading_path, 0, len(text), text, text, meta)


class NoModel:
    """Stands in for the generator where the test only renders prompts."""

    def generate_json(self, prompt, schema, *, system=None, timeout_s=None):
        raise AssertionError("not called")


def hyde_prompt(question):
    return Hyde(NoModel(), "m", load_prompt("hyde_v1"), None, timeout_s=3.0, cache_size=0).build_prompt(question)


def questions_prompt(c, count=3):
    indexer = QuestionsIndexer(
        NoModel(), "m", load_prompt("questions_v1"), None, None, timeout_s=10.0, max_questions=count
    )
    return indexer.build_prompt(c)


def test_the_hypothetical_passage_is_the_opening_sentences_of_the_top_lexical_hits():
    seen = []

    def search(question):
        seen.append(question)
        return HITS

    generator = ExtractiveGenerator(search)
    question = "计划检修停电要提前几天通知？"
    answer = generator.generate_json(hyde_prompt(question), RESPONSE_SCHEMA)
    assert seen == [question]  # the question came back out of the prompt's JSON block intact
    assert answer == {
        "answer": "除本条例另有规定外，供电企业应当连续向用户供电。"
        "因供电设施计划检修需要停电的，供电企业应当提前7日通知用户或者进行公告。"
        "（一）因供电设施临时检修需要停止供电时，供电企业应当提前24小时通知重要用户。"
    }


def test_it_is_deterministic():
    prompt = hyde_prompt("窃电行为如何处罚？")
    answers = {str(ExtractiveGenerator(lambda q: list(HITS)).generate_json(prompt, RESPONSE_SCHEMA)) for _ in range(3)}
    assert len(answers) == 1
    c = chunk("第十四条　任何单位或个人，不得从事下列危害电力线路设施的行为：\n（一）向电力线路设施射击；")
    asked = {str(ExtractiveGenerator().generate_json(questions_prompt(c), response_schema(3))) for _ in range(3)}
    assert len(asked) == 1


def test_no_lexical_hit_is_an_empty_answer_that_hyde_turns_into_a_fallback():
    class Embedder:
        model_id = "e"

        def embed_documents(self, texts):
            raise AssertionError("nothing to embed")

    hyde = Hyde(
        ExtractiveGenerator(lambda q: []), "extractive", load_prompt("hyde_v1"), Embedder(), timeout_s=3.0, cache_size=0
    )
    result = hyde.expand("一个没有任何命中的问题")
    assert result.status == "fallback:empty" and result.vector is None


def test_template_questions_come_from_the_heading_the_first_clause_and_the_first_norm():
    c = chunk("第十四条　任何单位或个人，不得从事下列危害电力线路设施的行为：\n（一）向电力线路设施射击；")
    answer = ExtractiveGenerator().generate_json(questions_prompt(c), response_schema(3))
    assert answer == {
        "questions": [
            "电力线路设施的保护中，任何单位或个人的规定是什么？",
            "任何单位或个人不得有哪些行为？",
            "《电力设施保护条例》第十四条规定了什么？",
        ]
    }
    # the schema's maxItems bounds the count
    assert len(ExtractiveGenerator().generate_json(questions_prompt(c, 2), response_schema(2))["questions"]) == 2


@pytest.mark.parametrize(
    ("article", "expected"),
    [
        (
            {
                "title": "电力供应与使用条例",
                "heading_path": [],
                "article": "第二十八条",
                "text": "第二十八条 供电企业因检修需要停电时，应当提前七天通知用户。",
            },
            [
                "《电力供应与使用条例》中，供电企业因检修需要停电时的规定是什么？",
                "供电企业因检修需要停电时应当怎么做？",
                "《电力供应与使用条例》第二十八条规定了什么？",
            ],
        ),
        (
            {"title": "某办法", "heading_path": ["第一章 总则"], "article": "", "text": "禁止在保护区内堆放杂物。"},
            ["总则中，禁止在保护区内堆放杂物的规定是什么？", "总则中禁止哪些行为？", "《某办法》关于总则有什么规定？"],
        ),
        ({"title": "", "heading_path": [], "article": "", "text": ""}, []),
    ],
    ids=["obligation-without-heading", "prohibition-without-subject", "empty"],
)
def test_template_questions_are_generic(article, expected):
    assert template_questions(article, 3) == expected


def test_prompts_it_cannot_read_are_rejected_as_a_client_error():
    generator = ExtractiveGenerator()
    with pytest.raises(GenerationRejected, match="hyde and questions prompts only"):
        generator.generate_json("给候选片段打分", {"type": "array"})
    with pytest.raises(GenerationRejected, match="no <question> block"):
        generator.generate_json("没有数据块", RESPONSE_SCHEMA)
    with pytest.raises(GenerationRejected, match="not JSON"):
        data_block("<article>\n{不是JSON\n</article>", "article")
