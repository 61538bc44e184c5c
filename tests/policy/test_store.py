"""Approvals and audit rows in SQLite and in PostgreSQL: single use, exact match, expiry, concurrent consumers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_tools.policy.store import AuditRow, PolicyStore, StateStore

OpenStore = Callable[..., StateStore]


def request(store: StateStore, digest: str = "d1", tool: str = "x.erase", principal: str = "local"):
    return store.request_approval(
        tool=tool,
        args_sha256=digest,
        args_display={"target": "t"},
        summary="Erase t",
        risk="high",
        principal=principal,
        ttl_seconds=600,
    )


def test_pending_approval_is_reused_for_the_same_call(open_store: OpenStore) -> None:
    store = open_store()
    first = request(store)
    assert request(store).id == first.id
    assert request(store, digest="d2").id != first.id
    assert request(store, tool="x.other").id != first.id


def test_only_an_approved_approval_is_consumed_and_only_once(open_store: OpenStore) -> None:
    store = open_store()
    approval = request(store)
    assert store.consume_approval("x.erase", "d1", "local") is None  # still pending
    store.decide_approval(approval.id, approve=True, ttl_seconds=600)
    assert store.consume_approval("x.erase", "d2", "local") is None  # other arguments
    assert store.consume_approval("x.other", "d1", "local") is None  # other tool
    assert store.consume_approval("x.erase", "d1", "local").id == approval.id
    assert store.consume_approval("x.erase", "d1", "local") is None
    with pytest.raises(ValueError, match="consumed"):
        store.decide_approval(approval.id, approve=True, ttl_seconds=600)


def test_an_approval_serves_only_the_principal_that_asked_for_it(open_store: OpenStore) -> None:
    store = open_store()
    asked_by_laptop = request(store, principal="laptop")
    assert request(store, principal="phone").id != asked_by_laptop.id  # each principal waits on its own
    store.decide_approval(asked_by_laptop.id, approve=True, ttl_seconds=600)
    assert store.consume_approval("x.erase", "d1", "phone") is None
    assert store.consume_approval("x.erase", "d1", "laptop").id == asked_by_laptop.id


def test_concurrent_consumers_get_one_approval_once(open_store: OpenStore) -> None:
    setup = open_store()
    setup.decide_approval(request(setup).id, approve=True, ttl_seconds=600)
    stores = [open_store() for _ in range(8)]  # separate connections, as separate processes would have
    wins: list[str] = []
    barrier = threading.Barrier(len(stores))

    def consume(store: StateStore) -> None:
        barrier.wait()
        consumed = store.consume_approval("x.erase", "d1", "local")
        if consumed is not None:
            wins.append(consumed.id)

    threads = [threading.Thread(target=consume, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1


def test_expired_approvals_can_be_neither_decided_nor_used(open_store: OpenStore) -> None:
    now = [1000.0]
    store = open_store(clock=lambda: now[0])
    approval = request(store)
    now[0] += 601
    with pytest.raises(ValueError, match="expired"):
        store.decide_approval(approval.id, approve=True, ttl_seconds=600)
    other = request(store)
    assert other.id != approval.id
    store.decide_approval(other.id, approve=True, ttl_seconds=600)
    now[0] += 601
    assert store.consume_approval("x.erase", "d1", "local") is None
    assert store.list_approvals() == []
    assert {a.effective_status(now[0]) for a in store.list_approvals(include_done=True)} == {"expired"}


def test_unknown_approval_id(open_store: OpenStore) -> None:
    store = open_store()
    with pytest.raises(LookupError):
        store.decide_approval("apr-nope", approve=True, ttl_seconds=600)


def test_audit_rows_round_trip_in_order(open_store: OpenStore) -> None:
    store = open_store()
    for index in range(3):
        store.record(AuditRow(float(index), "stdio", "local", "x.y", {"i": index}, "low", "ran", None, 1.5, "ok"))
    rows = open_store().tail(2)  # what another process reads
    assert [row.args["i"] for row in rows] == [1, 2]
    assert rows[0].as_dict()["time"] == "1970-01-01T00:00:01Z"
    assert rows[0].duration_ms == 1.5


def test_the_sqlite_state_file_is_private(tmp_path: Path) -> None:
    PolicyStore(tmp_path / "p.db")
    assert (tmp_path / "p.db").stat().st_mode & 0o777 == 0o600


def test_timestamps_keep_sub_second_precision(open_store: OpenStore) -> None:
    """Expiry compares seconds since 1970 with fractions: a 4-byte float would round them by minutes."""
    now = [1_795_000_000.25]
    store = open_store(clock=lambda: now[0])
    approval = request(store)
    assert store.get_approval(approval.id).created == 1_795_000_000.25  # type: ignore[union-attr]


def test_racing_requests_for_one_call_share_one_pending_approval(open_store: OpenStore) -> None:
    """Two replicas asking at once for the same call must not make two approvals for the person."""
    stores = [open_store() for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    ids: list[str] = []

    def ask(store: StateStore) -> None:
        barrier.wait()
        ids.append(request(store).id)

    threads = [threading.Thread(target=ask, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ids) == 6 and len(set(ids)) == 1


def test_events_are_numbered_in_commit_order_across_connections(open_store: OpenStore) -> None:
    """A follower reads events after its cursor: a number that committed late would be skipped."""
    stores = [open_store() for _ in range(4)]
    barrier = threading.Barrier(len(stores))

    def churn(index: int) -> None:
        barrier.wait()
        for round_ in range(5):
            approval = request(stores[index], digest=f"{index}-{round_}")
            stores[index].decide_approval(approval.id, approve=True, ttl_seconds=600)
            stores[index].consume_approval_id(approval.id)

    threads = [threading.Thread(target=churn, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = stores[0].events_since(0, limit=1000)
    assert len(events) == 4 * 5 * 3
    assert [seq for seq, _, _ in events] == sorted(seq for seq, _, _ in events)
    by_approval: dict[str, list[str]] = {}
    for _, approval_id, status in events:
        by_approval.setdefault(approval_id, []).append(status)
    assert set(map(tuple, by_approval.values())) == {("pending", "approved", "consumed")}
