"""A deterministic stand-in for Gemini on the `Generator` port: no model, only text already in the index.

`ExtractiveGenerator` answers the two retrieval-aid prompts (hyde_v1, questions_v1) so the evaluation can show
what the aids would change without a model, key or network, and give the same answer every run. It is a
measuring instrument, not a product choice: Gemini is (REGRAG_GENERATOR=gemini).

It reads the data block of the prompt the way a model would (the JSON between <question>…</question> or
<article>…</article>) and picks the task from the response schema's property ("answer" or "questions"):

- HyDE ("answer"): pseudo-relevance feedback (Rocchio; Lavrenko & Croft's relevance models): the opening
  sentence of each of the top lexical hits for the question, joined. An LLM writes what a relevant passage
  would say; this writes what the passages BM25 already finds do say, which is the best a model-free
  generator can do and is a conservative estimate of the aid.
- questions ("questions"): template questions built from the article's heading and its first clause and
  first normative sentence (应当/必须/不得/禁止/可以), plus one naming the act and article. Generic on
  purpose: nothing in them is tuned to any evaluation question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from regrag.domain.generation import GenerationEmpty, GenerationRejected
from regrag.text.numerals import ARTICLE_LABEL, HEADING_LABEL, unnamed
from regrag.text.sentences import split_sentences

_BLOCK = re.compile(r"<(?P<tag>question|article)>\s*(?P<data>.*?)\s*</(?P=tag)>", re.DOTALL)
_ARTICLE_LABEL = re.compile(rf"^\s*{unnamed(ARTICLE_LABEL)}\s*")
_HEADING_NUMBER = re.compile(rf"^\s*{unnamed(HEADING_LABEL)}\s*")
_CLAUSE_BREAK = re.compile(r"[，,：:；;]")
# normative verbs, in the order a question template prefers them; each maps to the question it asks
_MODALS = {
    "应当": "{subject}应当怎么做？",
    "必须": "{subject}必须怎么做？",
    "不得": "{subject}不得有哪些行为？",
    "禁止": "{subject}禁止哪些行为？",
    "可以": "{subject}可以怎么做？",
}


def data_block(prompt: str, tag: str) -> Any:
    """The JSON value between <tag> and </tag> in a prompt (the prompts encode their data as JSON)."""
    for match in _BLOCK.finditer(prompt):
        if match.group("tag") == tag:
            try:
                return json.loads(match.group("data"))
            except json.JSONDecodeError as exc:
                raise GenerationRejected(f"the <{tag}> block is not JSON: {exc}") from exc
    raise GenerationRejected(f"the prompt has no <{tag}> block")


def _body(text: str) -> str:
    return _ARTICLE_LABEL.sub("", text.strip(), count=1)


def first_clause(sentence: str, max_chars: int = 30) -> str:
    """The sentence up to its first comma, colon or semicolon, without the end mark."""
    clause = _CLAUSE_BREAK.split(sentence, maxsplit=1)[0].strip().rstrip("。！？!?")
    return clause[:max_chars]


def normative_question(sentences: Sequence[str], topic: str, max_subject_chars: int = 25) -> str | None:
    """From the first sentence with a normative verb: who must / must not / may do what."""
    for sentence in sentences:
        found = [(sentence.find(m), m) for m in _MODALS if m in sentence]
        if not found:
            continue
        index, modal = min(found)
        before = sentence[:index].rstrip("，,、 ")
        subject = _CLAUSE_BREAK.split(before)[-1].strip()[-max_subject_chars:] if before else ""
        return _MODALS[modal].format(subject=subject or f"{topic}中")
    return None


def template_questions(article: dict[str, Any], count: int) -> list[str]:
    """Up to `count` distinct questions an article answers, built from its own words."""
    title = str(article.get("title") or "").strip()
    label = str(article.get("article") or "").strip()
    headings = [str(h) for h in article.get("heading_path") or [] if str(h).strip()]
    sentences = split_sentences(_body(str(article.get("text") or "")))
    topic = _HEADING_NUMBER.sub("", headings[-1]).strip() if headings else ""
    topic = topic or (f"《{title}》" if title else "本规定")
    found: list[str] = []
    clause = first_clause(sentences[0]) if sentences else ""
    if clause:
        found.append(f"{topic}中，{clause}的规定是什么？")
    normative = normative_question(sentences, topic)
    if normative:
        found.append(normative)
    if title:
        found.append(f"《{title}》{label}规定了什么？" if label else f"《{title}》关于{topic}有什么规定？")
    return list(dict.fromkeys(found))[:count]


class ExtractiveGenerator:
    """The `Generator` port without a model (see the module docstring).

    Args:
        lexical_search: question → texts of its top lexical hits, best first (wiring passes the BM25 leg).
        passages: how many hits the hypothetical passage is made of.
        sentence_chars: each opening sentence is cut to this length.
    """

    model_id = "extractive-local-v1"

    def __init__(
        self,
        lexical_search: Callable[[str], list[str]] | None = None,
        *,
        passages: int = 3,
        sentence_chars: int = 120,
    ) -> None:
        self.lexical_search = lexical_search
        self.passages = passages
        self.sentence_chars = sentence_chars

    def generate_json(
        self, prompt: str, schema: dict[str, Any], *, system: str | None = None, timeout_s: float | None = None
    ) -> Any:
        properties = schema.get("properties") or {}
        if "answer" in properties:
            question = data_block(prompt, "question")
            return {"answer": self.hypothetical_passage(str(question))}
        if "questions" in properties:
            article = data_block(prompt, "article")
            count = int(properties["questions"].get("maxItems") or 3)
            return {"questions": template_questions(article if isinstance(article, dict) else {}, count)}
        raise GenerationRejected("the extractive generator answers the hyde and questions prompts only")

    def hypothetical_passage(self, question: str) -> str:
        """The opening sentences of the top lexical hits for `question`, joined."""
        texts = self.lexical_search(question) if self.lexical_search is not None else []
        openings = []
        for text in texts[: self.passages]:
            sentences = split_sentences(_body(text))
            if sentences:
                # each opening reads as a sentence of its own, whatever mark (or line end) closed it
                opening = sentences[0][: self.sentence_chars].rstrip("：:，,；;、 ")
                openings.append(opening if opening.endswith(("。", "！", "？")) else opening + "。")
        if not openings:
            raise GenerationEmpty("no lexical hit to build a hypothetical passage from")
        return "".join(openings)
