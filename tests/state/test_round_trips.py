"""What the PostgreSQL state costs a call, in exchanges with the database (counted, not timed):
an audit row is one, a call with no approved approval checks for one in one, and the check that
the database is up right after it answered is free."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from mcp_tools.state.postgres import PostgresStateStore
from mcp_tools.state.store import Approval, AuditRow


@contextmanager
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the waits of this thread that exchange something with the server."""
    counted = [0]
    wait = psycopg.Connection.wait
    here = threading.current_thread()

    def counting(self: Any, gen: Any, *args: Any, **kwargs: Any) -> Any:
        def watched() -> Any:
            answer, first = None, True
            while True:
                try:
                    step = gen.send(answer)
                except StopIteration as done:
                    return done.value
                if first and threading.current_thread() is here:
                    counted[0] += 1
                first = False
                answer = yield step

        return wait(self, watched(), *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "wait", counting)
    yield counted


def ask(store: PostgresStateStore, digit: str, origin: tuple[str, str | None] | None = None) -> Approval:
    return store.request_approval(
        tool="demo.erase",
        args_sha256=digit * 64,
        args_display={"target": "t"},
        summary="erase t",
        risk="high",
        principal="local",
        ttl_seconds=60,
        origin=origin,
    )


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStateStore]:
    opened = PostgresStateStore(postgres_url, pool_size=2)
    yield opened
    opened.close()


def test_a_low_calls_audit_row_is_one_round_trip(store: PostgresStateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    row = AuditRow(1.0, "stdio", "local", "demo.echo", {"text": "x"}, "low", "allowed", None, 0.1, "ok")
    store.record(row)  # the connection is open and its statement known
    with round_trips(monkeypatch) as counted:
        store.record(row)
    assert counted[0] == 1
    assert store.tail(1)[0].tool == "demo.echo"


def test_a_call_with_no_approved_approval_checks_in_one_round_trip_and_pings_free(
    store: PostgresStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.tail(1)  # a connection in use (one idle since the start is checked first)
    with round_trips(monkeypatch) as counted:
        assert store.consume_approval("demo.erase", "0" * 64, "local") is None
        store.ping()  # the database just answered
    assert counted[0] == 1


def test_using_an_approval_is_one_locked_statement(store: PostgresStateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = ask(store, "1")
    store.decide(asked.id, True, 60, decided_by="cli")
    with round_trips(monkeypatch) as counted:
        used = store.consume_approval("demo.erase", "1" * 64, "local")
    assert used is not None and used.status == "consumed" and used.id == asked.id
    assert counted[0] == 2  # the check; BEGIN, the lock, the use and COMMIT together
    assert store.consume_approval("demo.erase", "1" * 64, "local") is None  # once


def test_asking_with_where_the_call_came_from_is_one_round_trip(
    store: PostgresStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.tail(1)
    with round_trips(monkeypatch) as counted:
        asked = ask(store, "2", origin=("http", "agent"))
    assert counted[0] == 1  # BEGIN, the lock, the look for an open one, the new one, its origin, COMMIT
    assert store.approval_meta([asked.id])[asked.id]["transport"] == "http"
    assert store.approval_meta([asked.id])[asked.id]["client"] == "agent"


def test_deciding_is_one_round_trip_and_using_it_then_knows_who_answered(
    store: PostgresStateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = ask(store, "3")
    with round_trips(monkeypatch) as counted:
        store.decide(asked.id, True, 60, decided_by="page")
    assert counted[0] == 1  # BEGIN, the lock, the change, who decided and COMMIT together
    used = store.consume_approval("demo.erase", "3" * 64, "local")
    assert used is not None and used.decided_by == "page"
