"""How cost grows with the corpus: 1×, 4×, 16×, 40× the shared corpus, measured at each size.

    python bench/scale.py --work /tmp/scale --vector-cache /tmp/cache.sqlite [--sizes 1 4 16 40]

Copy 0 is the corpus itself (corpus `default`, so the dev questions' gold articles exist); copy k ≥ 1 is every
document again under the id `<doc_id>-x<k>`, in corpus `copy<(k-1) % 7 + 1>`: at 4× and above the index holds
8 corpora. Texts and titles are identical, so the vector cache (keyed by model and content hash) serves every
embedding after the first run: what is measured is the index, not the model. Each size is reached by ingesting
the copies it adds into the previous size's index (one `regrag ingest` of them all, a real subprocess), then:

- ingest: wall time and chunks/s of the added copies (cached vectors), with the part spent preparing the search
  snapshot at its end (from 100,000 chunks: built and saved for the server to map), and of a re-ingest of every
  file unchanged (the base corpus, then the copies: two invocations);
- index size on disk (the data folder);
- serve: start-up time to the first 200 from /healthz (the warm-up opens the search snapshot: built, or mapped
  when ingest saved it), then a restart; RSS after the questions, in all and split into the process's own
  memory (RssAnon) and mapped files (RssFile: the saved snapshot's pages in the page cache);
- query p50/p95 over HTTP (dev questions, query-embedding cache warm: one round unmeasured first), over the
  default corpus, with a province filter, and fanned out over all corpora (`corpora` = every corpus);
- in-process p50/p95 of the same three, in this process (the index opened read-only by the same code).

Prints one table row per size. It takes long at 40× (about a million chunks); run on a quiet machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import DEFAULT_CORPUS, DEFAULT_EVAL, ROOT, pct
from load import free_port, start_server
from regrag.api import endpoints
from regrag.api.routes import call
from regrag.config import Settings
from regrag.ops.evaluation import load_questions
from regrag.wiring import build_services

CORPORA = 7  # copies spread over this many extra corpora


def copy_folder(work: Path, corpus: Path, k: int) -> Path:
    """Copy k of the corpus as a folder with its own manifest (files hard-linked: no extra disk)."""
    folder = work / "src" / f"copy{k:02d}"
    if folder.exists():
        return folder
    (folder / "docs").mkdir(parents=True)
    lines = []
    for line in (corpus / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        source = corpus / record["file"]
        name = f"docs/{record['doc_id']}-x{k}{source.suffix}"
        try:
            os.link(source, folder / name)
        except OSError:
            shutil.copyfile(source, folder / name)
        record.update(file=name, doc_id=f"{record['doc_id']}-x{k}", corpus=f"copy{(k - 1) % CORPORA + 1}")
        if record.get("supersedes"):
            record["supersedes"] = f"{record['supersedes']}-x{k}"
        lines.append(json.dumps(record, ensure_ascii=False))
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def ingest(data: Path, cache: Path, folders: list[Path], corpus: str | None) -> tuple[float, dict]:
    env = {**os.environ, "REGRAG_DATA_DIR": str(data), "REGRAG_VECTOR_CACHE": str(cache), "LOG_LEVEL": "ERROR"}
    env["PYTHONPATH"] = str(ROOT / "shared")
    cmd = [
        sys.executable,
        "-c",
        "import sys; from regrag.entrypoints.cli import main; sys.exit(main())",
        "ingest",
        "--quiet",
    ]
    cmd += [*(["--corpus", corpus] if corpus else []), *map(str, folders)]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    # exit 2 = some files failed (the corpus has one empty document): the summary still says what was ingested
    if done.returncode not in (0, 2) or not done.stdout.strip():
        raise RuntimeError(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    if summary["failed"] > len(folders):  # more than the one known bad document per copy
        raise RuntimeError(f"ingest failed for {summary['failed']} files: {done.stderr[-2000:]}")
    return seconds, summary


def disk_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of a process in MB: VmRSS in all; RssAnon its own, RssFile mapped files (the saved
    search snapshot: page cache, which the kernel can evict and processes mapping the same files share)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def post(port: int, body: dict) -> float:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        payload = json.dumps(body, ensure_ascii=False).encode()
        conn.request("POST", "/query", payload, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status} for {body}")
    finally:
        conn.close()
    return (time.perf_counter() - started) * 1000


def bodies(questions: list[dict], corpora: list[str]) -> dict[str, list[dict]]:
    base = [{"question": q["question"], "filters": q.get("filters") or {}} for q in questions]
    return {
        "one corpus": [{**b, "corpora": ["default"]} for b in base],
        "filtered": [{**b, "corpora": ["default"], "filters": {**b["filters"], "province": ["gd"]}} for b in base],
        "fan-out": [{**b, "corpora": corpora} for b in base],
    }


def measure_http(data: Path, cache: Path, cases: dict[str, list[dict]]) -> dict:
    port = free_port()
    started = time.perf_counter()
    proc = start_server(data, cache, port)
    startup = time.perf_counter() - started
    try:
        out: dict = {"startup_s": startup}
        for name, items in cases.items():
            for body in items:  # warm: the query-embedding cache and the per-snapshot caches
                post(port, body)
            times = [post(port, body) for body in items]
            out[name] = (pct(times, 50), pct(times, 95))
        out["rss_mb"] = rss_mb(proc.pid)
        out["anon_mb"] = rss_mb(proc.pid, "RssAnon")
        out["file_mb"] = rss_mb(proc.pid, "RssFile")
        return out
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def measure_restart(data: Path, cache: Path) -> float:
    """A second start: the search snapshot saved by the first (when the index is large enough) is mapped."""
    port = free_port()
    started = time.perf_counter()
    proc = start_server(data, cache, port)
    try:
        return time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def measure_in_process(data: Path, cache: Path, cases: dict[str, list[dict]]) -> dict:
    env = {**os.environ, "LOG_LEVEL": "ERROR"}
    settings = Settings.from_env(env, data_dir=data, vector_cache=cache, rerank=False)
    started = time.perf_counter()
    services = build_services(settings)
    call(endpoints.query, services, cases["one corpus"][0])  # opens the snapshot
    out: dict = {"open_s": time.perf_counter() - started}
    for name, items in cases.items():
        for body in items:
            call(endpoints.query, services, body)
        times = []
        for body in items:
            t = time.perf_counter()
            status, resp = call(endpoints.query, services, body)
            times.append((time.perf_counter() - t) * 1000)
            if status != 200:
                raise RuntimeError(f"{status} {resp}")
        out[name] = (pct(times, 50), pct(times, 95))
    services.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--vector-cache", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--questions", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1, 4, 16, 40])
    args = ap.parse_args()
    data = args.work / "data"
    questions = [q for q in load_questions(args.questions) if q.get("answerable", True)]
    print(
        "| copies | chunks | added: s (of which preparing search), chunks/s | unchanged re-ingest: s, chunks/s "
        "| disk | serve start / restart | RSS (own + mapped files) "
        "| HTTP p50/p95 one · filtered · fan-out (ms) | in-process p50/p95 one · filtered · fan-out (ms) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    have = 0
    for size in sorted(args.sizes):
        # one `regrag ingest` per corpus source, as a user adds a batch: the base corpus, then the new copies
        # together (each invocation ends by preparing the search snapshot, once the index is large)
        added: list[tuple[list[Path], str | None]] = []
        if have == 0:
            added.append(([args.corpus], "default"))
        if size > max(1, have):
            added.append(([copy_folder(args.work, args.corpus, k) for k in range(max(1, have), size)], None))
        before = time.perf_counter()
        new_chunks, prepare_s = 0, 0.0
        for folders, corpus in added:
            _, summary = ingest(data, args.vector_cache, folders, corpus)
            new_chunks += summary["chunks"]
            prepare_s += summary["search_prepared_s"]
        add_s = time.perf_counter() - before
        have = size
        copies = [copy_folder(args.work, args.corpus, k) for k in range(1, size)]
        before = time.perf_counter()
        _, summary = ingest(data, args.vector_cache, [args.corpus], "default")
        total = summary["index"]["chunks"]
        if copies:
            _, summary = ingest(data, args.vector_cache, copies, None)
            total = summary["index"]["chunks"]
        re_s = time.perf_counter() - before
        corpora = ["default"] + [f"copy{i}" for i in range(1, min(size - 1, CORPORA) + 1)]
        cases = bodies(questions, corpora)
        served = measure_http(data, args.vector_cache, cases)
        restart_s = measure_restart(data, args.vector_cache)
        inproc = measure_in_process(data, args.vector_cache, cases)
        fmt = " · ".join(f"{served[n][0]:.0f}/{served[n][1]:.0f}" for n in cases)
        fmt_in = " · ".join(f"{inproc[n][0]:.0f}/{inproc[n][1]:.0f}" for n in cases)
        print(
            f"| {size}× | {total:,} | {add_s:.0f} s ({prepare_s:.0f} s), {new_chunks / add_s:,.0f} | "
            f"{re_s:.0f} s, {total / re_s:,.0f} | {disk_mb(data):,.0f} MB | "
            f"{served['startup_s']:.1f} s / {restart_s:.1f} s | "
            f"{served['rss_mb']:,.0f} MB ({served['anon_mb']:,.0f} + {served['file_mb']:,.0f}) | {fmt} | {fmt_in} |",
            flush=True,
        )
    print(f"bench process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
