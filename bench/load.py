"""A crowd of users on `regrag serve` (waitress, admission control), over loopback, as deployed.

    python bench/load.py --data-dir /tmp/full [--clients 200]

Scenarios, each on a freshly started server (cold query-embedding cache):
  1. `clients` concurrent requests over 8 new questions (each asked clients/8 times at once: single flight);
  2. `clients` concurrent requests over as many distinct questions (dev + lay-dev questions);
  3. short questions while long ones (2,000 characters) are in flight: does a short one wait behind them?
Prints p50/p95/max latency, errors and 503s (with Retry-After) per scenario.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from _common import DEFAULT_EVAL, ROOT, pct

EIGHT = [
    "供电企业因计划检修需要停电，应当提前几天通知用户？",
    "分布式光伏发电项目并网需要满足什么条件？",
    "煤矿企业瓦斯超限作业会受到什么处罚？",
    "建设项目环境影响报告书由哪个部门审批？",
    "电力设施保护区内可以种植高秆植物吗？",
    "可再生能源发电企业的上网电价如何确定？",
    "窃电行为应当承担什么法律责任？",
    "突发事件发生后电力企业应当采取哪些应急措施？",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data_dir: Path, vector_cache: Path | None, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "REGRAG_DATA_DIR": str(data_dir), "LOG_LEVEL": "WARNING"}
    if vector_cache:
        env["REGRAG_VECTOR_CACHE"] = str(vector_cache)
    cmd = [
        sys.executable,
        "-c",
        "import sys; from regrag.entrypoints.cli import main; sys.exit(main())",
        "serve",
        "--port",
        str(port),
    ]
    env["PYTHONPATH"] = str(ROOT / "shared")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("server did not start")


def ask(port: int, question: str) -> tuple[int, float, str | None]:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    body = json.dumps({"question": question}, ensure_ascii=False).encode("utf-8")
    try:
        conn.request("POST", "/query", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status, time.perf_counter() - started, response.getheader("Retry-After")
    except OSError:
        return 0, time.perf_counter() - started, None
    finally:
        conn.close()


def crowd(port: int, questions: list[str]) -> list[tuple[int, float, str | None]]:
    results: list[tuple[int, float, str | None]] = [(0, 0.0, None)] * len(questions)
    barrier = threading.Barrier(len(questions))

    def one(i: int) -> None:
        barrier.wait()
        results[i] = ask(port, questions[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(questions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def report(name: str, results: list[tuple[int, float, str | None]]) -> None:
    ok = [t for s, t, _ in results if s == 200]
    busy = [r for r in results if r[0] == 503]
    errors = [r for r in results if r[0] not in (200, 503)]
    line = f"{name:<44} n={len(results)} ok={len(ok)} 503={len(busy)} errors={len(errors)}"
    if ok:
        line += f"  p50 {pct(ok, 50):.2f} s  p95 {pct(ok, 95):.2f} s  max {max(ok):.2f} s"
    if busy:
        line += f"  (503 answered in p95 {pct([t for _, t, _ in busy], 95):.2f} s, Retry-After {busy[0][2]})"
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--vector-cache", type=Path)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--only-long", action="store_true", help="only the short-behind-long scenario")
    args = ap.parse_args()
    rows = [json.loads(x) for x in DEFAULT_EVAL.read_text(encoding="utf-8").splitlines() if x.strip()]
    lay = DEFAULT_EVAL.with_name("lay-dev.jsonl")
    rows += [json.loads(x) for x in lay.read_text(encoding="utf-8").splitlines() if x.strip()]
    distinct = list(dict.fromkeys(r["question"] for r in rows))
    distinct = (distinct * (args.clients // len(distinct) + 1))[: args.clients]

    scenarios = {
        f"{args.clients} clients over 8 new questions": [EIGHT[i % 8] for i in range(args.clients)],
        f"{args.clients} clients over {len(set(distinct))} distinct questions": distinct,
    }
    for name, questions in scenarios.items() if not args.only_long else ():
        port = free_port()
        proc = start_server(args.data_dir, args.vector_cache, port)
        try:
            report(name, crowd(port, questions))
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    # short questions behind long ones: four 2,000-character questions, then a short one every 0.2 s
    port = free_port()
    proc = start_server(args.data_dir, args.vector_cache, port)
    try:
        long_q = [(EIGHT[i] + "，") * (2000 // (len(EIGHT[i]) + 1)) for i in range(4)]
        shorts: list[tuple[int, float, str | None]] = []
        longs: list[tuple[int, float, str | None]] = []
        threads = [threading.Thread(target=lambda q=q: longs.append(ask(port, q))) for q in long_q]
        for t in threads:
            t.start()
        for i in range(10):
            time.sleep(0.2)
            shorts.append(ask(port, f"{EIGHT[(i + 4) % 8]}（{i}）"))
        for t in threads:
            t.join()
        report("4 long (2,000-char) questions", longs)
        report("10 short questions asked meanwhile", shorts)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
