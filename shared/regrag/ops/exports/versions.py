"""A document's version chain and what changed between consecutive versions (GET /documents/{id}/versions, the
修订对照 lawyers build by hand) laid out for a memo: each version with both dates, then per revision a table of
the articles changed, renumbered, added and removed, old text beside new."""

from __future__ import annotations

from typing import Any

from regrag.ops.exports.memo import DISCLAIMER, Block, Heading, Link, Memo, Rule, Table, para

CHANGE_WORDS = {"changed": "修改", "renumbered": "条号变动", "added": "新增", "removed": "删除", "unchanged": "未变"}


def versions_memo(view: dict[str, Any], link: Any) -> Memo:
    """`view`: views.documents.versions_view; `link(doc_id, article)`: the page's address of a document."""
    chain = view.get("versions") or []
    by_id = {v["doc_id"]: v for v in chain}
    current = by_id.get(view.get("doc_id", "")) or (chain[-1] if chain else {})
    title = f"《{current.get('title', view.get('doc_id', ''))}》版本沿革与修订对照"
    blocks: list[Block] = [Heading("版本沿革")]
    rows = []
    for v in chain:
        status = "现行" if not v.get("effective_to") else f"{v['effective_to']} 起失效"
        rows.append(
            (
                f"《{v.get('title', '')}》",
                v.get("promulgated") or "—",
                v.get("effective_from") or "日期不详",
                status,
                v["doc_id"],
            )
        )
    blocks.append(Table(("版本", "公布", "施行", "效力", "文件编号"), tuple(rows)))
    for v in chain:
        where = link(v["doc_id"], None)
        blocks.append(
            para(
                Link(f"《{v.get('title', '')}》（{v.get('effective_from') or v['doc_id']}）", where),
                label="原文：",
                small=True,
            )
        )
    changes = view.get("changes") or []
    if not changes:
        blocks.append(para("只收录了一个版本，没有可对照的修订。"))
    for change in changes:
        old, new = by_id.get(change["from"], {}), by_id.get(change["to"], {})
        blocks.append(
            Heading(f"修订对照：{old.get('effective_from') or '?'} 版 → {new.get('effective_from') or '?'} 版", 2)
        )
        summary = change.get("summary") or {}
        counts = "，".join(f"{CHANGE_WORDS[k]} {n} 条" for k, n in summary.items() if n and k in CHANGE_WORDS)
        blocks.append(para(counts or "条文无变化", label="概要："))
        pairs = [
            (
                CHANGE_WORDS.get(a["change"], a["change"]),
                _side(a.get("old")),
                _side(a.get("new")),
            )
            for a in change.get("articles") or []
        ]
        if pairs:
            blocks.append(
                Table(
                    (
                        "变化",
                        f"原条文（{old.get('effective_from') or '?'}）",
                        f"现条文（{new.get('effective_from') or '?'}）",
                    ),
                    tuple(pairs),
                )
            )
    blocks += [Rule(), para(DISCLAIMER, small=True)]
    return Memo(title, tuple(blocks))


def _side(article: dict[str, Any] | None) -> str:
    return article["text"] if article else "—"
