"""regrag watch add|list|remove|check, regrag alerts, regrag versions: watches, their alerts, and exports of a
document's versions, on the same endpoints as the HTTP API."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from regrag.api import endpoints
from regrag.api.routes import call
from regrag.inputs import parse
from regrag.ops.alert_feed import atom_feed
from regrag.ops.exports.files import Export
from regrag.services import Services

LOCAL_PAGE = "http://127.0.0.1:8080/"  # where `regrag serve` serves the page unless told otherwise


def page_url(services: Services) -> str:
    """The page the links of exports and alerts point at: REGRAG_PUBLIC_URL, else `regrag serve`'s address."""
    return services.settings.public_url or LOCAL_PAGE


def add_parsers(sub: Any, filters: Any) -> None:
    """The watch, alerts and versions commands (`filters(parser)` adds the --province … options of ask)."""
    watch = sub.add_parser("watch", help="watch a document, an article or a question; be told when it changes")
    ws = watch.add_subparsers(dest="watch_command", required=True)
    add = ws.add_parser("add", help="watch DOC_ID (--article to watch one article) or --question")
    add.add_argument("doc_id", nargs="?", metavar="DOC_ID")
    add.add_argument("--article", help="第三条, 第十条之一, 第3条 or 3")
    add.add_argument("--question", help="a question whose cited articles to watch (with the filters below)")
    add.add_argument("--owner", help="who the alerts are for (an email, a team): an attribute of each alert message")
    add.add_argument("--json", action="store_true")
    filters(add)
    lst = ws.add_parser("list", help="list the watches")
    lst.add_argument("--json", action="store_true")
    rm = ws.add_parser("remove", help="remove watches")
    rm.add_argument("watch_ids", nargs="+", metavar="WATCH_ID")
    ws.add_parser("check", help="compare every watch with the index now and ask every saved question again")

    alerts = sub.add_parser("alerts", help="the alerts recorded for the watches, newest first")
    alerts.add_argument("--since", help="YYYY-MM-DD or an ISO 8601 time")
    alerts.add_argument("--watch", dest="watch_id", help="the alerts of one watch")
    alerts.add_argument("--limit", type=int, default=100)
    form = alerts.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true")
    form.add_argument("--atom", action="store_true", help="print an Atom feed")

    ver = sub.add_parser("versions", help="a document's versions and what changed between them (修订对照)")
    ver.add_argument("doc_id", metavar="DOC_ID")
    ver.add_argument("--docx", metavar="FILE", help="write the versions and the diff as a Word document")
    ver.add_argument("--md", metavar="FILE", help="write them as Markdown")
    ver.add_argument("--json", action="store_true")


def _body(args: argparse.Namespace, filters: dict[str, Any]) -> dict[str, Any]:
    if args.question and args.doc_id:
        raise ValueError("give DOC_ID or --question, not both")
    body: dict[str, Any] = {"question": args.question} if args.question else {"doc_id": args.doc_id}
    if args.question and filters:
        body["filters"] = filters
    if args.article:
        body["article"] = args.article
    if args.owner:
        body["owner"] = args.owner
    return body


def cmd_watch(services: Services, args: argparse.Namespace, filters: dict[str, Any]) -> int:
    if args.watch_command == "add":
        if not (args.doc_id or args.question):
            print("regrag watch add: give DOC_ID or --question", file=sys.stderr)
            return 2
        status, body = call(endpoints.add_watch, services, _body(args, filters))
        if status != 200:
            print(f"regrag watch add: {body['error']['message']}", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(body, ensure_ascii=False, indent=1))
        else:
            state = "watching" if body["created"] else "already watched"
            print(f"{body['watch_id']}  {state}: {_what(body['watch'])}")
            version = body.get("version") or {}
            if version.get("note"):
                print(f"  {version['note']}")
        return 0
    if args.watch_command == "list":
        rows = endpoints.watches(services)["watches"]
        if args.json:
            print(json.dumps(rows, ensure_ascii=False, indent=1))
        for row in [] if args.json else rows:
            print(
                f"{row['watch_id']}  {row['created'][:10]}  {_what(row)}"
                + (f"  [{row['owner']}]" if row["owner"] else "")
            )
        return 0
    if args.watch_command == "remove":
        worst = 0
        for watch_id in args.watch_ids:
            status, body = call(endpoints.remove_watch, services, watch_id)
            if status != 200:
                print(f"regrag watch remove: {body['error']['message']}", file=sys.stderr)
                worst = 1
        return worst
    summary = endpoints.admin_watches_check(services)
    print(f"{summary['watches']} watches checked, {summary['alerts']} new alert(s) {summary['by_kind'] or ''}")
    return 0


def _what(watch: dict[str, Any]) -> str:
    if watch["kind"] == "question":
        return f"问题“{watch['question']}”" + (f" {watch['filters']}" if watch["filters"] else "")
    following = watch.get("following") or {}
    label = f"《{watch['title']}》{watch.get('article') or ''}（{watch['doc_id']}）"
    if following.get("doc_id") and following["doc_id"] != watch["doc_id"]:
        label += f" → 现为 {following['doc_id']} {following.get('article') or ''}"
    return label


def cmd_alerts(services: Services, args: argparse.Namespace) -> int:
    raw = {"limit": str(args.limit)} | {k: v for k in ("since", "watch_id") if (v := getattr(args, k))}
    query = parse.parse_alerts_query(raw)
    found = endpoints.alerts(services, query, page_url(services))["alerts"]
    if args.atom:
        sys.stdout.write(atom_feed(found, feed_url=page_url(services) + "alerts?format=atom").decode("utf-8"))
    elif args.json:
        print(json.dumps({"alerts": found}, ensure_ascii=False, indent=1))
    else:
        for alert in found:
            print(f"{alert['created']}  {alert['kind']:<17} {alert['message']}")
            if alert.get("link"):
                print(f"    {alert['link']}")
        print(f"{len(found)} alert(s)", file=sys.stderr)
    return 0


def cmd_versions(services: Services, args: argparse.Namespace) -> int:
    if args.docx or args.md:
        for fmt, out in (("docx", args.docx), ("md", args.md)):
            if out:
                write_export(endpoints.versions_export(services, args.doc_id, fmt, page_url(services)), out)
        return 0
    status, view = call(endpoints.versions, services, args.doc_id)
    if status != 200:
        print(f"regrag versions: {view['error']['message']}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(view, ensure_ascii=False, indent=1))
        return 0
    for v in view["versions"]:
        print(f"{v['doc_id']}  《{v['title']}》 公布 {v['promulgated'] or '—'}  施行 {v['effective_from']}"
              + (f"  失效 {v['effective_to']}" if v["effective_to"] else "  现行"))  # fmt: skip
    for c in view["changes"]:
        counts = "，".join(f"{k} {n}" for k, n in c["summary"].items() if n)
        print(f"{c['from']} → {c['to']}: {counts}")
    return 0


def write_export(export: Export, out: str) -> None:
    Path(out).write_bytes(export.data)
    print(f"written: {out} ({export.title}, {len(export.data):,} bytes)", file=sys.stderr)
