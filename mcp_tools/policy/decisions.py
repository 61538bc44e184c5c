"""The one place an approval is decided, and the events everyone who waits on one follows.

Whoever answers (the CLI, the approvals page, Telegram) goes through `Decisions.decide`, which
is one transaction in the state store: exactly one answer wins, however many race. Every change
of an approval's status is an event in the store (written by triggers), so a waiting call, the
page and the Telegram bot see decisions made in this process at once (they are woken), those
other replicas make at once too where the store can tell (PostgreSQL's LISTEN/NOTIFY), and any
other, such as `mcp-tools approvals approve` on SQLite, within one poll interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from mcp_tools.state.store import Approval, StateStore
from mcp_tools.util import metrics

logger = logging.getLogger("mcp_tools.policy")

Verdict = Literal["approved", "denied", "withdrawn", "expired", "consumed"]


@dataclass(frozen=True)
class ApprovalEvent:
    """One change of one approval: `status` is what it became."""

    seq: int
    approval_id: str
    status: str


class Decisions:
    """Decides approvals, and tells everyone in this process who follows them."""

    def __init__(self, store: StateStore, ttl_seconds: float, poll_interval: float = 0.5) -> None:
        self.store = store
        self.ttl_seconds = ttl_seconds
        self.poll_interval = poll_interval
        self._waiters: dict[anyio.Event, Callable[[], None] | None] = {}
        self._listening = False  # started by the first wait: a command that never waits pays nothing

    def decide(self, approval_id: str, approve: bool, by: str) -> Approval:
        """The person's answer through any channel; raises LookupError or ValueError if it cannot count."""
        decided = self.store.decide(approval_id, approve, self.ttl_seconds, decided_by=by[:120])
        logger.info("approval %s %s by %s", approval_id, decided.status, by)
        metrics.current().approval(by.partition(":")[0], decided.status)
        self.changed()
        return decided

    def withdraw(self, approval_id: str) -> bool:
        withdrawn = self.store.withdraw_approval(approval_id)
        if withdrawn:
            self.changed()
        return withdrawn

    def changed(self) -> None:
        """Wake every follower in this process now instead of at its next poll."""
        waiters, self._waiters = self._waiters, {}
        for event in waiters:
            with contextlib.suppress(RuntimeError):  # from another loop or thread: its next poll sees it
                event.set()

    def changed_elsewhere(self) -> None:
        """Another process changed an approval (the store's notification thread calls this)."""
        waiters, self._waiters = self._waiters, {}
        for wake in waiters.values():
            if wake is not None:
                with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits any more
                    wake()

    async def wait_for_change(self, timeout: float) -> None:
        """Return when an approval changes here or (where the store tells) elsewhere, or after
        `timeout` (then the caller polls the store: the fallback when notifications are lost)."""
        if not self._listening:
            self._listening = True
            self.store.listen(self.changed_elsewhere)
        event = anyio.Event()
        self._waiters[event] = _threadsafe_setter(event)
        try:
            with anyio.move_on_after(timeout):
                await event.wait()
        finally:
            self._waiters.pop(event, None)

    async def follow(self, since: int | None = None) -> AsyncIterator[ApprovalEvent]:
        """Every event after `since` (default: from now on), for as long as the caller iterates."""
        cursor = self.store.last_event() if since is None else since
        while True:
            events = await anyio.to_thread.run_sync(self.store.events_since, cursor)
            for seq, approval_id, status in events:
                cursor = seq
                yield ApprovalEvent(seq, approval_id, status)
            if not events:
                await self.wait_for_change(self.poll_interval)

    async def wait(
        self,
        approval_id: str,
        timeout: float,
        tick: Callable[[float], Awaitable[None]] | None = None,
        tick_interval: float = 10.0,
    ) -> Verdict | None:
        """The approval's outcome once it has one; None when `timeout` runs out first.

        `tick(elapsed)` is called every `tick_interval` seconds while waiting, for progress
        notifications that keep the client from giving up on the call.
        """
        started = time.monotonic()
        next_tick = tick_interval
        deadline = started + timeout
        while True:
            approval = await anyio.to_thread.run_sync(self.store.get_approval, approval_id)
            if approval is None:
                return "withdrawn"
            status = approval.effective_status(self.store.clock())
            if status != "pending":
                return status
            now = time.monotonic()
            if now >= deadline:
                return None
            elapsed = now - started
            if tick is not None and elapsed >= next_tick:
                next_tick = elapsed + tick_interval
                try:
                    await tick(elapsed)
                except Exception:  # a client that cannot take progress still gets its answer
                    logger.debug("progress notification failed", exc_info=True)
            await self.wait_for_change(min(self.poll_interval, deadline - now, max(0.01, next_tick - elapsed)))


def _threadsafe_setter(event: anyio.Event) -> Callable[[], None] | None:
    """How another thread sets `event` in this event loop; None where only polling can tell."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None

    def set_event() -> None:
        loop.call_soon_threadsafe(event.set)

    return set_event


def describe_decider(channel: str, who: Any | None = None) -> str:
    """`telegram:@ada (42)`, `page`, `cli`: what the audit and the messages say answered."""
    return f"{channel}:{who}" if who else channel
