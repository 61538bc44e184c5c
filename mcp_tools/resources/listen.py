"""`subscriptions/listen` (2026-07-28): how a client of that version subscribes to documents.

2026-07-28 has no `resources/subscribe`: a client opens a stream with `subscriptions/listen`,
naming the documents it wants `notifications/resources/updated` for (`resourceSubscriptions`)
and the list changes it wants. Each stream is its own subscription: the acknowledgement comes
first and says what this server agreed to (the documents the caller could read, checked as
`resources/subscribe` checks them on 2025-11-25, at most `MAX_PER_CONNECTION`; the tool list's
changes; nothing else), every notification on it carries its id, and it ends when the client
cancels it or goes away. The watch (`mcp_tools.resources.watch`) looks at its documents as it
does for a 2025-11-25 connection's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ServerEvent, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_REQUEST

from mcp_tools.resources.watch import MAX_PER_CONNECTION, Subscriptions

Context = ServerRequestContext[Any, Any]
MAX_STREAMS = 16  # a principal's listen streams open at once


class Stream:
    """One listen stream's events: the principal's (the tool list changed) and its own documents'
    updates. To the watch it is the connection and the session it tells."""

    def __init__(self, shared: SubscriptionBus) -> None:
        self.shared = shared
        self.listeners: list[Callable[[ServerEvent], None]] = []

    async def publish(self, event: ServerEvent) -> None:
        for listener in list(self.listeners):
            listener(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        leave_shared = self.shared.subscribe(listener)
        self.listeners.append(listener)

        def unsubscribe() -> None:
            leave_shared()
            if listener in self.listeners:
                self.listeners.remove(listener)

        return unsubscribe

    async def send_notification(self, notification: types.ResourceUpdatedNotification) -> None:
        """What the watch sends a 2025-11-25 session, as an event on this stream."""
        await self.publish(ResourceUpdated(uri=notification.params.uri))


class Listen:
    """The `subscriptions/listen` handler of one MCP server.

    `admits(ctx, uri)` says whether the caller could read the document (it exists and is served
    to them); `bus(principal)` is where a principal's tool list changes are published;
    `principal_of(ctx)` who calls.
    """

    def __init__(
        self,
        subscriptions: Subscriptions,
        admits: Callable[[Context, str], Awaitable[bool]],
        bus: Callable[[str], SubscriptionBus],
        principal_of: Callable[[Context], str],
    ) -> None:
        self.subscriptions = subscriptions
        self.admits = admits
        self.bus = bus
        self.principal_of = principal_of
        self.open: dict[str, int] = {}

    async def __call__(
        self, ctx: Context, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        principal = self.principal_of(ctx)
        if self.open.get(principal, 0) >= MAX_STREAMS:
            raise MCPError(
                INVALID_REQUEST, f"at most {MAX_STREAMS} subscriptions/listen streams at once; cancel one first"
            )
        wanted = params.notifications
        documents: list[str] = []
        for uri in wanted.resource_subscriptions or []:
            if len(documents) >= MAX_PER_CONNECTION:
                break
            if uri not in documents and await self.admits(ctx, uri):
                documents.append(uri)
        honored = types.SubscriptionFilter(
            tools_list_changed=True if wanted.tools_list_changed else None,
            resource_subscriptions=documents or None,
        )
        stream = Stream(self.bus(principal))
        self.open[principal] = self.open.get(principal, 0) + 1
        try:
            for uri in documents:
                await self.subscriptions.subscribe(stream, stream, uri)
            handler = ListenHandler(stream, max_subscriptions=1)
            result: types.SubscriptionsListenResult = await handler(
                ctx, params.model_copy(update={"notifications": honored})
            )
            return result
        finally:
            self.subscriptions.forget(stream)
            self.open[principal] -= 1
            if not self.open[principal]:
                del self.open[principal]
