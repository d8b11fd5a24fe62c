"""Fault injection: `regrag ingest` killed at chosen points of the write path and at random moments, then run
again exactly as before. Afterwards the index answers twenty fixed questions exactly as an index built without
the kill, and `regrag doctor` finds nothing (faults.py has the corpus, the questions and the comparison).

The kills are real: a subprocess SIGKILLs itself at the N-th call of a method (tests/fakes/kill_at.py), with no
cleanup, no rollback and no flush.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faults import DOCS, answers, differences, doctor, env, killed, make_corpus, regrag, summary

CHUNK_STORE = "regrag.adapters.local.chunk_store:SqliteIndex"
SEARCH_STORE = "regrag.adapters.local.search_store:SqliteSearchStore"
BLOBS = "regrag.adapters.local.blobstore:DiskBlobStore"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def clean(corpus, tmp_path_factory) -> list:
    """The answers of an index built without any fault (and a second clean build answers alike)."""
    data = tmp_path_factory.mktemp("clean") / "data"
    assert regrag(data, "ingest", str(corpus)).returncode == 0
    reference = answers(data)
    again = tmp_path_factory.mktemp("clean-again") / "data"
    assert regrag(again, "ingest", str(corpus)).returncode == 0
    assert differences(reference, answers(again)) == []
    return reference


def assert_whole(data: Path, clean: list) -> None:
    """The index at `data` answers as a clean one and the doctor finds nothing."""
    assert differences(clean, answers(data)) == []
    checked = doctor(data)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "index integrity: whole" in checked.stdout


# (method, call, before/after): each kill lands inside a document's write, or between two of them
KILL_POINTS = [
    pytest.param(f"{CHUNK_STORE}.put_part", 5, "after", id="after-chunks-stored"),
    pytest.param(f"{SEARCH_STORE}.upsert_vectors", 5, "before", id="before-vectors"),
    pytest.param(f"{SEARCH_STORE}.upsert_vectors", 7, "after", id="after-vectors"),
    pytest.param(f"{SEARCH_STORE}.upsert_lexical", 3, "after", id="after-terms"),
    pytest.param(f"{SEARCH_STORE}.refresh_metadata", 1, "before", id="inside-version-switch"),
    pytest.param(f"{CHUNK_STORE}.mark_complete", 6, "before", id="before-completion-mark"),
    pytest.param(f"{CHUNK_STORE}.mark_complete", 9, "after", id="after-completion-mark"),
    pytest.param(f"{BLOBS}.write", 8, "after", id="after-bucket-write"),
    pytest.param("regrag.entrypoints.handlers:ingest_name", 11, "before", id="between-documents"),
]


@pytest.mark.parametrize(("target", "nth", "when"), KILL_POINTS)
def test_a_kill_anywhere_in_the_write_path_is_finished_by_a_plain_rerun(tmp_path, corpus, clean, target, nth, when):
    data = tmp_path / "data"
    run = killed(data, target, nth, when, "ingest", str(corpus))
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    again = regrag(data, "ingest", str(corpus))
    assert again.returncode == 0, again.stderr[-2000:]
    assert summary(again)["failed"] == 0
    assert_whole(data, clean)


def test_a_kill_inside_a_version_switch_never_leaves_old_and_new_together(tmp_path, corpus, clean):
    """The newer 海洋环境保护法 (nat-law-0058) arrives after the older one is stored: a kill while the older one's
    dates change leaves the older one alone in force, and the re-run switches to the newer one whole."""
    data = tmp_path / "data"
    older = make_corpus(tmp_path / "older", tuple(d for d in DOCS if d != "nat-law-0058"))
    assert regrag(data, "ingest", str(older)).returncode == 0
    question = ("海洋环境保护法关于向海洋倾倒废弃物有什么规定？",)
    run = killed(data, f"{SEARCH_STORE}.upsert_vectors", 1, "after", "ingest", str(corpus))
    assert run.returncode == -signal.SIGKILL
    cited = _cited_docs(data, question[0])
    assert "nat-law-0057" in cited and "nat-law-0058" not in cited  # the older alone, never both
    assert regrag(data, "ingest", str(corpus)).returncode == 0
    cited = _cited_docs(data, question[0])
    assert "nat-law-0058" in cited and "nat-law-0057" not in cited
    assert_whole(data, clean)


def _cited_docs(data: Path, question: str) -> set[str]:
    from regrag.api import endpoints
    from regrag.api.routes import call
    from regrag.config import Settings
    from regrag.wiring import build_services

    services = build_services(Settings.from_env({}, data_dir=data, embedder="hash"))
    try:
        _, body = call(endpoints.query, services, {"question": question})
        return {c["doc_id"] for c in body["citations"]} | {c["doc_id"] for c in body["candidates"][:5]}
    finally:
        services.close()


def test_kills_at_random_moments(tmp_path, corpus, clean):
    """As an operator would: kill the ingest at a random moment (three times, a fixed seed), run it again."""
    started = time.perf_counter()
    assert regrag(tmp_path / "timing", "ingest", str(corpus)).returncode == 0
    duration = time.perf_counter() - started
    rng = random.Random(30)
    for trial in range(3):
        data = tmp_path / f"trial-{trial}"
        process = subprocess.Popen(
            [sys.executable, "-m", "regrag.entrypoints.cli", "ingest", str(corpus)],
            env=env(data),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, duration))
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert regrag(data, "ingest", str(corpus)).returncode == 0
        assert_whole(data, clean)


def test_a_kill_while_a_document_in_parts_is_written(tmp_path, corpus, clean):
    """A document whose chunks travel in several messages is kept part by part and written whole with its last
    part: a kill between parts leaves the index as it was, and the re-run writes the document whole."""
    data = tmp_path / "data"
    split = 110_000  # every message over 110 kB is split: the longer laws travel in 2 to 4 parts
    run = killed(data, "regrag.ingest.upsert:_assembled", 9, "after", "ingest", str(corpus), max_message_bytes=split)
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    rerun = killed(data, "regrag.ingest.upsert:_assembled", 0, "after", "ingest", str(corpus), max_message_bytes=split)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert_whole(data, clean)


def test_a_reader_during_a_version_switch_sees_the_older_version_alone_until_the_newer_is_whole(
    tmp_path, corpus, monkeypatch
):
    """Another reader (its own connections, as a server process has) asks about 海洋环境保护法 at each step of the
    switch to the newer version: the older alone until the switch commits, then the newer alone."""
    from regrag.adapters.local.chunk_store import SqliteIndex
    from regrag.adapters.local.search_store import SqliteSearchStore
    from regrag.api import endpoints
    from regrag.config import Settings
    from regrag.wiring import build_services

    from conftest import ingest_sample

    data = tmp_path / "data"
    assert (
        regrag(data, "ingest", str(make_corpus(tmp_path / "older", ("nat-law-0057", "nat-reg-0088")))).returncode == 0
    )
    settings = Settings.from_env({}, data_dir=data, embedder="hash")
    reader, writer = build_services(settings), build_services(settings)
    question = {"question": "海洋环境保护法关于向海洋倾倒废弃物有什么规定？"}

    def ocean() -> set[str]:
        found = {c["doc_id"] for c in endpoints.query(reader, question)["candidates"]}
        return found & {"nat-law-0057", "nat-law-0058"}

    seen: list[tuple[str, set[str]]] = []
    for owner, name in ((SqliteIndex, "put_part"), (SqliteSearchStore, "refresh_metadata"),
                        (SqliteSearchStore, "upsert_vectors"), (SqliteIndex, "mark_complete")):  # fmt: skip
        original = getattr(owner, name)

        def spy(self, *args, _original=original, _name=name):  # type: ignore[no-untyped-def]
            result = _original(self, *args)
            if self is writer.store:
                seen.append((_name, ocean()))
            return result

        monkeypatch.setattr(owner, name, spy)
    try:
        assert ocean() == {"nat-law-0057"}
        ingest_sample(writer, ["nat-law-0058"])
        assert {name for name, _ in seen} == {"put_part", "refresh_metadata", "upsert_vectors", "mark_complete"}
        assert all(found == {"nat-law-0057"} for _, found in seen), seen
        assert ocean() == {"nat-law-0058"}
    finally:
        reader.close()
        writer.close()
