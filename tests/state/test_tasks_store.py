"""The tasks table on both engines: a task belongs to its principal, expires after its ttl, is run
by one runner at a time, and ends once (a cancelled task stays cancelled)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from mcp_tools.state import derive_key
from mcp_tools.state.store import StateStore
from mcp_tools.state.tasks import TaskStore


def make(tasks: TaskStore, principal: str = "ada", ttl_ms: int = 60_000, owner: str = "one", **extra: Any) -> str:
    row = tasks.create(
        principal=principal,
        endpoint="",
        transport="http",
        client=None,
        tool="demo_erase",
        arguments={"target": "x", "api_token": "s3cret-value"},
        ttl_ms=ttl_ms,
        owner=owner,
        lease_seconds=30,
        message="started",
        **extra,
    )
    return row.id


def test_a_task_is_its_principals_alone_until_its_ttl(open_store: Callable[..., StateStore]) -> None:
    now = [1_000.0]
    tasks = TaskStore(open_store(clock=lambda: now[0]))
    task_id = make(tasks)
    assert tasks.get(task_id, "ada") is not None
    assert tasks.get(task_id, "bob") is None  # another principal's id is unknown
    assert tasks.cancel(task_id, "bob", "no") is None
    assert tasks.page("bob", None, 10) == ([], None)
    with pytest.raises(ValueError):
        tasks.page("bob", task_id, 10)  # not bob's cursor either
    now[0] += 61
    assert tasks.get(task_id, "ada") is None
    assert tasks.purge() == 1 and tasks.row(task_id) is None


def test_a_task_ends_once_and_a_cancelled_task_stays_cancelled(open_store: Callable[..., StateStore]) -> None:
    tasks = TaskStore(open_store())
    task_id = make(tasks)
    assert tasks.waiting(task_id, "apr-1", "Erase?", "waiting")
    cancelled = tasks.cancel(task_id, "ada", "by request")
    assert cancelled is not None and cancelled.status == "cancelled" and cancelled.approval_id == "apr-1"
    assert not tasks.finish(task_id, {"content": []}, False, "done")
    assert tasks.cancel(task_id, "ada", "again") is None
    row = tasks.get(task_id, "ada")
    assert row is not None and row.status == "cancelled" and row.result is None

    other = make(tasks)
    assert tasks.finish(other, {"content": [], "isError": True}, True, "declined")
    done = tasks.get(other, "ada")
    assert done is not None and done.status == "completed" and done.is_error and done.terminal
    assert not tasks.fail(other, {"code": -32603}, "late")


def test_one_runner_at_a_time_and_orphans_are_taken_over(open_store: Callable[..., StateStore]) -> None:
    now = [1_000.0]
    first, second = TaskStore(open_store(clock=lambda: now[0])), TaskStore(open_store(clock=lambda: now[0]))
    task_id = make(first, owner="one")
    assert second.claim(task_id, "two", 30) is None  # its runner holds the lease
    assert second.orphans("") == []
    now[0] += 31  # the runner's process stopped renewing
    assert second.orphans("") == [task_id]
    assert second.claim(task_id, "two", 30) is not None
    assert first.claim(task_id, "one", 30) is None
    second.release("two")  # a clean stop hands it on at once
    assert first.claim(task_id, "one", 30) is not None


def test_pages_follow_the_cursor(open_store: Callable[..., StateStore]) -> None:
    now = [1_000.0]
    tasks = TaskStore(open_store(clock=lambda: now[0]))
    made = []
    for _ in range(5):
        now[0] += 1
        made.append(make(tasks))
    seen, cursor = tasks.page("ada", None, 2)
    listed = [row.id for row in seen]
    while cursor is not None:
        seen, cursor = tasks.page("ada", cursor, 2)
        listed += [row.id for row in seen]
    assert listed == made


def test_arguments_are_sealed_under_the_state_secret(open_store: Callable[..., StateStore]) -> None:
    key = derive_key("a-shared-secret-of-enough-length-0123456789", "tasks")
    tasks = TaskStore(open_store(), key)
    task_id = make(tasks)
    row = tasks.row(task_id)
    assert row is not None and "s3cret-value" not in row.arguments and "target" not in row.arguments
    assert tasks.open_arguments(row) == {"target": "x", "api_token": "s3cret-value"}
    with pytest.raises(ValueError):
        TaskStore(tasks.state, derive_key("another-secret-entirely-0123456789abcdef", "tasks")).open_arguments(row)
    assert json.loads(row.arguments)["format"] == "mcp-tools-sealed-v1"
