"""The MCP face of the app: tools/list and tools/call on the SDK's low-level server.

This is the only module that speaks MCP types. It turns a request into a `Caller` (who, over
what, and how the person can be asked), hands it to the policy gate, and turns the gate's
outcome back into a `CallToolResult` or, on 2026-07-28 connections, an `InputRequiredResult`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary
from mcp_types.version import is_version_at_least

from mcp_tools import __version__
from mcp_tools.app import App, wire_name
from mcp_tools.policy.display import client_name
from mcp_tools.policy.gate import Answer, AskLater, BoundTool, Caller, CallOutcome, ConfirmationRequest
from mcp_tools.policy.store import StateStore, StateStoreUnavailable
from mcp_tools.state import request_state_security
from mcp_tools.tooling import Risk

INPUT_REQUIRED_VERSION = "2026-07-28"
CONFIRM_KEY = "mcp_tools_confirm"
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Allow this action",
            "description": "Check to run it now; leave unchecked or decline to refuse.",
            "default": False,
        }
    },
    "required": ["confirm"],
}
PRINCIPAL_SCOPE_KEY = "mcp_tools.principal"
PACKAGE_DIR = Path(__file__).resolve().parent


def tool_definition(tool: BoundTool) -> types.Tool:
    spec = tool.spec
    risk = tool.configured_risk
    destructive = not spec.read_only and (risk >= Risk.HIGH or spec.dynamic_risk is not None)
    if spec.destructive is not None:
        destructive = spec.destructive
    note = risk_note(risk, escalates=spec.dynamic_risk is not None)
    input_schema = spec.input_model.model_json_schema()
    for option in tool.withheld:  # it acts through a tool the policy hides: not offered
        input_schema.get("properties", {}).pop(option, None)
        if option in input_schema.get("required", []):
            input_schema["required"] = [name for name in input_schema["required"] if name != option]
    return types.Tool(
        name=tool.wire_name,
        title=spec.title,
        description=spec.description + note,
        input_schema=compact_schema(input_schema),
        output_schema=compact_output_schema(spec.output_model.model_json_schema(mode="serialization")),
        annotations=tool_annotations(spec.read_only, destructive, spec.idempotent or spec.read_only, spec.open_world),
    )


def tool_annotations(read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> types.ToolAnnotations:
    """Only the hints that differ from the spec's defaults (readOnly false, destructive true,
    idempotent false, openWorld true): the same meaning for every client, in fewer tokens. The
    destructive and idempotent hints mean nothing for a read-only tool, so it carries neither.
    """
    return types.ToolAnnotations(
        read_only_hint=True if read_only else None,
        destructive_hint=None if read_only or destructive else False,
        idempotent_hint=True if idempotent and not read_only else None,
        open_world_hint=None if open_world else False,
    )


def cached_definitions(tools: list[BoundTool], cache_dir: Path) -> list[types.Tool]:
    """Tool definitions, from a cache when nothing that shapes them has changed.

    Generating 40-odd JSON schemas is a good part of start-up, and Claude Desktop starts the
    server often. The key covers our version, every source file of the package (size and
    mtime), and each tool's wire name and risk, so any change regenerates the definitions.
    """
    key = definitions_key(tools)
    path = cache_dir / f"tools-{key}.json"
    try:
        return [types.Tool.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError):
        pass
    definitions = [tool_definition(tool) for tool in tools]
    payload = json.dumps([d.model_dump(mode="json", by_alias=True, exclude_none=True) for d in definitions])
    with contextlib.suppress(OSError):  # a read-only state dir only costs the cache
        cache_dir.mkdir(parents=True, exist_ok=True)
        for stale in cache_dir.glob("tools-*.json"):
            stale.unlink(missing_ok=True)
        temp = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
        temp.write_text(payload, encoding="utf-8")
        os.replace(temp, path)
    return definitions


def definitions_key(tools: list[BoundTool]) -> str:
    digest = hashlib.sha256(__version__.encode())
    for source in sorted(PACKAGE_DIR.rglob("*.py")):
        stat = source.stat()
        digest.update(f"{source.relative_to(PACKAGE_DIR)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    for tool in tools:
        withheld = ",".join(tool.withheld)
        digest.update(f"{tool.spec.name}:{tool.wire_name}:{tool.configured_risk.label}:{withheld}\n".encode())
    return digest.hexdigest()[:24]


def risk_note(risk: Risk, escalates: bool) -> str:
    """What the model must know about the policy before calling: whether the person is asked."""
    if risk >= Risk.HIGH:
        return " Risk: high; asks the person first."
    note = " Risk: medium" if risk is Risk.MEDIUM else ""
    if escalates:
        return (note + ", high" if note else " Risk: high") + " for some arguments (asks the person first)."
    return note + "." if note else ""


def compact_schema(schema: Any) -> Any:
    """An input schema without what costs context and says nothing.

    Pydantic's generated titles repeat the property names; an optional field's
    `anyOf: [X, null]` with `default: null` says no more than X outside `required`.
    """
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = _without_null_option(schema, keep_null=False)
    return {
        key: compact_schema(value) for key, value in schema.items() if not (key == "title" and isinstance(value, str))
    }


def compact_output_schema(schema: Any) -> Any:
    """An output schema that describes what is returned, and nothing a result cannot use.

    Besides titles, defaults and `additionalProperties` go (a result is read, never written),
    and so does `required`: every field of a result is always present, null or not, so it
    would list them all. `anyOf: [X, null]` becomes `type: [X, "null"]`, and a definition used
    once stands where it is used.
    """
    if isinstance(schema, dict) and "$defs" in schema:
        schema = _inline_single_use(schema)
    return _compact_output(schema)


def _compact_output(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_compact_output(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = _without_null_option(schema, keep_null=True)
    compacted = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):  # names, not keywords: keep every one
            compacted[key] = {name: _compact_output(prop) for name, prop in value.items()}
        elif key not in ("default", "additionalProperties", "required", "title"):
            compacted[key] = _compact_output(value)
    return compacted


def _inline_single_use(schema: dict[str, Any]) -> dict[str, Any]:
    """Put a definition used once in place of its `$ref`; shared ones stay in `$defs`."""
    defs: dict[str, Any] = schema["$defs"]
    uses = {name: json.dumps(schema).count(f'"#/$defs/{name}"') for name in defs}

    def replace(node: Any) -> Any:
        if isinstance(node, list):
            return [replace(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and uses.get(ref[8:]) == 1 and len(node) == 1:
            return replace(defs[ref[8:]])
        return {key: replace(value) for key, value in node.items() if key != "$defs"}

    result = replace(schema)
    kept = {name: replace(body) for name, body in defs.items() if uses[name] != 1}
    if kept:
        result["$defs"] = kept
    return result


def _without_null_option(schema: dict[str, Any], keep_null: bool) -> dict[str, Any]:
    options = schema.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return schema
    other = next(option for option in options if option != {"type": "null"})
    if not isinstance(other, dict) or "type" not in other or "anyOf" in other or isinstance(other["type"], list):
        return schema
    if not keep_null and ("default" not in schema or schema["default"] is not None):
        return schema
    merged = {key: value for key, value in schema.items() if key != "anyOf"}
    merged.update(other)
    if keep_null:
        merged["type"] = [other["type"], "null"]
    else:
        merged.pop("default", None)
    return merged


def call_result(outcome: CallOutcome) -> types.CallToolResult:
    """Success carries `structuredContent` (valid against the tool's `outputSchema`) and its text.

    An error carries no `structuredContent`: it could not match the tool's `outputSchema`, and
    clients that validate (the Inspector) would reject the whole result. Its one text block is
    the JSON error object, `{"error": {"kind", "message", "hint", ...}}`, for models and programs.
    """
    if outcome.is_error:
        payload = outcome.structured or {"error": {"kind": "internal_error", "message": outcome.text}}
        text = json.dumps(payload, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
    content = [types.TextContent(type="text", text=outcome.text)]
    if outcome.notice:
        content.insert(0, types.TextContent(type="text", text=outcome.notice))
    return types.CallToolResult(content=content, structured_content=outcome.structured)


class LegacyElicitation:
    """Asks with a live `elicitation/create` request (protocol 2025-11-25 and earlier)."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], timeout: float) -> None:
        self.ctx = ctx
        self.timeout = timeout

    async def ask(self, request: ConfirmationRequest) -> Answer | AskLater:
        result = None
        with anyio.move_on_after(self.timeout):
            try:
                result = await self.ctx.session.elicit_form(
                    message=request.message(),
                    requested_schema=CONFIRM_SCHEMA,
                    related_request_id=self.ctx.request_id,
                )
            except Exception:  # a client that errors instead of answering has not confirmed
                return Answer.CANCEL
        if result is None:
            return Answer.TIMEOUT
        return answer_from(result.action, result.content)


class InputRequiredElicitation:
    """Asks through an `InputRequiredResult` round trip (protocol 2026-07-28).

    The state we hand out names the exact call, the principal and a nonce; the SDK seals it,
    and a nonce counts once in the state store (on every replica that shares it), so an answer
    can neither be moved to another call or another token's session nor replayed.
    """

    def __init__(
        self, params: types.CallToolRequestParams, store: StateStore, ttl: float, principal: str = "local"
    ) -> None:
        self.params = params
        self.store = store
        self.ttl = ttl
        self.principal = principal

    async def ask(self, request: ConfirmationRequest) -> Answer | AskLater:
        answer = await self._answer_for(request)
        if answer is not None:
            return answer
        state = {
            "tool": request.tool,
            "args": request.args_sha256,
            "principal": self.principal,
            "nonce": secrets.token_urlsafe(16),
        }
        elicit = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=request.message(), requested_schema=CONFIRM_SCHEMA)
        )
        return AskLater(
            types.InputRequiredResult(input_requests={CONFIRM_KEY: elicit}, request_state=json.dumps(state))
        )

    async def _answer_for(self, request: ConfirmationRequest) -> Answer | None:
        responses = self.params.input_responses or {}
        if not self.params.request_state or CONFIRM_KEY not in responses:
            return None
        try:
            state = json.loads(self.params.request_state)
        except ValueError:
            return None
        if (
            not isinstance(state, dict)
            or state.get("tool") != request.tool
            or state.get("args") != request.args_sha256
            or state.get("principal") != self.principal
        ):
            return None
        nonce = str(state.get("nonce"))
        if not await anyio.to_thread.run_sync(self.store.use_nonce, nonce, self.ttl):
            return None
        response = responses[CONFIRM_KEY]
        if not isinstance(response, types.ElicitResult):
            return Answer.CANCEL
        return answer_from(response.action, response.content)


def answer_from(action: str, content: dict[str, Any] | None) -> Answer:
    if action == "accept":
        return Answer.ACCEPT if (content or {}).get("confirm") is True else Answer.DECLINE
    return Answer.DECLINE if action == "decline" else Answer.CANCEL


def can_elicit_form(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Only a client that declared form elicitation may be sent one."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def client_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The client's name from its clientInfo (`Claude Desktop`), for the person who approves its calls."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    if info is None:
        return None
    return client_name(getattr(info, "name", None), getattr(info, "title", None))


def principal_of(ctx: ServerRequestContext[Any, Any], default: str) -> str:
    scope = getattr(ctx.request, "scope", None)
    if isinstance(scope, dict):
        return str(scope.get(PRINCIPAL_SCOPE_KEY, default))
    return default


def progress_reporter(
    ctx: ServerRequestContext[Any, Any],
) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    """Progress for this request; a no-op when the client did not ask for it."""

    async def report(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.report_progress(progress, total, message)

    return report


class ClientStates:
    """Each client's enabled toolsets in dynamic discovery, and how to tell it the list changed.

    A 2025-11-25 connection has a session: the set lives and dies with it. A 2026-07-28 client
    has no session, so its set is keyed by its principal (the HTTP token's name; `local` on
    stdio, where the process serves one client), and `notifications/tools/list_changed` goes
    to that principal's `subscriptions/listen` streams only. Give each HTTP client its own token.
    Where replicas share the state store (PostgreSQL), a principal's set lives there, so the
    toolsets it enabled through one replica are served by every replica.
    """

    def __init__(self, store: StateStore | None = None) -> None:
        self.by_session: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self.by_principal: dict[str, set[str]] = {}
        self.listeners: dict[str, Any] = {}
        self.buses: dict[str, Any] = {}
        # On SQLite each process is its own server (stdio clients each start one): "local" in
        # one is not "local" in another, so the set stays in the process.
        self.store = store if store is not None and store.engine != "sqlite" else None

    def enabled(self, ctx: ServerRequestContext[Any, Any]) -> set[str]:
        if is_modern(ctx):
            principal = principal_of(ctx, "local")
            if self.store is not None:
                # While the store is away, the last set seen here is served.
                with contextlib.suppress(StateStoreUnavailable):
                    self.by_principal[principal] = self.store.enabled_tools(principal)
            return self.by_principal.setdefault(principal, set())
        # The SDK builds a ServerSession per request around the connection's one `Connection`.
        connection = getattr(ctx.session, "_connection", ctx.session)
        return self.by_session.setdefault(connection, set())

    def keep(self, ctx: ServerRequestContext[Any, Any], enabled: set[str]) -> None:
        """Store a principal's grown set where every replica sees it."""
        if self.store is not None and is_modern(ctx):
            try:
                self.store.enable_tools(principal_of(ctx, "local"), enabled)
            except StateStoreUnavailable:  # this replica serves the set; the others once it is stored
                logging.getLogger("mcp_tools").warning("enabled toolsets not stored: the state store cannot be reached")

    def bus(self, principal: str) -> Any:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        return self.buses.setdefault(principal, InMemorySubscriptionBus())

    async def listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        from mcp.server.subscriptions import ListenHandler

        principal = principal_of(ctx, "local")
        handler = self.listeners.get(principal)
        if handler is None:
            handler = self.listeners[principal] = ListenHandler(self.bus(principal), max_subscriptions=16)
        result: types.SubscriptionsListenResult = await handler(ctx, params)
        return result

    async def notify_changed(self, ctx: ServerRequestContext[Any, Any]) -> None:
        from mcp.server.subscriptions import ToolsListChanged

        if is_modern(ctx):
            await self.bus(principal_of(ctx, "local")).publish(ToolsListChanged())
        else:
            with contextlib.suppress(Exception):  # a client gone away needs no notice
                await ctx.session.send_notification(
                    types.ToolListChangedNotification(), related_request_id=ctx.request_id
                )


def is_modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return bool(ctx.protocol_version) and is_version_at_least(ctx.protocol_version, INPUT_REQUIRED_VERSION)


class ToolsServer(Server[Any]):
    """The SDK's server, declaring `tools.listChanged` on 2025-era connections when the list can change."""

    def __init__(self, *args: Any, tools_change: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tools_change = tools_change

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        if notification_options is None and self.tools_change:
            notification_options = NotificationOptions(tools_changed=True)
        return super().create_initialization_options(notification_options, experimental_capabilities, extensions)


def build_server(app: App, transport: str, namespace: str | None = None) -> Server[Any]:
    """One MCP server over all enabled namespaces, or over one of them (`/files/mcp`).

    With `[server] discovery = "dynamic"` each client is served the meta-tools and its own
    set of tools, which grows when the model enables toolsets (see `mcp_tools.discovery`).
    """
    dynamic = app.config.server.discovery == "dynamic"
    cache_dir = app.environment.state_dir / "cache"
    listed = cached_definitions(app.available_tools(namespace) if dynamic else app.visible_tools(namespace), cache_dir)
    definitions = {definition.name: definition for definition in listed}
    settings = app.config.policy
    name = "mcp-tools" if namespace is None else f"mcp-tools-{namespace}"
    clients = ClientStates(app.store)
    meta: dict[str, BoundTool] = {}  # the meta-tools of dynamic discovery, by wire name; service bound per call
    if dynamic:
        from mcp_tools.discovery import META_TOOLS

        for spec in META_TOOLS:
            if app.rules.hidden_reason(spec) is None:
                wire = wire_name(spec.name, app.config.server.wire_separator)
                meta[wire] = BoundTool(spec, None, wire, app.rules.configured_risk(spec))
    meta_definitions = [tool_definition(tool) for tool in meta.values()]

    def view(ctx: ServerRequestContext[Any, Any]) -> Any:
        from mcp_tools.discovery import ClientToolsets

        return ClientToolsets(app, clients.enabled(ctx), namespace)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if not dynamic:
            return types.ListToolsResult(tools=listed)
        served = [definitions[tool.wire_name] for tool in view(ctx).served() if tool.wire_name in definitions]
        return types.ListToolsResult(tools=[*meta_definitions, *served])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        caller = Caller(
            transport=transport,
            principal=principal_of(ctx, "local"),
            asker=_asker(ctx, params),
            progress=progress_reporter(ctx),
            client=client_of(ctx),
        )
        client = view(ctx) if dynamic else None
        tool = app.find_tool(params.name, namespace)
        if tool is not None and not (client.serves(tool) if client is not None else app.is_selected(tool.spec)):
            tool = None  # not served to this client: as unknown as a tool that does not exist
        found = meta.get(params.name) or next((m for m in meta.values() if m.spec.name == params.name), None)
        if found is not None:
            tool = BoundTool(found.spec, client, found.wire_name, found.configured_risk)
        outcome = await app.gate.call(tool, params.name, params.arguments or {}, caller)
        if client is not None and client.changed:
            await anyio.to_thread.run_sync(clients.keep, ctx, client.enabled)
            await clients.notify_changed(ctx)
        if outcome.ask_later is not None:
            payload: types.InputRequiredResult = outcome.ask_later.payload
            return payload
        return call_result(outcome)

    def _asker(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> Any:
        if not can_elicit_form(ctx):
            return None
        if is_modern(ctx):
            # A nonce must outlive the sealed state that carries it, or a replay after it is
            # forgotten would count again.
            ttl = max(settings.approval_ttl_seconds, settings.elicitation_timeout_seconds)
            return InputRequiredElicitation(params, app.store, ttl, principal_of(ctx, "local"))
        if ctx.session.can_send_request:
            return LegacyElicitation(ctx, settings.elicitation_timeout_seconds)
        return None

    server = ToolsServer(
        name,
        version=__version__,
        instructions=app.instructions(namespace),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=clients.listen if dynamic else None,
        tools_change=dynamic,
    )
    security = request_state_security(app.config, ttl=float(settings.elicitation_timeout_seconds))
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server
