"""The resource handlers one MCP server registers: the namespaces' documents beside the approval card."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from mcp_tools.composition.app import App
from mcp_tools.policy.gate import BoundTool, Caller, CallOutcome
from mcp_tools.resources.face import Documents, is_modern
from mcp_tools.resources.uris import BadAddress, address_of
from mcp_tools.resources.watch import MAX_PER_CONNECTION, Subscriptions

Context = ServerRequestContext[Any, Any]


class ResourceHandlers:
    """`card` is the approval card (its `resource()` and `read()`), listed to `carded` clients only;
    `caller_of` builds the gate's `Caller` for a request, as tools/call does."""

    def __init__(
        self,
        app: App,
        namespace: str | None,
        caller_of: Callable[[Context], Caller],
        card: Any,
        carded: Callable[[Context], bool],
    ) -> None:
        self.documents = Documents(app, namespace)
        self.caller_of = caller_of
        self.card = card
        self.carded = carded
        self.subscriptions = Subscriptions(self.documents.version)

    async def list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        try:
            listed, next_cursor = await self.documents.page(cursor, self.caller_of(ctx).reaches)
        except BadAddress as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        if cursor is None and self.carded(ctx):
            listed.insert(0, self.card.resource())
        return types.ListResourcesResult(resources=listed, next_cursor=next_cursor)

    async def list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        if params is not None and params.cursor is not None:
            raise MCPError(INVALID_PARAMS, "invalid cursor: the templates come in one page; list again without one")
        return types.ListResourceTemplatesResult(
            resource_templates=self.documents.templates(self.caller_of(ctx).reaches)
        )

    async def read_resource(self, ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if params.uri == self.card.uri:
            result: types.ReadResourceResult = self.card.read()
            return result
        return await self.documents.read(params.uri, self.caller_of(ctx), is_modern(ctx))

    async def subscribe(self, ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        try:
            address_of(params.uri)
        except BadAddress as exc:
            raise MCPError(INVALID_PARAMS, f"invalid resource URI: {exc}", {"uri": params.uri[:200]}) from None
        if not await self.admits(ctx, params.uri):
            raise MCPError(INVALID_PARAMS, f"there is no resource {params.uri[:200]} to subscribe to")
        connection = getattr(ctx.session, "_connection", ctx.session)
        if not await self.subscriptions.subscribe(connection, ctx.session, params.uri):
            raise MCPError(INVALID_PARAMS, f"at most {MAX_PER_CONNECTION} subscriptions a connection; unsubscribe one")
        return types.EmptyResult()

    async def admits(self, ctx: Context, uri: str) -> bool:
        """Whether the caller may subscribe to a document: it is served to them and exists (contained as a read is)."""
        try:
            address = address_of(uri)
        except BadAddress:
            return False
        if self.documents.source_of(address, self.caller_of(ctx).reaches) is None:
            return False
        return await self.documents.version(uri) is not None

    def listen(self, bus: Callable[[str], Any]) -> Any:
        """The `subscriptions/listen` handler (2026-07-28); `bus(principal)` carries its tool list changes."""
        from mcp_tools.resources.listen import Listen

        return Listen(self.subscriptions, self.admits, bus, lambda ctx: self.caller_of(ctx).principal)

    async def unsubscribe(self, ctx: Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self.subscriptions.unsubscribe(getattr(ctx.session, "_connection", ctx.session), params.uri)
        return types.EmptyResult()

    @asynccontextmanager
    async def lifespan(self, server: Any) -> AsyncIterator[dict[str, Any]]:
        async with self.subscriptions.running() as state:
            yield state

    def linked(
        self,
        result: types.CallToolResult,
        tool: BoundTool | None,
        arguments: dict[str, Any],
        outcome: CallOutcome,
        ctx: Context,
    ) -> types.CallToolResult:
        """A result that saved a file into a store carries a `resource_link` to it (never its bytes)."""
        if tool is None or outcome.is_error or not saves_into_a_store(tool):
            return result
        link = self.documents.link(tool, arguments, outcome, self.caller_of(ctx).reaches)
        if link is None:
            return result
        return result.model_copy(update={"content": [*result.content, link]})


def saves_into_a_store(tool: BoundTool) -> bool:
    """Whether the tool can save a file through another namespace's write tool (`reaches`)."""
    return any(target.endswith(".write") for target in tool.spec.reaches.values())
