"""GcsWatchStore's races on the in-memory bucket with real compare-and-swap (the storage emulator ignores
preconditions): baselines updated at once all land, an alert delivered at once is recorded once, and an index
entry left behind by a crash is skipped."""

from __future__ import annotations

import threading
from dataclasses import replace

from contract.contracts import make_alert, make_watch
from fakes.memory_objects import MemoryObjects
from regrag.adapters.gcp.watches import GcsWatchStore
from regrag.domain.watches import Baseline


def store(objects: MemoryObjects) -> GcsWatchStore:
    return GcsWatchStore(objects, "p/", sleep=lambda s: None)


def test_a_baseline_update_that_loses_a_race_reads_again_and_the_index_follows_the_winner():
    objects = MemoryObjects()
    watches = store(objects)
    watch = make_watch(1, article="第三条")
    watches.put_watch(watch)
    name = f"p/watches/{watch.watch_id}.json"
    interfered = []

    def other_writer(written: str) -> None:
        # another document's upsert moves the watch after this one read it, before it writes
        if written == name and not interfered:
            interfered.append(written)
            watches.update_baseline(watch.watch_id, Baseline(doc_id="nat-law-0200", article="第三条"))

    objects.before_write = other_writer
    watches.update_baseline(watch.watch_id, Baseline(doc_id="nat-law-0100", article="第三条"))
    objects.before_write = None
    assert objects.conflicts == 1  # the first write lost, the retry read the other writer's version
    assert watches.get_watch(watch.watch_id).baseline.doc_id == "nat-law-0100"
    assert [w.watch_id for w in watches.watches_following(["nat-law-0100"])] == [watch.watch_id]
    assert watches.watches_following(["nat-law-0200", "nat-law-0072"]) == []
    assert not any("nat-law-0200" in n or "nat-law-0072" in n for n in objects.objects)  # entries removed


def test_baselines_updated_at_once_all_land():
    objects = MemoryObjects()
    watches = store(objects)
    watch = make_watch(1, article="第三条")
    watches.put_watch(watch)
    targets = [f"nat-law-{n:04d}" for n in range(100, 108)]
    start = threading.Barrier(len(targets))

    def move(doc_id: str) -> None:
        start.wait()
        watches.update_baseline(watch.watch_id, Baseline(doc_id=doc_id, article="第三条"))

    threads = [threading.Thread(target=move, args=(d,)) for d in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = watches.get_watch(watch.watch_id).baseline.doc_id
    assert final in targets
    assert [w.watch_id for w in watches.watches_following([final])] == [watch.watch_id]
    assert all(watches.watches_following([d]) == [] for d in targets if d != final)  # leftovers are skipped


def test_an_alert_delivered_twice_at_once_is_recorded_once():
    objects = MemoryObjects()
    watches = store(objects)
    alert = make_alert(1, make_watch(1).watch_id, created="2026-11-01T00:00:00+00:00")
    results: list[bool] = []
    start = threading.Barrier(2)

    def add() -> None:
        start.wait()
        results.append(watches.add_alert(replace(alert, created="2026-11-01T00:00:01+00:00")))

    threads = [threading.Thread(target=add) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, True] and len(watches.list_alerts()) == 1


def test_a_watch_recreated_after_a_crash_gets_its_index_back():
    objects = MemoryObjects()
    watches = store(objects)
    watch = make_watch(1)
    watches.put_watch(watch)
    del objects.objects[f"p/watch-follows/nat-law-0072/{watch.watch_id}"]  # a crash between the two writes
    assert watches.watches_following(["nat-law-0072"]) == []
    assert watches.put_watch(watch) is False  # asked for again: not new, but indexed again
    assert [w.watch_id for w in watches.watches_following(["nat-law-0072"])] == [watch.watch_id]


def test_ids_that_are_not_ours_never_become_object_names():
    import pytest

    from regrag.domain.errors import InvalidInput

    watches = store(MemoryObjects())
    with pytest.raises(InvalidInput):
        watches.get_watch("../../chunk-ids/x")
    with pytest.raises(InvalidInput):
        watches.watches_following(["../x"])
