"""The commands besides ingest: ask, serve, eval, corpora, prompts, feedback export."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from regrag.api import endpoints
from regrag.api.routes import call
from regrag.domain.errors import StorageError
from regrag.domain.integrity import Finding
from regrag.entrypoints.cli.watch import page_url, write_export
from regrag.services import Services


def filters_from(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("province", "asset", "doc_class", "regulation_level"):
        value = getattr(args, key, None)
        if value:
            out[key] = value.split(",")
    for key in ("as_of", "date_from", "date_to"):
        value = getattr(args, key, None)
        if value:
            out[key] = value
    if getattr(args, "include_superseded", False):
        out["include_superseded"] = True
    return out


def cmd_ask(services: Services, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"question": args.question, "filters": filters_from(args)}
    if args.corpora:
        body["corpora"] = args.corpora.split(",")
    if args.top_k:
        body["top_k"] = args.top_k
    status, response = call(endpoints.query, services, body)
    if args.json or status != 200:
        print(json.dumps(response, ensure_ascii=False, indent=1))
        if status != 200:
            return 1
    for fmt, out in (("docx", args.docx), ("md", args.md)):
        if out:
            export = endpoints.answer_export(services, response["query_id"], fmt, page_url(services))
            write_export(export, out)
    if args.json:
        return 0
    print(response["answer_zh"])
    print()
    print(f"rerank: {response['rerank_status']}   timings: {response['timings_ms'].get('total')} ms")
    for i, c in enumerate(response["candidates"][: args.show], 1):
        print(f"{i:2d}. 《{c['title']}》{c['article']}  score={c['score']:.4f}  [{c['doc_id']}]")
    return 0


def cmd_check(services: Services, args: argparse.Namespace) -> int:
    """Check each file; exit 0 when every citation of every file is ok, 1 when one has a problem (or cannot be
    verified, unless --allow-unknown), 2 when a file cannot be read or checked (the others are still checked).
    With several files, --json prints one JSON object per line, each with its `file`."""
    from regrag.check.report import exit_code, format_report
    from regrag.inputs import parse as requests

    worst = 0
    for i, file in enumerate(args.files):
        if file == "-":
            data, name = sys.stdin.buffer.read(), "stdin.txt"
        else:
            try:
                data, name = Path(file).read_bytes(), Path(file).name
            except OSError as exc:
                print(f"regrag check: {file}: {exc.strerror or exc}", file=sys.stderr)
                worst = 2
                continue
        status, report = call(endpoints.check_upload, services, requests.parse_check_upload(name, data, args.as_of))
        if status != 200:
            print(f"regrag check: {report['error']['message']}", file=sys.stderr)
            worst = 2
            continue
        for fmt, out in (("docx", args.docx), ("md", args.md)):
            if out:
                _write_check(report, name, fmt, out, many=len(args.files) > 1, page=page_url(services))
        if args.json and len(args.files) > 1:
            print(json.dumps({"file": file, **report}, ensure_ascii=False))
        elif args.json:
            print(json.dumps(report, ensure_ascii=False, indent=1))
        else:
            print(("\n" if i else "") + format_report(report, name))
        worst = max(worst, exit_code(report, allow_unknown=args.allow_unknown))
    return worst


def _write_check(report: dict[str, Any], name: str, fmt: str, out: str, *, many: bool, page: str) -> None:
    """The report as a file: OUT itself for one document, OUT/<name>.引用核验.<fmt> for each of several."""
    from regrag.ops.exports.files import check_export

    target = Path(out)
    if many:
        target.mkdir(parents=True, exist_ok=True)
        target = target / f"{Path(name).stem}.引用核验.{fmt}"
    write_export(check_export(report, name, fmt, page), str(target))


def cmd_serve(services: Services, args: argparse.Namespace) -> int:
    from regrag.api.server import Limits, serve, warm_up

    started = time.perf_counter()
    warm_up(services)
    stats = services.store.stats()
    print(f"ready in {time.perf_counter() - started:.1f} s (index loaded, model warm)", file=sys.stderr)
    print(
        f"regrag serving http://{args.host}:{args.port}/ ({stats['documents']} documents, {stats['chunks']} chunks)",
        file=sys.stderr,
        flush=True,
    )
    settings = services.settings
    limits = Limits(settings.serve_max_active, settings.serve_max_waiting, settings.serve_wait_s)
    serve(services, args.host, args.port, limits)
    return 0


def cmd_eval(services: Services, args: argparse.Namespace) -> int:
    from regrag.ops.evaluation import evaluate, format_table, load_questions

    if Path(args.questions).is_dir():
        return _eval_memos(services, args)
    questions = load_questions(args.questions)
    report = evaluate(services, questions, k=args.k, mode=args.mode)
    table = format_table(report)
    print(table)
    if args.out:
        out = Path(args.out)
        out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        out.with_suffix(".md").write_text(table + "\n", encoding="utf-8")
        print(f"report: {out} and {out.with_suffix('.md')}", file=sys.stderr)
    return 0


def _eval_memos(services: Services, args: argparse.Namespace) -> int:
    """`regrag eval FOLDER`: the citation check on memos with their answer keys (like citecheck-dev/)."""
    from regrag.ops.citecheck import evaluate_memos, format_memo_table

    report = evaluate_memos(services.store, args.questions, services.lexical)
    table = format_memo_table(report)
    print(table)
    if args.out:
        out = Path(args.out)
        out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        out.with_suffix(".md").write_text(table + "\n", encoding="utf-8")
    return 0


def cmd_corpora(services: Services, args: argparse.Namespace) -> int:
    rows = endpoints.corpora(services)["corpora"]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        _integrity_note(services)
        return 0
    print(f"{'corpus':<20}{'documents':>10}{'chunks':>10}")
    for row in rows:
        print(f"{row['corpus']:<20}{row['documents']:>10}{row['chunks']:>10}")
    _integrity_note(services)
    return 0


def _integrity_note(services: Services) -> None:
    """One line on stderr when the quick integrity check finds the index not whole (counts above may then
    include documents that answers cannot find)."""
    from regrag.ops.doctor import health_findings

    problems = [f for f in health_findings(services) if f.severity == "error"]
    if problems:
        subjects = ", ".join(sorted({f.subject for f in problems})[:5])
        print(f"the index is not whole ({len(problems)} finding(s): {subjects}): run `regrag doctor`", file=sys.stderr)


def cmd_prompts(services: Services, args: argparse.Namespace) -> int:
    from regrag.ops.admin import prompt_versions

    active = set(endpoints.active_prompts(services).values())
    for p in prompt_versions():
        mark = "*" if p["key"] in active else " "
        print(f"{mark} {p['key']:<24} sha256:{p['sha256'][:16]}")
    print("(* = used by this configuration)")
    return 0


def cmd_feedback(services: Services, args: argparse.Namespace) -> int:
    from regrag.ops.feedback import export_questions

    rows = export_questions(services.feedback) if services.feedback is not None else []
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(
            f"{len(rows)} questions written to {args.out} (grade their 'relevant' lists, then run regrag eval)",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0


def cmd_audit(services: Services, args: argparse.Namespace) -> int:
    """Every document whose metadata ingest corrected or doubts: dates its metadata and its text disagree on, an
    effective date that is an amendment's adoption, a province the text does not tell, a text that may be cut
    short."""
    from regrag.text.inference import UNKNOWN_PROVINCE
    from regrag.views.documents import metadata_audit

    rows = metadata_audit(services.store)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    for row in rows:
        print(f"{row['doc_id']}  《{row['title']}》  公布 {row['promulgated']}  施行 {row['effective_date']}")
        for warning in row["warnings"]:
            print(f"    {warning}")
        if row["effective_date_uncertain"] and row["amendment_line"]:
            print(
                f"    effective date uncertain: {row['effective_date']} is the adoption of the latest amendment "
                f"(“{row['amendment_line']}”), the text does not state when it took effect: give "
                "amendment_effective_date in a sidecar"
            )
        elif row["effective_date_uncertain"]:
            # the text records no amendment at all (its header and 施行 clause are an earlier text's): the date
            # is the metadata's alone, as the document view's note says
            print(
                f"    effective date uncertain: {row['effective_date']} comes from the metadata alone (the text "
                "records no amendment that late), and may be an amendment's adoption: give "
                "amendment_effective_date in a sidecar"
            )
        for warning in row["metadata_warnings"]:
            print(f"    {warning}")
    counts = (
        f"{sum(bool(r['warnings']) for r in rows)} with dates corrected or contradicted, "
        f"{sum(r['effective_date_uncertain'] for r in rows)} dated by an amendment's adoption, "
        f"{sum(r['province'] == UNKNOWN_PROVINCE for r in rows)} of unknown province, "
        f"{sum(r['may_be_incomplete'] for r in rows)} possibly incomplete"
    )
    print(f"{len(rows)} document(s): {counts}", file=sys.stderr)
    return 0


def cmd_doctor(services: Services, args: argparse.Namespace) -> int:
    """Check that the configured embedding model, index and Gemini model answer, and that the index is whole;
    exit 1 if any is not (each FAIL line names the document or file and the command that repairs it)."""
    from regrag.ops.doctor import run_checks

    checks = run_checks(services)
    for check in checks:
        print(check.line())
    return 0 if all(c.ok for c in checks) else 1


def doctor_files(findings: list[Finding], error: StorageError) -> int:
    """`regrag doctor` when the services cannot be built: the state of each local file, exit 1."""
    from regrag.ops.doctor import finding_line

    print(f"FAIL storage: {error}")
    for finding in findings:
        if finding.subject != error.path:
            print(f"FAIL storage: {finding_line(finding)}")
    return 1
