"""`resources/subscribe` (and, on 2026-07-28, `subscriptions/listen`: `mcp_tools.resources.listen`):
a subscribed document is looked at every second while anyone is subscribed, and each connection
(or listen stream) subscribed to it gets `notifications/resources/updated` when it changes
(written through a tool, or by anything else), disappears or appears.

Only documents the caller could read are watched (the subscribe request is checked like a
read, without reading); a connection holds at most `MAX_PER_CONNECTION` subscriptions.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types

INTERVAL_SECONDS = 1.0
MAX_PER_CONNECTION = 64
logger = logging.getLogger("mcp_tools")


class Subscriptions:
    """Who is subscribed to what, and the loop that tells them."""

    def __init__(self, version: Callable[[str], Awaitable[str | None]], interval: float = INTERVAL_SECONDS) -> None:
        self.version = version
        self.interval = interval
        # connection -> (a session to notify through, its URIs)
        self.by_connection: weakref.WeakKeyDictionary[Any, tuple[Any, set[str]]] = weakref.WeakKeyDictionary()
        self.seen: dict[str, str | None] = {}
        self.wake: anyio.Event | None = None  # made in the running loop

    async def subscribe(self, connection: Any, session: Any, uri: str) -> bool:
        """False when the connection holds as many as it may."""
        _, uris = self.by_connection.setdefault(connection, (session, set()))
        if uri not in uris and len(uris) >= MAX_PER_CONNECTION:
            return False
        if uri not in self.seen:
            self.seen[uri] = await self.version(uri)
        uris.add(uri)
        if self.wake is not None:
            self.wake.set()
        return True

    def unsubscribe(self, connection: Any, uri: str) -> None:
        entry = self.by_connection.get(connection)
        if entry is not None:
            entry[1].discard(uri)

    def forget(self, connection: Any) -> None:
        """Everything a connection (a 2026-07-28 listen stream) subscribed to, once it ends."""
        self.by_connection.pop(connection, None)

    def watched(self) -> set[str]:
        return {uri for _, uris in list(self.by_connection.values()) for uri in uris}

    async def look(self) -> None:
        """One round: every watched document's version against the last seen."""
        watched = self.watched()
        for uri in [uri for uri in self.seen if uri not in watched]:
            del self.seen[uri]
        for uri in watched:
            try:
                current = await self.version(uri)
            except Exception:  # a backend away for a moment: look again next round
                logger.warning("could not look at a subscribed resource", exc_info=True)
                continue
            if self.seen.get(uri, current) != current:
                await self.tell(uri)
            self.seen[uri] = current

    async def tell(self, uri: str) -> None:
        notification = types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri))
        for connection, (session, uris) in list(self.by_connection.items()):
            if uri not in uris:
                continue
            try:
                await session.send_notification(notification)
            except Exception:  # the client went away: forget it
                self.by_connection.pop(connection, None)

    async def run(self) -> None:
        while True:
            if not self.watched():
                self.wake = anyio.Event()
                await self.wake.wait()
                self.wake = None
            await anyio.sleep(self.interval)
            await self.look()

    @contextlib.asynccontextmanager
    async def running(self, _server: Any = None) -> AsyncIterator[dict[str, Any]]:
        """For the server's lifespan: the watch runs while the server serves."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.run)
            try:
                yield {}
            finally:
                group.cancel_scope.cancel()
