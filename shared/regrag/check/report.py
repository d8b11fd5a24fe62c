"""The check's answer for a terminal (`regrag check`) and the exit status a team's pipeline reads."""

from __future__ import annotations

from collections import Counter
from typing import Any

from regrag.check.findings import OK, UNKNOWN_LAW
from regrag.text.legal import int_to_chinese

LABELS = {
    "ok": "正确",
    "article_missing": "条文不存在",
    "quote_mismatch": "引文不符",
    "quote_elsewhere": "引文出自他条",
    "superseded": "已被取代",
    "not_yet_in_force": "尚未施行",
    "unknown_law": "无法核验",
    "wrong_title": "名称有误",
    "ambiguous": "简称有歧义",
}


def conclusion(c: dict[str, Any]) -> str:
    """A citation's finding as a reader reads it: the status's label, and for an ok citation with a caution (its
    message says what) that it is to be checked all the same."""
    return LABELS.get(c["status"], c["status"]) + ("，请核对" if c.get("caution") else "")


def exit_code(report: dict[str, Any], allow_unknown: bool = False) -> int:
    """0 when every citation is ok (unknown_law too, with `allow_unknown`), else 1."""
    fine = {OK, UNKNOWN_LAW} if allow_unknown else {OK}
    return 0 if all(c["status"] in fine for c in report["citations"]) else 1


def _line_of(text: str | None, offset: int) -> str:
    return f"第{text.count(chr(10), 0, offset) + 1}行" if text else f"@{offset}"


def provision_text(c: dict[str, Any]) -> str:
    para = f"第{int_to_chinese(c['paragraph'])}款" if c.get("paragraph") else ""
    item = f"第（{int_to_chinese(c['item'])}）项" if c.get("item") else ""
    return f"{c['article']}{para}{item}"


def diff_text(ops: list[dict[str, str]]) -> str:
    """[quote→law] marks the characters that differ: 处10万元以上[50→100]万元以下."""
    out = []
    for op in ops:
        if op["op"] == "equal":
            out.append(op["law"])
        else:
            out.append(f"[{op['quote'] or '∅'}→{op['law'] or '∅'}]")
    return "".join(out)


def format_report(report: dict[str, Any], name: str) -> str:
    """One block per citation: status, where, the reference, the finding; a diff under a mismatched quotation."""
    text = (report.get("document") or {}).get("text")
    summary = report["summary"]
    source = {"request": "指定日期", "document": "文件日期", "today": "今日"}[report["as_of_source"]]
    lines = [f"{name}：核验日期 {report['as_of']}（{source}），引用 {summary['citations']} 处"]
    spans = Counter((c["start"], c["end"]) for c in report["citations"])
    for c in report["citations"]:
        # an ok citation with a caution (its figure is not the article's, its number moved) is marked apart
        mark = "✗" if c["status"] != OK else "!" if c.get("caution") else "✓"
        lines.append(
            f"{mark} {c['status']}（{conclusion(c)}） {_line_of(text, c['start'])}  {c['text']}"
            # a range or list gives one line per provision: say which
            + (f"  →{provision_text(c)}" if spans[(c["start"], c["end"])] > 1 else "")
        )
        if c["status"] != OK or c.get("caution"):
            lines.append(f"    {c['message']}")
        for q in c["quotes"]:
            if q.get("match") == "mismatch":
                lines.append(f"    差异：{diff_text(q['diff'])}")
        suggestion = c["evidence"].get("suggestion")
        if suggestion and c["status"] in ("wrong_title", "unknown_law"):
            lines.append(f"    相近名称：《{suggestion}》")
    counts = "，".join(f"{LABELS[s]} {n}" for s, n in summary["by_status"].items())
    cautions = f"（其中请核对 {summary['cautions']}）" if summary.get("cautions") else ""
    lines.append(f"合计：{counts or '无引用'}{cautions}")
    return "\n".join(lines)
