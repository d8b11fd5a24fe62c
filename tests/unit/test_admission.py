"""regrag serve's admission control: bounded slots and waiting room, smallest request first, fast refusals."""

from __future__ import annotations

import threading
import time

from werkzeug.test import Client

from regrag.api.server import Admission, Limits, wsgi_app


def test_waiting_callers_are_served_smallest_first():
    gate = Admission(Limits(max_active=1, max_waiting=10, wait_s=5))
    assert gate.enter(100)  # holds the only slot
    order: list[int] = []

    def wait_for_turn(cost: int) -> None:
        assert gate.enter(cost)
        order.append(cost)
        gate.leave()

    threads = [threading.Thread(target=wait_for_turn, args=(c,)) for c in (2000, 1500, 30)]
    for t in threads:
        t.start()
        time.sleep(0.05)  # arrive in this order: the long ones first
    gate.leave()
    for t in threads:
        t.join()
    assert order == [30, 1500, 2000]


def _hold(gate: Admission, cost: int, release: threading.Event, admitted: list[int]) -> threading.Thread:
    """A request of `cost` on its own thread (as the server runs each): enter, note it, hold until released."""

    def run() -> None:
        if gate.enter(cost):
            admitted.append(cost)
            release.wait(10)
            gate.leave()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_long_requests_leave_a_slot_for_short_questions():
    gate = Admission(Limits(max_active=2, max_waiting=10, wait_s=5, long_bytes=1000))
    admitted: list[int] = []
    first_long, second_long, short = threading.Event(), threading.Event(), threading.Event()
    threads = [_hold(gate, 5000, first_long, admitted)]
    time.sleep(0.05)
    threads.append(_hold(gate, 6000, second_long, admitted))
    time.sleep(0.1)
    assert admitted == [5000] and gate.waiting == 1  # a slot is free, but not for a second long request
    threads.append(_hold(gate, 200, short, admitted))
    time.sleep(0.1)
    assert admitted == [5000, 200]  # the short question took the free slot at once
    short.set()
    time.sleep(0.1)
    assert admitted == [5000, 200]  # its slot stays kept for short questions
    first_long.set()
    time.sleep(0.1)
    assert admitted == [5000, 200, 6000]  # one long request at a time
    second_long.set()
    for thread in threads:
        thread.join(5)
    assert gate.waiting == 0 and gate.refused == 0


def test_one_slot_serves_long_requests_too():
    gate = Admission(Limits(max_active=1, max_waiting=10, wait_s=5, long_bytes=1000))
    assert gate.enter(5000)
    gate.leave()
    assert gate.enter(5000)


def test_a_full_room_is_refused_at_once_and_a_long_wait_times_out():
    gate = Admission(Limits(max_active=1, max_waiting=1, wait_s=0.3))
    assert gate.enter()
    waiter = threading.Thread(target=lambda: gate.enter())
    waiter.start()
    time.sleep(0.05)
    started = time.perf_counter()
    assert not gate.enter()  # the room (1) is taken
    assert time.perf_counter() - started < 0.05
    waiter.join()  # it timed out after 0.3 s without a slot
    assert gate.refused == 2 and gate.waiting == 0


def test_refusals_are_json_503_with_retry_after(hash_services):
    gate = Admission(Limits(max_active=1, max_waiting=0, wait_s=0.1))
    assert gate.enter()  # the one slot is busy
    client = Client(wsgi_app(hash_services, gate))
    response = client.post("/query", json={"question": "并网"})
    assert response.status_code == 503 and response.headers["Retry-After"] == "2"
    assert response.get_json()["error"]["code"] == "busy"
    assert client.get("/healthz").status_code == 200  # cheap GETs never wait behind questions
