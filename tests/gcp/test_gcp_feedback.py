"""GcsFeedbackStore on an in-memory bucket with real compare-and-swap: the contract, lost races, retries.

The storage emulator ignores preconditions (`if_generation_match`), so the appends' races can only be run
here; tests/gcp/test_gcp_contracts.py runs the one-at-a-time part of the contract on the emulator.
"""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest

from contract.contracts import ConcurrentFeedbackStoreContract, feedback, query_id
from fakes.memory_objects import MemoryObjects
from regrag.adapters.gcp.blobstore import GenerationMismatch
from regrag.adapters.gcp.feedback import GcsFeedbackStore
from regrag.api.routes import call
from regrag.domain.errors import Unavailable
from regrag.inputs.parse import parse_feedback_request
from regrag.ops.feedback import record_feedback

DAY = "feedback/2026-03-01.jsonl"


class TestMemoryFeedbackStore(ConcurrentFeedbackStoreContract):
    @pytest.fixture
    def feedback_store(self):
        objects = MemoryObjects()
        # 1 ms between a writer's read and its write (a GCS round trip is tens of ms), so concurrent appends do
        # collide here; the store keeps the production retry policy (8 attempts), with shorter sleeps
        objects.before_write = lambda name: time.sleep(0.001)
        return GcsFeedbackStore(objects, backoff_s=0.005)

    def test_concurrent_feedback_on_one_day_all_lands_once(self, feedback_store):
        super().test_concurrent_feedback_on_one_day_all_lands_once(feedback_store)
        assert feedback_store.objects.conflicts > 0  # the appends did race, and the losers appended again


def interleave(objects: MemoryObjects, other, times: int = 1) -> list[str]:
    """Run `other()` just before each of the next `times` writes of a day's object (after the writer has read
    it, before its conditional write lands): the worst moment."""
    fired: list[str] = []

    def hook(name: str) -> None:
        if "feedback/" in name and len(fired) < times:
            fired.append(name)
            objects.before_write = None  # the other writer's own write passes through
            try:
                other()
            finally:
                objects.before_write = hook

    objects.before_write = hook
    return fired


def lines(objects: MemoryObjects, name: str = DAY) -> list[dict]:
    return [json.loads(line) for line in objects.objects[name].data.decode().splitlines()]


def test_layout_one_object_per_query_and_one_jsonl_object_per_day_under_the_prefix():
    objects = MemoryObjects()
    store = GcsFeedbackStore(objects, "regrag/")
    store.log_query(query_id(1), {"time": "2026-03-01T08:00:00+00:00", "question": "窃电如何处罚？"})
    store.add_feedback(feedback(1, time="2026-03-01T09:00:00+00:00", comment="准确"))
    store.add_feedback(feedback(1, time="2026-03-01T10:00:00+00:00", helpful=False))
    store.add_feedback(feedback(1, time="2026-03-02T00:00:00+00:00"))
    assert sorted(objects.objects) == [
        "regrag/feedback/2026-03-01.jsonl",
        "regrag/feedback/2026-03-02.jsonl",
        f"regrag/queries/{query_id(1)}.json",
    ]
    day = lines(objects, "regrag/" + DAY)
    assert [(r["helpful"], r["comment"]) for r in day] == [(True, "准确"), (False, None)]
    assert all(len(r["feedback_id"]) == 32 for r in day)  # stored, but not returned by list_feedback
    assert "准确".encode() in objects.objects["regrag/" + DAY].data  # UTF-8, not \u escapes
    objects.write("regrag/feedback/README.txt", b"notes")  # not a day object: ignored by the listing
    assert [f["time"][:10] for f in store.list_feedback()] == ["2026-03-01", "2026-03-01", "2026-03-02"]
    assert "feedback_id" not in store.list_feedback()[0]


def test_a_lost_race_is_retried_and_both_lines_land():
    objects = MemoryObjects()
    sleeps: list[float] = []
    first = GcsFeedbackStore(objects, sleep=sleeps.append)
    second = GcsFeedbackStore(objects)  # another function instance
    fired = interleave(objects, lambda: second.add_feedback(feedback(1, time="2026-03-01T09:00:00+00:00", comment="B")))
    first.add_feedback(feedback(1, time="2026-03-01T09:00:00+00:00", comment="A"))
    assert fired and objects.conflicts == 1 and len(sleeps) == 1  # A lost once, backed off, re-read, appended
    assert [r["comment"] for r in lines(objects)] == ["B", "A"]  # in the order they landed


def test_retries_run_out_into_a_503_and_nothing_is_claimed_recorded():
    objects = MemoryObjects()
    sleeps: list[float] = []
    store = GcsFeedbackStore(objects, max_attempts=5, backoff_s=0.05, max_backoff_s=0.15, sleep=sleeps.append)
    store.log_query(query_id(1), {"time": "2026-03-01T08:00:00+00:00", "question": "窃电如何处罚？"})
    other = GcsFeedbackStore(objects)
    n = iter(range(100))
    interleave(
        objects, lambda: other.add_feedback(feedback(1, time="2026-03-01T09:00:00+00:00", comment=str(next(n)))), 5
    )
    with pytest.raises(Unavailable, match="kept changing during 5 attempts"):
        store.add_feedback(feedback(1, time="2026-03-01T09:00:00+00:00", comment="lost"))
    assert objects.conflicts == 5 and "lost" not in [r["comment"] for r in lines(objects)]
    # jittered exponential backoff, capped: attempt i sleeps in [0, min(0.15, 0.05 * 2**i)], none after the last
    assert len(sleeps) == 4 and all(0 <= s <= min(0.15, 0.05 * 2**i) for i, s in enumerate(sleeps))

    # through the API (the record is stamped now, so today's object): the client is told to retry (503)
    interleave(objects, lambda: other.add_feedback(feedback(1, time=dt.datetime.now(dt.UTC).isoformat())), 5)
    status, body = call(record_feedback, parse_feedback_request({"query_id": query_id(1), "helpful": True}), store)
    assert status == 503 and body["error"]["code"] == "unavailable" and "send it again" in body["error"]["message"]


class LostResponse(MemoryObjects):
    """The first conditional write lands, but its caller sees a 412, as when the client library retries an upload
    whose response was lost and the retry finds the generation it just created."""

    lose = 1

    def write(self, name, data, metadata=None, *, content_type=None, if_generation_match=None):
        info = super().write(name, data, metadata, content_type=content_type, if_generation_match=if_generation_match)
        if if_generation_match is not None and self.lose:
            self.lose -= 1
            raise GenerationMismatch(f"{name} is not at generation {if_generation_match}")
        return info


def test_an_append_whose_response_was_lost_is_not_written_twice():
    objects = LostResponse()
    store = GcsFeedbackStore(objects, sleep=lambda s: None)
    store.add_feedback(feedback(1, time="2026-03-01T09:00:00+00:00", comment="once"))
    assert [r["comment"] for r in lines(objects)] == ["once"] and objects.writes == 1
