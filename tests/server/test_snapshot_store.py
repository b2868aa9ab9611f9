"""The server's kept snapshots are bounded in memory, not only in number: an environment with
large observations (images, long texts: 100 KB a reply) would otherwise fill 2 GB at 20,000
snapshots."""

from __future__ import annotations

import time

from openenv_hub.server.snapshots import KeptSnapshot, SnapshotStore, approximate_size


def kept(payload_bytes: int) -> KeptSnapshot:
    return KeptSnapshot(object, b"state", {"observation": {"text": "x" * payload_bytes}}, 1)


def test_the_oldest_snapshots_go_when_their_bytes_pass_the_bound() -> None:
    store = SnapshotStore(limit=1_000, limit_bytes=100_000)
    ids = [store.add(kept(30_000)) for _ in range(10)]
    assert len(store) == 3 and store.size <= 100_000
    assert [store.get(i) is not None for i in ids] == [False] * 7 + [True] * 3
    assert store.size == sum(
        approximate_size(s.state) + approximate_size(s.payload)
        for s in (store.get(i) for i in ids[-3:])
        if s is not None
    )


def test_the_latest_snapshot_is_kept_whatever_its_size() -> None:
    store = SnapshotStore(limit_bytes=10_000)
    store.add(kept(100))
    latest = store.add(kept(50_000))
    assert len(store) == 1 and store.get(latest) is not None


def test_the_count_bound_still_holds() -> None:
    store = SnapshotStore(limit=4)
    for _ in range(10):
        store.add(kept(10))
    assert len(store) == 4


def test_a_huge_value_is_measured_without_walking_all_of_it() -> None:
    huge = [[i] for i in range(1_000_000)]
    started = time.perf_counter()
    size = approximate_size(huge)
    assert time.perf_counter() - started < 1.0
    assert size >= 8_000_000  # the list's own slots, and the rest by the average seen
