"""A citation-check report (regrag check, POST /check) laid out for a memo: the document and the day it was
checked as of, the counts, one row per cited provision (the reference as written, the finding, the message),
then for each problem the evidence: the article's stored text, the quotation's differences, the successor."""

from __future__ import annotations

from typing import Any

from regrag.check.findings import OK
from regrag.check.report import conclusion, diff_text, provision_text
from regrag.ops.exports.memo import DISCLAIMER, Block, Heading, Link, Memo, Quote, Rule, Table, para

AS_OF_SOURCES = {"request": "指定的核验日期", "document": "文书落款日期", "today": "今天"}


def check_memo(report: dict[str, Any], name: str, link: Any) -> Memo:
    """`report`: the check's JSON answer; `name`: the document's name; `link(doc_id, article)`: the page's
    address of a document at an article."""
    summary = report["summary"]
    citations = report["citations"]
    blocks: list[Block] = [
        para(name, label="文书："),
        para(
            f"{report['as_of']}（{AS_OF_SOURCES.get(report['as_of_source'], report['as_of_source'])}）",
            label="核验日期：",
        ),
        para(
            f"共 {summary['citations']} 处引用：正确 {summary['ok']} 处"
            + (f"（其中请核对 {summary['cautions']} 处）" if summary.get("cautions") else "")
            + f"，有问题 {summary['problems']} 处，无法核验 {summary['unverifiable']} 处",
            label="结论：",
        ),
        Heading("逐条结果"),
        Table(
            ("序号", "引用（原文写法）", "条文", "结论", "说明"),
            tuple((str(n), c["text"], _where(c), conclusion(c), c["message"]) for n, c in enumerate(citations, 1)),
        ),
    ]
    problems = [(n, c) for n, c in enumerate(citations, 1) if c["status"] != OK or c.get("caution")]
    if problems:
        blocks.append(Heading("问题与依据"))
    for n, c in problems:
        blocks += _evidence(n, c, link)
    blocks += [Rule(), para(DISCLAIMER, small=True)]
    return Memo("引用核验报告", tuple(blocks))


def _where(c: dict[str, Any]) -> str:
    if not c.get("article"):
        return c.get("title") or "—"
    return f"《{c.get('title') or c.get('cited_title') or ''}》{provision_text(c)}"


def _evidence(n: int, c: dict[str, Any], link: Any) -> list[Block]:
    evidence = c.get("evidence") or {}
    blocks: list[Block] = [
        Heading(f"{n}. {c['text']}：{conclusion(c)}", 2),
        para(c["message"]),
    ]
    for q in c.get("quotes") or []:
        if q.get("match") == "mismatch" and q.get("diff"):
            blocks.append(para(diff_text(q["diff"]), label="差异（[引文→原文]）：", small=True))
    if evidence.get("article_text"):
        blocks.append(para(f"《{c.get('title') or ''}》{c.get('article') or ''}原文：", small=True))
        blocks.append(Quote(str(evidence["article_text"])))
    counterpart = evidence.get("counterpart")
    if isinstance(counterpart, dict) and counterpart.get("text"):
        blocks.append(para(f"现行版本对应条文{counterpart.get('article') or ''}：", small=True))
        blocks.append(Quote(str(counterpart["text"])))
    if c.get("doc_id"):
        where = link(c["doc_id"], c.get("article"))
        blocks.append(
            para(Link(f"《{c.get('title') or ''}》{c.get('article') or ''}", where), label="原文：", small=True)
        )
    return blocks
