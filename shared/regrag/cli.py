"""`regrag`: ingest, ask, serve, eval — every command on the same services as the functions.

Local state lives in REGRAG_DATA_DIR (default `.regrag/` in the working directory).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regrag.config import ConfigError, Settings
from regrag.domain.errors import RegragError
from regrag.pipeline.ingest import SIDECAR_SUFFIX

SUPPORTED = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx")
_MANIFEST_DROP = ("file", "chars", "articles")


@dataclass(frozen=True)
class Upload:
    """A local file to put in the bucket, with the sidecar metadata to put beside it (if any)."""

    path: Path
    name: str
    sidecar: dict[str, Any] | None


def discover(paths: Sequence[str], corpus: str | None) -> Iterator[Upload]:
    """Files to ingest: folders are walked; a folder with manifest.jsonl takes each document's metadata from it."""
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"{raw}: no such file or folder")
        if path.is_file():
            yield _upload(path, path.name, None, corpus)
            continue
        manifest = path / "manifest.jsonl"
        if manifest.exists():
            for n, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    rel = record["file"]
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise ValueError(f"{manifest}:{n}: not a manifest record with a 'file' ({exc})") from exc
                sidecar = {k: v for k, v in record.items() if k not in _MANIFEST_DROP}
                yield _upload(path / rel, rel, sidecar, corpus)
            continue
        for file in sorted(path.rglob("*")):
            if file.is_file() and file.suffix.lower() in SUPPORTED and not file.name.startswith("."):
                yield _upload(file, file.relative_to(path).as_posix(), None, corpus)


def _upload(path: Path, name: str, sidecar: dict[str, Any] | None, corpus: str | None) -> Upload:
    if sidecar is None:
        beside = path.with_name(path.name + SIDECAR_SUFFIX)
        if beside.exists():
            sidecar = json.loads(beside.read_text(encoding="utf-8"))
    if corpus:
        sidecar = {**(sidecar or {}), "corpus": corpus}
    return Upload(path, name, sidecar)


class Progress:
    """A one-line progress bar on stderr (no dependency; silent when stderr is not a terminal and quiet)."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label, self.done = total, label, 0
        self.started = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def step(self, note: str = "") -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        width = 30
        filled = int(width * self.done / max(self.total, 1))
        line = (
            f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {rate:.1f}/s {note[:40]}"
        )
        if self.tty:
            sys.stderr.write("\r" + line.ljust(110))
            if self.done == self.total:
                sys.stderr.write("\n")
        elif self.done == self.total or self.done % max(1, self.total // 20) == 0:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _storage_event(name: str, generation: int) -> dict[str, Any]:
    """The CloudEvent GCS would send for a finalized object (the local bucket has no notifications)."""
    return {
        "specversion": "1.0",
        "type": "google.cloud.storage.object.v1.finalized",
        "source": "//storage.googleapis.com/projects/_/buckets/local",
        "id": f"local-{name}-{generation}",
        "subject": f"objects/{name}",
        "data": {"bucket": "local", "name": name, "generation": str(generation)},
    }


def cmd_ingest(app: Any, args: argparse.Namespace) -> int:
    uploads = list(discover(args.paths, args.corpus))
    if not uploads:
        print("nothing to ingest (no supported files found)", file=sys.stderr)
        return 1
    blobs, store = app.s.blobs, app.s.store
    progress = Progress(len(uploads), "ingest")
    counts = {"chunked": 0, "unchanged": 0, "failed": 0, "skipped": 0}
    chunks = 0
    failures_before = len(app.s.failures.list())
    started = time.perf_counter()
    for up in uploads:
        data = up.path.read_bytes()
        existing = blobs.read_optional(up.name)
        sidecar_bytes = json.dumps(up.sidecar, ensure_ascii=False, indent=1).encode("utf-8") if up.sidecar else None
        old_sidecar = blobs.read_optional(up.name + SIDECAR_SUFFIX)
        same = (
            existing is not None
            and existing.data == data
            and (old_sidecar.data if old_sidecar else None) == sidecar_bytes
        )
        if same and not args.force:
            doc_id = (up.sidecar or {}).get("doc_id")
            found = store.get_document(doc_id) if doc_id else None
            if found and found[0].content_hash and found[0].generation == existing.generation:
                counts["unchanged"] += 1
                progress.step(up.name)
                continue
        if sidecar_bytes is not None and not same:
            blobs.write(up.name + SIDECAR_SUFFIX, sidecar_bytes)
        info = blobs.write(up.name, data) if not same else existing
        result = app.ingest_event(_storage_event(up.name, info.generation))
        if result is None:
            counts["failed"] += 1
        else:
            counts[result.status if result.status in counts else "skipped"] += 1
            chunks += result.chunks
        progress.step(up.name)
    failures = app.s.failures.list()[failures_before:]
    dead = len(getattr(app.s.bus, "dead_letters", []) or [])
    summary = {
        **counts,
        "chunks": chunks,
        "documents": len(uploads),
        "seconds": round(time.perf_counter() - started, 1),
        "dead_letters": dead,
        "index": app.s.store.stats(),
    }
    print(json.dumps(summary, ensure_ascii=False, indent=None if args.quiet else 1))
    for f in failures:
        print(f"failed: {f.get('key')}: {f.get('error')}", file=sys.stderr)
    return 0 if counts["failed"] == 0 and dead == 0 else 2


def _filters_from(args: argparse.Namespace) -> dict[str, Any]:
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


def cmd_ask(app: Any, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"question": args.question, "filters": _filters_from(args)}
    if args.corpora:
        body["corpora"] = args.corpora.split(",")
    if args.top_k:
        body["top_k"] = args.top_k
    from regrag.api import call

    status, response = call(app.query, body)
    if args.json or status != 200:
        print(json.dumps(response, ensure_ascii=False, indent=1))
        return 0 if status == 200 else 1
    print(response["answer_zh"])
    print()
    print(f"rerank: {response['rerank_status']}   timings: {response['timings_ms'].get('total')} ms")
    for i, c in enumerate(response["candidates"][: args.show], 1):
        print(f"{i:2d}. 《{c['title']}》{c['article']}  score={c['score']:.4f}  [{c['doc_id']}]")
    return 0


def cmd_serve(app: Any, args: argparse.Namespace) -> int:
    from regrag.server import serve

    stats = app.s.store.stats()
    print(
        f"regrag serving http://{args.host}:{args.port}/ ({stats['documents']} documents, {stats['chunks']} chunks)",
        file=sys.stderr,
        flush=True,
    )
    serve(app, args.host, args.port)
    return 0


def cmd_eval(app: Any, args: argparse.Namespace) -> int:
    from regrag.evaluation import evaluate, format_table, load_questions

    questions = load_questions(args.questions)
    report = evaluate(app, questions, k=args.k, mode=args.mode)
    table = format_table(report)
    print(table)
    if args.out:
        out = Path(args.out)
        out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        out.with_suffix(".md").write_text(table + "\n", encoding="utf-8")
        print(f"report: {out} and {out.with_suffix('.md')}", file=sys.stderr)
    return 0


def cmd_corpora(app: Any, args: argparse.Namespace) -> int:
    rows = app.corpora()["corpora"]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    print(f"{'corpus':<20}{'documents':>10}{'chunks':>10}")
    for row in rows:
        print(f"{row['corpus']:<20}{row['documents']:>10}{row['chunks']:>10}")
    return 0


def cmd_prompts(app: Any, args: argparse.Namespace) -> int:
    from regrag.pipeline.admin import prompt_versions

    active = set(app.active_prompts().values())
    for p in prompt_versions():
        mark = "*" if p["key"] in active else " "
        print(f"{mark} {p['key']:<24} sha256:{p['sha256'][:16]}")
    print("(* = used by this configuration)")
    return 0


def cmd_feedback(app: Any, args: argparse.Namespace) -> int:
    rows = app.export_feedback()
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="regrag", description="Question answering over Chinese energy regulations.")
    sub = p.add_subparsers(dest="command", required=True)

    ing = sub.add_parser("ingest", help="upload files or folders to the bucket and run ingest → embed → upsert")
    ing.add_argument("paths", nargs="+")
    ing.add_argument("--corpus", help="assign every document to this corpus")
    ing.add_argument("--force", action="store_true", help="re-ingest unchanged files")
    ing.add_argument("--quiet", action="store_true")

    ask = sub.add_parser("ask", help="ask a question and print the cited answer")
    ask.add_argument("question")
    ask.add_argument("--corpora", help="comma-separated corpora to search (default: all)")
    for key in ("province", "asset", "doc_class", "regulation_level"):
        ask.add_argument(f"--{key.replace('_', '-')}", dest=key, help="comma-separated values")
    ask.add_argument("--as-of", dest="as_of")
    ask.add_argument("--date-from", dest="date_from")
    ask.add_argument("--date-to", dest="date_to")
    ask.add_argument("--include-superseded", action="store_true")
    ask.add_argument("--top-k", type=int)
    ask.add_argument("--show", type=int, default=5, help="candidates to list")
    ask.add_argument("--json", action="store_true")

    srv = sub.add_parser("serve", help="serve the API and the search page")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8080)

    cor = sub.add_parser("corpora", help="list corpora with document and chunk counts")
    cor.add_argument("--json", action="store_true")

    sub.add_parser("prompts", help="list the versioned prompts and which ones are active")
    fb = sub.add_parser("feedback", help="user feedback")
    fb_sub = fb.add_subparsers(dest="feedback_command", required=True)
    fb_export = fb_sub.add_parser("export", help="write feedback as eval questions for a maintainer to grade")
    fb_export.add_argument("--out", help="JSON lines file (default: stdout)")

    ev = sub.add_parser("eval", help="evaluate retrieval and answers on a question file")
    ev.add_argument("questions")
    ev.add_argument("--k", type=int, default=10)
    ev.add_argument(
        "--mode",
        default="full",
        choices=("full", "hybrid", "dense", "lexical"),
        help="full: retrieve → rerank → compose; or one retrieval mode alone",
    )
    ev.add_argument("--out", help="write the JSON report here (and a Markdown table beside it)")
    return p


COMMANDS = {
    "ingest": cmd_ingest,
    "ask": cmd_ask,
    "serve": cmd_serve,
    "eval": cmd_eval,
    "corpora": cmd_corpora,
    "prompts": cmd_prompts,
    "feedback": cmd_feedback,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env(os.environ)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    from regrag import logs
    from regrag.wiring import build_app

    # Logs go to stderr so stdout stays the command's output; per-document INFO lines only when asked for.
    logs.configure(settings.log_level if "LOG_LEVEL" in os.environ else "WARNING", stream=sys.stderr)
    try:
        app = build_app(settings)
        return int(COMMANDS[args.command](app, args))
    except (RegragError, FileNotFoundError, ValueError) as exc:
        print(f"regrag {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
