"""Each MCP session over HTTP answers to the principal that opened it, and to no one else.

A 2025-era client opens a session with `initialize` and names it in `Mcp-Session-Id` on every
later request. The SDK routes a request by that header alone, so without this any token could
post into another token's session: answer the person's pending confirmation form there (and
run what it guards, audited as confirmed by elicitation), cancel its calls, read its event
stream or end it. Here the principal (and whether its forms reach a person) is recorded when
the SDK hands out a session id, and a request naming that session with any other credential is
answered exactly as an unknown session is: 404.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_tools.transports.mcp_server import FORMS_SCOPE_KEY, PRINCIPAL_SCOPE_KEY, REACH_SCOPE_KEY

SESSION_HEADER = b"mcp-session-id"
logger = logging.getLogger("mcp_tools.http")


Owner = tuple[str, bool, frozenset[str] | None]


def owner_of(scope: Scope) -> Owner:
    """Who a request comes from, as a session remembers it: the principal, whether its forms reach
    a person, and an OAuth sign-in's scopes (None for a static token, so that no static token's
    name can pass for a sign-in's `subject@issuer`)."""
    reach = scope.get(REACH_SCOPE_KEY)
    scopes = getattr(reach, "scopes", None)
    return str(scope.get(PRINCIPAL_SCOPE_KEY, "")), scope.get(FORMS_SCOPE_KEY) is True, scopes


class SessionOwners:
    """In front of one endpoint's session manager: every request in a session comes from its owner."""

    def __init__(self, app: ASGIApp, manager: Any = None) -> None:
        self.app = app
        self.manager = manager  # the SDK's StreamableHTTPSessionManager: which sessions still live
        self.owners: dict[str, Owner] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        owner = owner_of(scope)
        named = [value for name, value in scope.get("headers", []) if name.lower() == SESSION_HEADER]
        if named:
            session = named[0].decode("latin-1")
            if len(named) > 1 or self.owners.get(session) != owner:
                if session in self.owners:
                    logger.warning("refused a request for another principal's session (%s)", owner[0][:100])
                await not_found(send)
                return
            await self.app(scope, receive, send)
            return

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == SESSION_HEADER:
                        self.remember(value.decode("latin-1"), owner)
            await send(message)

        await self.app(scope, receive, recording)

    def remember(self, session: str, owner: Owner) -> None:
        self.owners[session] = owner
        live = getattr(self.manager, "_server_instances", None)
        if isinstance(live, dict) and len(self.owners) > 2 * len(live) + 64:  # ended sessions: forgotten
            self.owners = {key: value for key, value in self.owners.items() if key in live or key == session}


async def not_found(send: Send) -> None:
    """The SDK's own answer to a session it does not know."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}, separators=(",", ":")
    )
    encoded = body.encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(encoded)).encode())]
    await send({"type": "http.response.start", "status": 404, "headers": headers})
    await send({"type": "http.response.body", "body": encoded})
