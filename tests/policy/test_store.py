"""Approvals and audit rows in SQLite: single use, exact match, expiry, concurrent consumers."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mcp_tools.policy.store import AuditRow, PolicyStore


def request(store: PolicyStore, digest: str = "d1", tool: str = "x.erase", principal: str = "local"):
    return store.request_approval(
        tool=tool,
        args_sha256=digest,
        args_display={"target": "t"},
        summary="Erase t",
        risk="high",
        principal=principal,
        ttl_seconds=600,
    )


def test_pending_approval_is_reused_for_the_same_call(tmp_path: Path) -> None:
    store = PolicyStore(tmp_path / "p.db")
    first = request(store)
    assert request(store).id == first.id
    assert request(store, digest="d2").id != first.id
    assert request(store, tool="x.other").id != first.id


def test_only_an_approved_approval_is_consumed_and_only_once(tmp_path: Path) -> None:
    store = PolicyStore(tmp_path / "p.db")
    approval = request(store)
    assert store.consume_approval("x.erase", "d1", "local") is None  # still pending
    store.decide_approval(approval.id, approve=True, ttl_seconds=600)
    assert store.consume_approval("x.erase", "d2", "local") is None  # other arguments
    assert store.consume_approval("x.other", "d1", "local") is None  # other tool
    assert store.consume_approval("x.erase", "d1", "local").id == approval.id
    assert store.consume_approval("x.erase", "d1", "local") is None
    with pytest.raises(ValueError, match="consumed"):
        store.decide_approval(approval.id, approve=True, ttl_seconds=600)


def test_an_approval_serves_only_the_principal_that_asked_for_it(tmp_path: Path) -> None:
    store = PolicyStore(tmp_path / "p.db")
    asked_by_laptop = request(store, principal="laptop")
    assert request(store, principal="phone").id != asked_by_laptop.id  # each principal waits on its own
    store.decide_approval(asked_by_laptop.id, approve=True, ttl_seconds=600)
    assert store.consume_approval("x.erase", "d1", "phone") is None
    assert store.consume_approval("x.erase", "d1", "laptop").id == asked_by_laptop.id


def test_concurrent_consumers_get_one_approval_once(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    setup = PolicyStore(path)
    setup.decide_approval(request(setup).id, approve=True, ttl_seconds=600)
    stores = [PolicyStore(path) for _ in range(8)]  # separate connections, as separate processes would have
    wins: list[str] = []
    barrier = threading.Barrier(len(stores))

    def consume(store: PolicyStore) -> None:
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


def test_expired_approvals_can_be_neither_decided_nor_used(tmp_path: Path) -> None:
    now = [1000.0]
    store = PolicyStore(tmp_path / "p.db", clock=lambda: now[0])
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


def test_unknown_approval_id(tmp_path: Path) -> None:
    store = PolicyStore(tmp_path / "p.db")
    with pytest.raises(LookupError):
        store.decide_approval("apr-nope", approve=True, ttl_seconds=600)


def test_audit_rows_round_trip_in_order(tmp_path: Path) -> None:
    store = PolicyStore(tmp_path / "p.db")
    for index in range(3):
        store.record(AuditRow(float(index), "stdio", "local", "x.y", {"i": index}, "low", "ran", None, 1.5, "ok"))
    rows = store.tail(2)
    assert [row.args["i"] for row in rows] == [1, 2]
    assert rows[0].as_dict()["time"] == "1970-01-01T00:00:01Z"
    assert (tmp_path / "p.db").stat().st_mode & 0o777 == 0o600


OLD_AUDIT_SCHEMA = """
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, transport TEXT NOT NULL, principal TEXT NOT NULL,
    tool TEXT NOT NULL, args TEXT NOT NULL, risk TEXT, decision TEXT NOT NULL, approval_id TEXT,
    duration_ms REAL NOT NULL, outcome TEXT NOT NULL
);
INSERT INTO audit (ts, transport, principal, tool, args, risk, decision, approval_id, duration_ms, outcome)
VALUES (1.0, 'stdio', 'local', 'x.erase', '{}', 'high', 'confirmed', NULL, 1.5, 'ok');
"""


def test_an_audit_log_written_before_answered_by_existed_is_migrated(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "p.db"
    with sqlite3.connect(path) as old:
        old.executescript(OLD_AUDIT_SCHEMA)
    stores = [PolicyStore(path) for _ in range(3)]  # every process opening it migrates, or finds it done
    stores[0].record(
        AuditRow(2.0, "http", "laptop", "x.erase", {}, "high", "approved_out_of_band", "apr-1", 2.0, "ok", "page")
    )
    rows = stores[1].tail(10)
    assert [(row.decision, row.answered_by) for row in rows] == [("confirmed", None), ("approved_out_of_band", "page")]
    assert rows[0].as_dict()["answered_by"] is None and rows[1].as_dict()["answered_by"] == "page"


def test_who_decided_an_approval_is_kept_with_it(tmp_path: Path) -> None:
    store = PolicyStore(tmp_path / "p.db")
    approval = request(store)
    assert store.decided_by(approval.id) is None
    store.decide(approval.id, True, 600, decided_by="telegram:@ada (42)")
    assert store.decided_by(approval.id) == "telegram:@ada (42)"


@pytest.mark.anyio
async def test_concurrent_audit_rows_are_each_written_before_their_call_returns(tmp_path: Path) -> None:
    """Rows of calls finishing together share a transaction; none is lost, none returns unwritten."""
    import anyio

    store = PolicyStore(tmp_path / "p.db")
    written_on_return: list[bool] = []

    async def one_call(index: int) -> None:
        await store.append_audit(
            AuditRow(float(index), "http", "laptop", "x.y", {"i": index}, "low", "ran", None, 1, "ok")
        )
        written_on_return.append(any(row.args["i"] == index for row in store.tail(100)))

    async with anyio.create_task_group() as group:
        for index in range(40):
            group.start_soon(one_call, index)
    assert written_on_return == [True] * 40
    assert sorted(row.args["i"] for row in PolicyStore(tmp_path / "p.db").tail(100)) == list(range(40))
