"""`[http.oauth] calls_per_minute` with a shared state: every replica spends one budget per
principal (PostgreSQL), counted in the store's own transaction so racing replicas never
admit more than the limit together."""

from __future__ import annotations

import threading
from collections.abc import Callable

from mcp_tools.state.store import StateStore

OpenStore = Callable[..., StateStore]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_two_replicas_spend_one_budget_per_principal(open_store: OpenStore) -> None:
    clock = Clock()
    first, second = open_store(clock), open_store(clock)
    assert first.spend_calls("ada", 2, limit=5) is None
    assert second.spend_calls("ada", 2, limit=5) is None
    assert first.spend_calls("ada", 1, limit=5) is None
    clock.now += 20
    retry = second.spend_calls("ada", 1, limit=5)
    assert retry is not None and 40 <= retry <= 41  # the oldest call leaves the window in 40 s
    assert first.spend_calls("ada", 2, limit=5) is not None  # a refusal counted nothing
    assert second.spend_calls("bob", 5, limit=5) is None  # per principal
    clock.now += 41
    assert first.spend_calls("ada", 5, limit=5) is None  # the minute has passed


def test_attack_replicas_racing_never_admit_more_than_the_limit_together(open_store: OpenStore) -> None:
    stores = [open_store(), open_store()]
    admitted: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def spend(store: StateStore) -> None:
        start.wait()
        for _ in range(10):
            fits = store.spend_calls("ada", 1, limit=15) is None
            with lock:
                admitted.append(fits)

    threads = [threading.Thread(target=spend, args=(store,)) for store in stores * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert admitted.count(True) == 15 and len(admitted) == 40
