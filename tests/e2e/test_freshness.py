"""A running `regrag serve` sees a finished ingest at its next query: two processes, a server and `regrag ingest`
into the same data folder. (The server used to keep the list of corpora for 30 s: a document of a new corpus
was not searched, and naming its corpus was refused as unknown, for up to half a minute.)"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from faults import env, make_corpus, regrag


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path):
    data = tmp_path / "data"
    assert regrag(data, "ingest", str(make_corpus(tmp_path / "first", ("nat-reg-0088", "sh-0001")))).returncode == 0
    port = _port()
    process = subprocess.Popen(
        [sys.executable, "-m", "regrag.entrypoints.cli", "serve", "--port", str(port)],
        env=env(data),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    yield data, base
    process.terminate()
    process.wait(timeout=30)


def _post(base: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{base}/query", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_finished_ingest_is_answered_by_the_running_server_at_once(server, tmp_path):
    data, base = server
    for _ in range(8):  # several server threads, each with its own connection, have answered already
        assert _post(base, {"question": "窃电行为怎么处理？"})[0] == 200
    cases = [
        ("ha-0001", {"question": "河南省供用电合同应当包括哪些内容？"}),  # a new corpus (henan)
        ("zj-0004", {"question": "电网设施保护", "corpora": ["zhejiang"]}),  # a new corpus, named
        ("nat-law-0076", {"question": "突发事件应对中企业的预防措施有哪些？"}),  # a corpus already served
    ]
    for doc_id, body in cases:
        folder = make_corpus(tmp_path / doc_id, (doc_id,))
        assert regrag(data, "ingest", str(folder)).returncode == 0
        status, answer = _post(base, body)  # the very next query, no waiting
        assert status == 200, answer
        assert doc_id in {c["doc_id"] for c in answer["candidates"]}, (doc_id, answer.get("corpus_stats"))
    health = json.load(urllib.request.urlopen(f"{base}/healthz", timeout=10))
    assert health["status"] == "ok" and health["documents"] == 5 and health["integrity"] == []
