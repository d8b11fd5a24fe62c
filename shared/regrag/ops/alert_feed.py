"""Alerts as an Atom feed (RFC 4287): what a feed reader, a mail digest or a chat bot subscribes to.

Each alert is one entry: its id is the alert's (urn:regrag:alert:<id>, stable across fetches, so a reader shows
it once), its title the alert's sentence, its link the page at the document (and article) it is about now, its
content the change in plain text (the article's old and new text, the versions' counts, the citations added
and removed). Built with the standard library's ElementTree, which escapes every text it writes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from regrag.domain.watches import now_utc

ATOM = "http://www.w3.org/2005/Atom"
KIND_WORDS = {
    "new_version": "新版本",
    "repealed": "废止或被取代",
    "article_changed": "条文修改",
    "article_removed": "条文删除",
    "question_changed": "问题的引用条文变化",
}


def atom_feed(alerts: list[dict[str, Any]], *, feed_url: str, title: str = "regrag 法规变动提醒") -> bytes:
    """`alerts`: as GET /alerts lists them (newest first, each with its `link`)."""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    _text(feed, "id", feed_url)
    _text(feed, "title", title)
    _text(feed, "updated", alerts[0]["created"] if alerts else now_utc())
    ET.SubElement(feed, f"{{{ATOM}}}link", rel="self", href=feed_url, type="application/atom+xml")
    author = ET.SubElement(feed, f"{{{ATOM}}}author")
    _text(author, "name", "regrag")
    for alert in alerts:
        entry = ET.SubElement(feed, f"{{{ATOM}}}entry")
        _text(entry, "id", f"urn:regrag:alert:{alert['alert_id']}")
        _text(entry, "title", alert.get("message") or KIND_WORDS.get(alert["kind"], alert["kind"]))
        _text(entry, "updated", alert["created"])
        _text(entry, "published", alert["created"])
        if alert.get("link"):
            ET.SubElement(entry, f"{{{ATOM}}}link", rel="alternate", href=alert["link"])
        ET.SubElement(entry, f"{{{ATOM}}}category", term=alert["kind"], label=KIND_WORDS.get(alert["kind"], ""))
        content = ET.SubElement(entry, f"{{{ATOM}}}content", type="text")
        content.text = describe(alert)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(feed, encoding="utf-8", xml_declaration=False)


def _text(parent: ET.Element, tag: str, text: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{tag}")
    element.text = text
    return element


def describe(alert: dict[str, Any]) -> str:
    """The change in plain text: the sentence, the dates, then the diff."""
    lines = [alert.get("message") or ""]
    dates = alert.get("dates") or {}
    if dates.get("entry_into_force"):
        lines.append(f"生效日期：{dates['entry_into_force']}")
    diff = alert.get("diff") or {}
    if "change" in diff:  # one article
        old, new = diff.get("old") or {}, diff.get("new") or {}
        if old.get("text"):
            lines += ["", f"原条文（{old.get('article', '')}）：", old["text"]]
        if new.get("text"):
            lines += ["", f"现条文（{new.get('article', '')}）：", new["text"]]
        for related in diff.get("related") or []:
            lines += ["", f"内容见于新版本{related.get('article', '')}：", related.get("text", "")]
        if not new.get("text") and not diff.get("related"):
            lines += ["", "现条文：无"]
    elif "summary" in diff:  # a whole version
        words = {"changed": "修改", "renumbered": "条号变动", "added": "新增", "removed": "删除"}
        counts = "，".join(f"{w} {diff['summary'].get(k, 0)} 条" for k, w in words.items())
        lines += ["", f"修订对照：{counts}"]
    elif "added" in diff:  # a saved question
        lines += ["", f"问题：{diff.get('question', '')}"]
        lines += [f"新增引用：{c.get('marker') or c.get('article')}" for c in diff.get("added") or []]
        lines += [f"不再引用：{c.get('marker') or c.get('article')}" for c in diff.get("removed") or []]
    return "\n".join(lines)
