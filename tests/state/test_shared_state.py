"""State that replicas share besides approvals: the Telegram polling lease and ledger, in SQLite
and in PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_tools.approvals.telegram import Ledger, SentMessage
from mcp_tools.state.store import StateStore

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
    now = [1_795_000_000.0]
    dead, alive = (Ledger.for_state(open_store(clock=lambda: now[0]), tmp_path / "state") for _ in range(2))
    assert dead.take_lease("dead", 0.3)  # then killed: it never releases
    assert not alive.take_lease("alive", 60)
    now[0] += 0.29
    assert not alive.take_lease("alive", 60)  # not yet
    now[0] += 0.02  # the lease has run out
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

    from mcp_tools.state.sqlite import PolicyStore

    path = tmp_path / "state" / "telegram.sqlite3"
    path.parent.mkdir()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO state VALUES ('offset', '17')")
    assert Ledger.for_state(PolicyStore(tmp_path / "state" / "policy.sqlite3"), tmp_path / "state").offset() == 17


def test_a_page_sign_in_on_one_replica_counts_on_every_replica(open_store: OpenStore) -> None:
    from mcp_tools.approvals.page import Sessions

    here, there = Sessions(3600, open_store()), Sessions(3600, open_store())
    cookie, session = here.start()
    found = there.find(cookie)
    assert found is not None and found.csrf == session.csrf
    assert there.find(cookie + "x") is None and there.find(None) is None
    there.end(cookie)
    assert here.find(cookie) is None


def test_a_page_session_ends_when_it_expires(open_store: OpenStore) -> None:
    from mcp_tools.approvals.page import Sessions

    now = [1000.0]
    sessions = Sessions(60, open_store(clock=lambda: now[0]))
    cookie, _ = sessions.start()
    now[0] += 59
    assert sessions.find(cookie) is not None
    now[0] += 2
    assert sessions.find(cookie) is None


def test_the_stored_sessions_hold_neither_the_cookie_nor_the_csrf_token(open_store: OpenStore) -> None:
    """ATTACK: someone who reads the state database cannot sign in as a browser or forge its forms."""
    from mcp_tools.approvals.page import Sessions

    store = open_store()
    cookie, session = Sessions(3600, store).start()
    with store.reading() as db:
        stored = repr(db.execute("SELECT * FROM page_sessions").fetchall())
    assert cookie not in stored and session.csrf not in stored


def test_a_principals_enabled_tools_grow_and_are_its_own(open_store: OpenStore) -> None:
    here, there = open_store(), open_store()
    assert here.enabled_tools("laptop") == set()
    here.enable_tools("laptop", {"files.mkdir", "inbox.search"})
    there.enable_tools("laptop", {"inbox.search", "files.move"})
    assert here.enabled_tools("laptop") == {"files.mkdir", "inbox.search", "files.move"}
    assert there.enabled_tools("phone") == set()


@pytest.mark.anyio
async def test_toolsets_enabled_through_one_replica_are_served_by_the_other(postgres_url: str, tmp_path: Path) -> None:
    from mcp import Client

    from mcp_tools.composition.app import build_app
    from mcp_tools.transports.mcp_server import build_server
    from tests.harness import make_config, ok

    settings = {
        "server": {"discovery": "dynamic", "tools": ["files.core"]},
        "state": {"url": postgres_url, "secret": "x" * 32},
    }
    first = build_app(make_config(tmp_path / "a", settings))
    second = build_app(make_config(tmp_path / "b", settings))
    try:
        async with (
            first.running(),
            second.running(),
            Client(build_server(first, "test"), mode="2026-07-28") as via_first,
            Client(build_server(second, "test"), mode="2026-07-28") as via_second,
        ):
            assert "files_mkdir" not in {tool.name for tool in (await via_second.list_tools()).tools}
            ok(await via_first.call_tool("toolsets_enable", {"toolsets": ["files"]}))
            assert "files_mkdir" in {tool.name for tool in (await via_second.list_tools()).tools}
    finally:
        first.store.close()
        second.store.close()
