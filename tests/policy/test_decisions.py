"""The decision core: one answer wins, everyone who follows an approval learns of it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import anyio
import pytest

from mcp_tools.policy.decisions import Decisions
from mcp_tools.state.store import StateStore

OpenStore = Callable[..., StateStore]

pytestmark = pytest.mark.anyio


def pending(store: StateStore, tool: str = "demo.erase", digest: str = "d1", ttl: float = 600):
    return store.request_approval(
        tool=tool,
        args_sha256=digest,
        args_display={"target": "t"},
        summary="Erase 't'",
        risk="high",
        principal="local",
        ttl_seconds=ttl,
    )


def test_a_decision_records_who_made_it_and_cannot_be_made_twice(open_store: OpenStore) -> None:
    store = open_store()
    decisions = Decisions(store, ttl_seconds=600)
    approval = pending(store)
    assert decisions.decide(approval.id, True, "page").status == "approved"
    assert store.approval_meta([approval.id])[approval.id]["decided_by"] == "page"
    with pytest.raises(ValueError, match="approved"):
        decisions.decide(approval.id, False, "telegram:@mallory")
    assert store.get_approval(approval.id).status == "approved"  # type: ignore[union-attr]
    with pytest.raises(LookupError):
        decisions.decide("apr-doesnotexist", True, "cli")


def test_exactly_one_of_many_racing_answers_wins_across_connections(open_store: OpenStore) -> None:
    """Separate connections stand for separate processes: the page, the bot, the CLI."""
    approval = pending(open_store())
    racers = [Decisions(open_store(), ttl_seconds=600) for _ in range(3)]
    barrier = threading.Barrier(12)
    wins: list[tuple[str, bool]] = []
    losses: list[str] = []

    def answer(index: int) -> None:
        decisions = racers[index % 3]
        approve = index % 2 == 0
        barrier.wait()
        try:
            decisions.decide(approval.id, approve, f"racer-{index}")
            wins.append((f"racer-{index}", approve))
        except ValueError as exc:
            losses.append(str(exc))

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1 and len(losses) == 11
    winner, approved = wins[0]
    final = open_store()
    assert final.get_approval(approval.id).status == ("approved" if approved else "denied")  # type: ignore[union-attr]
    assert final.approval_meta([approval.id])[approval.id]["decided_by"] == winner


def test_withdrawn_approvals_can_be_neither_decided_nor_used(open_store: OpenStore) -> None:
    store = open_store()
    decisions = Decisions(store, ttl_seconds=600)
    approval = pending(store)
    assert decisions.withdraw(approval.id) is True
    assert decisions.withdraw(approval.id) is False
    with pytest.raises(ValueError, match="withdrawn"):
        decisions.decide(approval.id, True, "page")
    assert store.consume_approval_id(approval.id) is None
    assert store.list_approvals() == []


def test_consuming_by_id_is_single_use(open_store: OpenStore) -> None:
    store = open_store()
    approval = pending(store)
    assert store.consume_approval_id(approval.id) is None  # still pending
    Decisions(store, 600).decide(approval.id, True, "cli")
    assert store.consume_approval_id(approval.id).status == "consumed"  # type: ignore[union-attr]
    assert store.consume_approval_id(approval.id) is None


async def test_followers_see_changes_made_by_another_process(open_store: OpenStore) -> None:
    decisions = Decisions(open_store(), ttl_seconds=600, poll_interval=0.05)
    other = open_store()  # what `mcp-tools approvals approve` opens
    seen: list[tuple[str, str]] = []

    async def follow() -> None:
        async for event in decisions.follow():
            seen.append((event.approval_id, event.status))
            if event.status == "consumed":
                return

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            await anyio.sleep(0.1)
            approval = pending(other)
            other.decide(approval.id, True, 600, decided_by="cli")
            other.consume_approval_id(approval.id)
    assert seen == [(approval.id, "pending"), (approval.id, "approved"), (approval.id, "consumed")]


async def test_wait_returns_the_verdict_or_none_when_time_runs_out(open_store: OpenStore) -> None:
    store = open_store()
    decisions = Decisions(store, ttl_seconds=600, poll_interval=0.05)
    ticks: list[float] = []

    async def tick(elapsed: float) -> None:
        ticks.append(elapsed)

    approval = pending(store, digest="a")
    started = time.monotonic()
    assert await decisions.wait(approval.id, 0.5, tick, tick_interval=0.1) is None
    assert 0.45 <= time.monotonic() - started < 3
    # ticks report progress in order while waiting; how many fit in 0.5 s depends on the machine's load
    assert ticks and ticks == sorted(ticks) and all(0 <= elapsed <= 0.5 + 0.1 for elapsed in ticks)

    denied = pending(store, digest="b")

    async def deny_later() -> None:
        await anyio.sleep(0.2)
        open_store().decide(denied.id, False, 600, decided_by="cli")

    async with anyio.create_task_group() as group:
        group.start_soon(deny_later)
        assert await decisions.wait(denied.id, 10) == "denied"

    expiring = pending(store, digest="c", ttl=0.3)
    assert await decisions.wait(expiring.id, 10) == "expired"
