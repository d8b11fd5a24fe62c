"""`regrag`: ingest, ask, serve, check, watch, alerts, versions, eval, corpora, prompts, feedback — every command
on the same services as the functions.

Local state lives in REGRAG_DATA_DIR (default `.regrag/` in the working directory).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from regrag.config import ConfigError, Settings
from regrag.domain.errors import RegragError, StorageError
from regrag.entrypoints.cli import commands, watch
from regrag.entrypoints.cli.ingest import cmd_ingest
from regrag.entrypoints.cli.remove import cmd_delete
from regrag.entrypoints.cli.repair import cmd_repair
from regrag.inputs.parse import EVAL_K
from regrag.services import Services


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="regrag", description="Question answering over Chinese energy regulations.")
    sub = p.add_subparsers(dest="command", required=True)

    ing = sub.add_parser("ingest", help="upload files or folders to the bucket and run ingest → embed → upsert")
    ing.add_argument("paths", nargs="+")
    ing.add_argument("--corpus", help="assign every document to this corpus")
    ing.add_argument("--force", action="store_true", help="re-ingest unchanged files")
    ing.add_argument(
        "--prune",
        action="store_true",
        help="also remove indexed documents (of --corpus, when given) whose files these paths no longer hold",
    )
    ing.add_argument("--quiet", action="store_true")

    rm = sub.add_parser("delete", help="remove documents from the bucket and the index")
    rm.add_argument("doc_ids", nargs="+", metavar="DOC_ID")

    ask = sub.add_parser("ask", help="ask a question and print the cited answer")
    ask.add_argument("question")
    ask.add_argument("--corpora", help="comma-separated corpora to search (default: all)")
    filter_options(ask)
    ask.add_argument("--top-k", type=int)
    ask.add_argument("--show", type=int, default=5, help="candidates to list")
    ask.add_argument("--json", action="store_true")
    ask.add_argument("--docx", metavar="FILE", help="also write the answer as a Word document for a memo")
    ask.add_argument("--md", metavar="FILE", help="also write the answer as Markdown")

    chk = sub.add_parser(
        "check",
        help="check a document's citations against the law in force on its date (exit 1 when a problem is found)",
    )
    chk.add_argument("files", nargs="+", metavar="FILE", help=".docx, .pdf, .md or .txt (- reads standard input)")
    chk.add_argument("--as-of", dest="as_of", help="check as of this day (default: the document's date, else today)")
    chk.add_argument("--json", action="store_true", help="print the whole JSON answer")
    chk.add_argument("--docx", metavar="OUT", help="write the report as a Word document (several files: a folder)")
    chk.add_argument("--md", metavar="OUT", help="write the report as Markdown (several files: a folder)")
    chk.add_argument(
        "--allow-unknown",
        action="store_true",
        help="citations of laws the corpus does not hold (unknown_law) do not make the exit status 1",
    )

    srv = sub.add_parser("serve", help="serve the API and the search page")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8080)

    cor = sub.add_parser("corpora", help="list corpora with document and chunk counts")
    cor.add_argument("--json", action="store_true")

    sub.add_parser("prompts", help="list the versioned prompts and which ones are active")
    sub.add_parser(
        "doctor",
        help="check that the embedding model, the index and Gemini answer, and that the index is whole (exit 1 if not)",
    )
    rep = sub.add_parser(
        "repair",
        help="put right what doctor finds: finish interrupted deletes, re-read incomplete or damaged documents from "
        "the bucket, rebuild a damaged index from it",
    )
    rep.add_argument("doc_ids", nargs="*", metavar="DOC_ID", help="only ingest these documents again")
    aud = sub.add_parser(
        "audit",
        help="list documents whose metadata ingest corrected or doubts (dates the text contradicts, an amendment's "
        "unstated entry into force, an unknown province)",
    )
    aud.add_argument("--json", action="store_true")
    fb = sub.add_parser("feedback", help="user feedback")
    fb_sub = fb.add_subparsers(dest="feedback_command", required=True)
    fb_export = fb_sub.add_parser("export", help="write feedback as eval questions for a maintainer to grade")
    fb_export.add_argument("--out", help="JSON lines file (default: stdout)")

    watch.add_parsers(sub, filter_options)

    ev = sub.add_parser(
        "eval",
        help="evaluate retrieval and answers on a question file, or the citation check on a folder of memos",
    )
    ev.add_argument("questions", help="a .jsonl question file, or a folder of memo-NN.md + memo-NN.json")
    ev.add_argument("--k", type=int, default=EVAL_K)
    ev.add_argument(
        "--mode",
        default="full",
        choices=("full", "hybrid", "dense", "lexical"),
        help="full: retrieve → rerank → compose; or one retrieval mode alone",
    )
    ev.add_argument("--out", help="write the JSON report here (and a Markdown table beside it)")
    return p


def filter_options(parser: argparse.ArgumentParser) -> None:
    """--province … --include-superseded: the filters of a question (ask, watch add --question)."""
    for key in ("province", "asset", "doc_class", "regulation_level"):
        parser.add_argument(f"--{key.replace('_', '-')}", dest=key, help="comma-separated values")
    parser.add_argument("--as-of", dest="as_of")
    parser.add_argument("--date-from", dest="date_from")
    parser.add_argument("--date-to", dest="date_to")
    parser.add_argument("--include-superseded", action="store_true")


COMMANDS: dict[str, Callable[[Services, argparse.Namespace], int]] = {
    "ingest": cmd_ingest,
    "delete": cmd_delete,
    "repair": cmd_repair,
    "ask": commands.cmd_ask,
    "serve": commands.cmd_serve,
    "check": commands.cmd_check,
    "eval": commands.cmd_eval,
    "doctor": commands.cmd_doctor,
    "corpora": commands.cmd_corpora,
    "prompts": commands.cmd_prompts,
    "audit": commands.cmd_audit,
    "feedback": commands.cmd_feedback,
    "watch": lambda services, args: watch.cmd_watch(services, args, commands.filters_from(args)),
    "alerts": watch.cmd_alerts,
    "versions": watch.cmd_versions,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env(os.environ)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    from regrag import logs

    # Logs go to stderr so stdout stays the command's output; per-document INFO lines only when asked for.
    logs.configure(
        settings.log_level if "LOG_LEVEL" in os.environ else "WARNING",
        stream=sys.stderr,
        log_questions=settings.log_questions,
    )
    try:
        return _run(args, settings)
    except (RegragError, FileNotFoundError, ValueError) as exc:
        print(f"regrag {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _run(args: argparse.Namespace, settings: Settings) -> int:
    """Build the services and run the command. When a local file cannot even be opened (damaged, read-only,
    full), `doctor` reports every file's state instead of dying, and `repair` sets the damaged ones aside and
    rebuilds; any other command says which file and what to do."""
    from regrag.wiring import build_services, set_aside_damaged, storage_problems

    set_aside: list[str] = []
    if args.command == "repair":
        set_aside = set_aside_damaged(settings)
        for line in set_aside:
            print(f"set aside: {line}", file=sys.stderr)
    try:
        services = build_services(settings)
    except StorageError as exc:
        if args.command != "doctor":
            raise
        return commands.doctor_files(storage_problems(settings) or [], exc)
    try:
        if args.command == "repair":
            return cmd_repair(services, args, set_aside)
        return int(COMMANDS[args.command](services, args))
    finally:
        services.close()
