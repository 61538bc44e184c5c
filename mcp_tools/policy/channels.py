"""Out-of-band channels: how a pending approval reaches the person when the client cannot ask.

A channel announces a pending approval (a Telegram message with buttons, a hook that pipes
JSON to ntfy, the approvals page that shows it anyway) and may run background work while the
server runs (polling for button presses). Answers never come back through this interface:
a channel that takes answers calls `Decisions.decide`, like the page and the CLI.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import anyio

from mcp_tools.policy.decisions import Decisions
from mcp_tools.policy.display import asked_by, visible
from mcp_tools.state.store import Approval, iso_time

logger = logging.getLogger("mcp_tools.policy")
ANNOUNCE_TIMEOUT_SECONDS = 15.0


@dataclass(frozen=True)
class ApprovalNotice:
    """What every channel may say about a pending approval: never more than the confirmation shows.

    `summary` and `message` are already made visible (`mcp_tools.policy.display`): a channel
    shows them as they are and never the raw arguments as text.
    """

    id: str
    tool: str
    summary: str
    message: str
    risk: str
    arguments: dict[str, Any]
    principal: str
    transport: str
    created: float
    expires: float
    link: str | None = None
    client: str | None = None

    @property
    def asked_by(self) -> str:
        return asked_by(self.principal, self.transport, self.client)

    @classmethod
    def of(
        cls, approval: Approval, message: str, transport: str, link: str | None, client: str | None = None
    ) -> ApprovalNotice:
        return cls(
            id=approval.id,
            tool=approval.tool,
            summary=visible(approval.summary),
            message=message,
            risk=approval.risk,
            arguments=approval.args_display,
            principal=approval.principal,
            transport=transport,
            created=approval.created,
            expires=approval.expires,
            link=link,
            client=client,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "event": "approval_requested",
            "id": self.id,
            "tool": self.tool,
            "summary": self.summary,
            "message": self.message,
            "risk": self.risk,
            "arguments": self.arguments,
            "principal": self.principal,
            "transport": self.transport,
            "client": self.client,
            "asked_by": self.asked_by,
            "created": iso_time(self.created),
            "expires": iso_time(self.expires),
            "link": self.link,
            "approve_command": approve_command(self.id),
        }


class ApprovalChannel(Protocol):
    """One way to reach the person."""

    name: str

    async def announce(self, notice: ApprovalNotice) -> None: ...

    def where(self, link: str | None) -> str | None:
        """Where the person answers through this channel (`in Telegram`); None if they cannot."""
        ...

    def running(self, decisions: Decisions) -> AbstractAsyncContextManager[None]: ...


@runtime_checkable
class MessageChannel(Protocol):
    """A channel that can also deliver a plain message (Telegram): what namespaces announce news through."""

    name: str

    async def say(self, text: str) -> None: ...


class OutOfBand:
    """The configured channels, and how long a call that cannot ask waits for their answer."""

    def __init__(
        self,
        decisions: Decisions,
        channels: Sequence[ApprovalChannel],
        *,
        wait_seconds: float,
        progress_interval: float,
        page_url: str | None = None,
    ) -> None:
        self.decisions = decisions
        self.channels = list(channels)
        self.wait_seconds = wait_seconds
        self.progress_interval = progress_interval
        self.page_url = page_url.rstrip("/") if page_url else None
        self._announced: set[str] = set()

    @property
    def reaches_person(self) -> bool:
        """Whether a call may wait: someone will see the approval without opening a terminal."""
        return bool(self.channels)

    def announcers(self) -> dict[str, Callable[[str], Awaitable[None]]]:
        """Channels that can also deliver a plain message (`say`), for namespaces that announce news."""
        return {channel.name: channel.say for channel in self.channels if isinstance(channel, MessageChannel)}

    def places(self, approval_id: str) -> str | None:
        """Where the person can answer, in words for the model: `in Telegram or on the approvals page (link)`."""
        link = self.link(approval_id)
        places = [place for channel in self.channels if (place := channel.where(link))]
        if link and not any(channel.name == "page" for channel in self.channels):
            places.append(PageChannel().where(link))  # served, though calls do not wait for it
        return " or ".join(places) or None

    def link(self, approval_id: str) -> str | None:
        return f"{self.page_url}/a/{approval_id}" if self.page_url else None

    async def announce(self, approval: Approval, message: str, transport: str, client: str | None = None) -> None:
        """Tell every channel, once per approval; a failing channel is logged and the others still go."""
        if approval.id in self._announced:
            return
        self._announced.add(approval.id)
        self.decisions.changed()
        notice = ApprovalNotice.of(approval, message, transport, self.link(approval.id), client)

        async def one(channel: ApprovalChannel) -> None:
            try:
                with anyio.fail_after(ANNOUNCE_TIMEOUT_SECONDS):
                    await channel.announce(notice)
            except Exception as exc:  # one channel's outage must not stop the others
                logger.warning("could not announce %s on %s: %s", approval.id, channel.name, type(exc).__name__)

        async with anyio.create_task_group() as group:
            for channel in self.channels:
                group.start_soon(one, channel)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[OutOfBand]:
        async with AsyncExitStack() as stack:
            for channel in self.channels:
                await stack.enter_async_context(channel.running(self.decisions))
            yield self


class PageChannel:
    """The approvals page: it lists pending approvals by itself, so announcing is nothing to do."""

    name = "page"

    async def announce(self, notice: ApprovalNotice) -> None:
        return None

    def where(self, link: str | None) -> str:
        return f"on the approvals page ({link})" if link else "on the approvals page"

    @asynccontextmanager
    async def running(self, decisions: Decisions) -> AsyncIterator[None]:
        yield


def approve_command(approval_id: str) -> str:
    """The shell command that approves it, as it works from where this server runs."""
    from mcp_tools.util.commands import mcp_tools

    return mcp_tools("approvals", "approve", approval_id)
