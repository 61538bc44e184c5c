"""State that replicas share besides approvals: the Telegram polling lease and ledger, in SQLite
and in PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from mcp_tools.approvals.telegram import Ledger, SentMessage
from mcp_tools.policy.store import StateStore

OpenStore = Callable[..., StateStore]


def ledgers(open_store: OpenStore, tmp_path: Path, count: int = 2) -> list[Ledger]:
    """The ledgers of `count` replicas over one state."""
    return [Ledger.for_state(open_store(), tmp_path / "state") for _ in range(count)]


def test_one_replica_at_a_time_holds_the_polling_lease(open_store: OpenStore, tmp_path: Path) -> None:
    first, second = ledgers(open_store, tmp_path)
    assert first.take_lease("a", 60)
    assert not second.take_lease("b", 60)
    assert first.take_lease("a", 60)  # the holder renews
    first.release_lease("a")
    assert second.take_lease("b", 60)


def test_a_replica_that_dies_loses_the_lease_when_it_expires(open_store: OpenStore, tmp_path: Path) -> None:
    dead, alive = ledgers(open_store, tmp_path)
    assert dead.take_lease("dead", 0.3)  # then killed: it never releases
    assert not alive.take_lease("alive", 60)
    time.sleep(0.4)  # the lease runs out by the clock; there is no event to wait on
    assert alive.take_lease("alive", 60)
    assert not dead.take_lease("dead", 60)


def test_racing_replicas_get_the_lease_once(open_store: OpenStore, tmp_path: Path) -> None:
    replicas = ledgers(open_store, tmp_path, count=6)
    barrier = threading.Barrier(len(replicas))
    winners: list[int] = []

    def race(index: int) -> None:
        barrier.wait()
        if replicas[index].take_lease(f"r{index}", 60):
            winners.append(index)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(replicas))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1


def test_a_message_sent_by_one_replica_is_settled_once_by_any(open_store: OpenStore, tmp_path: Path) -> None:
    sender, other = ledgers(open_store, tmp_path)
    message = SentMessage("apr-x", -1001234567890, 7, "Approve?", time.time() + 600)  # a supergroup's chat id
    sender.record("nonce-1", message)
    assert other.knows("apr-x") and other.by_nonce("nonce-1") == message
    assert other.by_nonce("nonce-2") is None
    assert [approval for approval, _ in other.open_approvals()] == ["apr-x"]
    assert other.claim("apr-x") is not None
    assert sender.claim("apr-x") is None
    assert other.open_approvals() == []
    sender.set_offset(41)
    other.set_offset(42)
    assert sender.offset() == 42


def test_a_ledger_file_from_an_older_release_keeps_its_offset(tmp_path: Path) -> None:
    import sqlite3

    from mcp_tools.policy.store import PolicyStore

    path = tmp_path / "state" / "telegram.sqlite3"
    path.parent.mkdir()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO state VALUES ('offset', '17')")
    assert Ledger.for_state(PolicyStore(tmp_path / "state" / "policy.sqlite3"), tmp_path / "state").offset() == 17
