"""The MCP face of the app: tools/list and tools/call on the SDK's low-level server.

This is the only module that speaks MCP types. It turns a request into a `Caller` (who, over
what, and how the person can be asked), hands it to the policy gate, and turns the gate's
outcome back into a `CallToolResult` or, on 2026-07-28 connections, an `InputRequiredResult`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import secrets
import sys
import warnings
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.apps import client_supports_apps
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from mcp_types.version import is_version_at_least

from mcp_tools import __version__
from mcp_tools.approvals.elicit_url import url_asker
from mcp_tools.approvals.retry import claimed_state
from mcp_tools.composition.app import App
from mcp_tools.core.tooling import ABSENT_WHEN_NONE, Risk
from mcp_tools.inventory.catalog import wire_name
from mcp_tools.inventory.discovery import ClientToolsets
from mcp_tools.policy.display import client_name
from mcp_tools.policy.gate import Answer, AskLater, BoundTool, Caller, CallOutcome, ConfirmationRequest
from mcp_tools.resources.handlers import ResourceHandlers
from mcp_tools.resources.icons import icon
from mcp_tools.state import request_state_security
from mcp_tools.state.store import StateStore, StateStoreUnavailable
from mcp_tools.tasks import serve_tasks
from mcp_tools.transports.google_elicit import connect_by_url

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
# Set by the HTTP transport: the token's client shows confirmation forms to a person.
FORMS_SCOPE_KEY = "mcp_tools.person_answers_forms"
REACH_SCOPE_KEY = "mcp_tools.reach"  # what an OAuth caller's scopes reach (mcp_tools.oauth.guard.Reach)
# Set by the OAuth guard where calls are counted past it (text calls): spend one, or seconds to wait.
CALL_BUDGET_SCOPE_KEY = "mcp_tools.call_budget"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the whole package


def tool_definition(tool: BoundTool) -> types.Tool:
    spec = tool.spec
    risk = tool.configured_risk
    destructive = not spec.read_only and (risk >= Risk.HIGH or spec.dynamic_risk is not None)
    if spec.destructive is not None:
        destructive = spec.destructive
    note = risk_note(risk, escalates=spec.dynamic_risk is not None)
    input_schema, output_schema = tool.listed_schemas()
    return types.Tool(
        name=tool.wire_name,
        title=spec.title,
        description=spec.description + note,
        input_schema=compact_schema(input_schema),
        output_schema=compact_output_schema(output_schema),
        annotations=tool_annotations(spec.read_only, destructive, spec.idempotent or spec.read_only, spec.open_world),
        execution=types.ToolExecution(task_support="optional")
        if risk >= Risk.HIGH or spec.dynamic_risk or spec.task_support != "forbidden"
        else None,
    )


def tool_annotations(
    read_only: bool, destructive: bool, idempotent: bool, open_world: bool
) -> types.ToolAnnotations | None:
    """Only the hints that differ from the spec's defaults (readOnly false, destructive true,
    idempotent false, openWorld true): the same meaning for every client, in fewer tokens. The
    destructive and idempotent hints mean nothing for a read-only tool, so it carries neither;
    a tool whose hints are all the defaults carries no annotations at all.
    """
    hints = types.ToolAnnotations(
        read_only_hint=True if read_only else None,
        destructive_hint=None if read_only or destructive else False,
        idempotent_hint=True if idempotent and not read_only else None,
        open_world_hint=None if open_world else False,
    )
    return hints if hints.model_dump(exclude_none=True) else None


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
    """What shapes the definitions: our sources, the libraries that render them, and each tool's
    declaration (names, risk, wording, hints), which a namespace could vary with its config."""
    digest = hashlib.sha256(_sources_fingerprint().encode())
    for tool in tools:
        spec = tool.spec
        shape = (
            spec.name,
            tool.wire_name,
            tool.configured_risk.label,
            spec.title,
            spec.description,
            f"{spec.input_model.__module__}.{spec.input_model.__qualname__}",
            f"{spec.output_model.__module__}.{spec.output_model.__qualname__}",
            spec.read_only,
            spec.destructive,
            spec.idempotent,
            spec.open_world,
            spec.dynamic_risk is not None,
            ",".join(tool.withheld),
        )
        digest.update(repr(shape).encode() + b"\n")
    return digest.hexdigest()[:24]


@functools.cache
def _sources_fingerprint() -> str:
    """Our version, every source file of the package (size and mtime), and the installed pydantic and
    MCP types (their package files), once per process: the code a process runs does not change."""
    import mcp_types
    import pydantic

    lines = [__version__]
    for library in (pydantic, mcp_types):
        info = os.stat(library.__file__ or "")
        lines.append(f"{library.__name__}:{library.__file__}:{info.st_size}:{info.st_mtime_ns}")
    sources = []
    for folder, folders, files in os.walk(PACKAGE_DIR):
        folders[:] = [name for name in folders if name != "__pycache__"]
        relative = os.path.relpath(folder, PACKAGE_DIR)
        for name in files:
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                sources.append(f"{os.path.join(relative, name)}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(lines + sorted(sources))


def risk_note(risk: Risk, escalates: bool) -> str:
    """What the model must know about the policy before calling. What the levels mean (high asks
    the person first) is said once, in the server instructions, not in every description."""
    if risk >= Risk.HIGH:
        return " Risk: high."
    note = " Risk: medium" if risk is Risk.MEDIUM else ""
    if escalates:
        return (note + ", high" if note else " Risk: high") + " for some arguments."
    return note + "." if note else ""


def compact_schema(schema: Any) -> Any:
    """An input schema without what costs context and says nothing.

    Pydantic's generated titles repeat the property names; an optional field's
    `anyOf: [X, null]` with `default: null` says no more than X outside `required`, and a
    default of false, 0, "" or [] says no more than leaving the argument out. A definition used
    once stands where it is used, as in output schemas.
    """
    if isinstance(schema, dict) and "$defs" in schema:
        schema = _inline_single_use(schema)
    return _compact_input(schema)


def _compact_input(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_compact_input(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = _without_null_option(schema, keep_null=False)
    empty = EMPTY_DEFAULTS.get(schema["type"]) if isinstance(schema.get("type"), str) else None
    return {
        key: _compact_input(value)
        for key, value in schema.items()
        if not (key == "title" and isinstance(value, str))
        and not (key == "default" and empty is not None and value == empty and type(value) is type(empty))
    }


EMPTY_DEFAULTS: dict[str, Any] = {"boolean": False, "integer": 0, "string": "", "array": []}


def compact_output_schema(schema: Any) -> Any:
    """An output schema that describes what is returned, and nothing a result cannot use.

    Besides titles, defaults and `additionalProperties` go (a result is read, never written),
    and so does `required`: every field of a result is always present, null or not, so it
    would list them all. `anyOf: [X, null]` becomes `type: [X, "null"]`, a definition used
    once stands where it is used, and an enum of strings goes without `type: "string"`.
    """
    if isinstance(schema, dict) and "$defs" in schema:
        schema = _inline_single_use(schema)
    return _compact_output(schema)


def _compact_output(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_compact_output(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get(ABSENT_WHEN_NONE):  # None is left out of such a result: a field is its type, or absent
        properties = {name: _without_null_option(prop, keep_null=False) for name, prop in schema["properties"].items()}
        schema = {key: value for key, value in schema.items() if key != ABSENT_WHEN_NONE} | {"properties": properties}
    schema = _without_null_option(schema, keep_null=True)
    compacted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):  # names, not keywords: keep every one
            compacted[key] = {name: _compact_output(prop) for name, prop in value.items()}
        elif key not in ("default", "additionalProperties", "required", "title"):
            compacted[key] = _compact_output(value)
    if compacted.get("type") == "string" and _only_strings(compacted.get("enum")):
        del compacted["type"]  # an enum of strings admits strings only: the type says it again
    return compacted


def _only_strings(values: Any) -> bool:
    return isinstance(values, list) and bool(values) and all(isinstance(value, str) for value in values)


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

    result: dict[str, Any] = replace(schema)
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
    content: list[Any] = [types.TextContent(type="text", text=outcome.text)]
    content += [types.ImageContent(type="image", data=data, mime_type=mime) for data, mime in outcome.images]
    if outcome.notice:
        content.insert(0, types.TextContent(type="text", text=outcome.notice))
    return types.CallToolResult(content=content, structured_content=outcome.structured)


class LegacyElicitation:
    """Asks with a live `elicitation/create` request (protocol 2025-11-25 and earlier)."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], timeout: float, channel: str = "elicitation") -> None:
        self.ctx = ctx
        self.timeout = timeout
        self.channel = channel

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
        self,
        params: types.CallToolRequestParams,
        store: StateStore,
        ttl: float,
        principal: str = "local",
        channel: str = "elicitation",
    ) -> None:
        self.params = params
        self.store = store
        self.ttl = ttl
        self.principal = principal
        self.channel = channel

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
        if CONFIRM_KEY not in responses:
            return None
        if await claimed_state(self.store, self.params.request_state, request, self.principal, self.ttl) is None:
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


def forms_reach_person(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether a form this client answers is the person's own yes.

    Over stdio (and in-process) the desktop client that started the server shows the form to its
    user. Over HTTP whoever holds the token could answer its own forms, so only a token the person
    marked `person_answers_forms` counts; any other HTTP principal is approved out of band.
    """
    scope = getattr(ctx.request, "scope", None)
    if isinstance(scope, dict) and scope.get("type") == "http":
        return scope.get(FORMS_SCOPE_KEY) is True
    return True


def gets_approval_card(ctx: ServerRequestContext[Any, Any]) -> bool:
    """A client that renders MCP Apps and cannot be asked with a form approves in the approval card.

    Only where a form would be the person's yes (stdio, or an HTTP token marked
    `person_answers_forms`): the ticket travels in the result's `_meta`, so a remote agent holding
    any other token could read it and approve its own call.
    """
    return client_supports_apps(ctx) and not can_elicit_form(ctx) and forms_reach_person(ctx)


def with_card(definition: types.Tool) -> types.Tool:
    """A high-risk tool's definition that links the approval card."""
    from mcp_tools.approvals.card import CARD_URI

    meta = dict(definition.meta or {})
    meta["ui"] = {**meta.get("ui", {}), "resourceUri": CARD_URI}
    return definition.model_copy(update={"meta": meta})


def principal_of(ctx: ServerRequestContext[Any, Any], default: str) -> str:
    scope = getattr(ctx.request, "scope", None)
    if isinstance(scope, dict):
        return str(scope.get(PRINCIPAL_SCOPE_KEY, default))
    return default


def reach_of(ctx: ServerRequestContext[Any, Any]) -> Callable[[Any], bool] | None:
    """What the caller's OAuth scopes reach, as the gate asks it of each spec; None: everything."""
    scope = getattr(ctx.request, "scope", None)
    reach = scope.get(REACH_SCOPE_KEY) if isinstance(scope, dict) else None
    return None if reach is None else reach  # a `Reach`: asked of a spec, it says whether the caller reaches it


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

    def __init__(self, app: App, namespace: str | None = None) -> None:
        self.by_session: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        # by principal on the app, where calls written as text see the same set (`Catalog.view`)
        self.by_principal = app.enabled_toolsets
        self.namespace = namespace
        self.buses: dict[str, Any] = {}
        # On SQLite each process is its own server (stdio clients each start one): "local" in
        # one is not "local" in another, so the set stays in the process.
        self.store = app.store if app.store is not None and app.store.engine != "sqlite" else None

    def stored_as(self, ctx: ServerRequestContext[Any, Any]) -> tuple[str, str]:
        """The principal and endpoint of a set in the state store: one set per mounted namespace
        (`""` for the endpoint of every namespace)."""
        return principal_of(ctx, "local"), self.namespace or ""

    def enabled(self, ctx: ServerRequestContext[Any, Any]) -> set[str]:
        if is_modern(ctx):
            key = (self.namespace, principal_of(ctx, "local"))
            if self.store is not None:
                # While the store is away, the last set seen here is served.
                with contextlib.suppress(StateStoreUnavailable):
                    principal, namespace = self.stored_as(ctx)
                    self.by_principal[key] = self.store.enabled_tools(principal, namespace)
            return self.by_principal.setdefault(key, set())
        # The SDK builds a ServerSession per request around the connection's one `Connection`.
        connection = getattr(ctx.session, "_connection", ctx.session)
        return self.by_session.setdefault(connection, set())

    def keep(self, ctx: ServerRequestContext[Any, Any], enabled: set[str]) -> None:
        """Store a principal's grown set where every replica sees it."""
        if self.store is not None and is_modern(ctx):
            try:
                principal, namespace = self.stored_as(ctx)
                self.store.enable_tools(principal, enabled, namespace)
            except StateStoreUnavailable:  # this replica serves the set; the others once it is stored
                logging.getLogger("mcp_tools").warning("enabled toolsets not stored: the state store cannot be reached")

    def bus(self, principal: str) -> Any:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        return self.buses.setdefault(principal, InMemorySubscriptionBus())

    async def notify_changed(self, ctx: ServerRequestContext[Any, Any]) -> None:
        from mcp.server.subscriptions import ToolsListChanged

        if is_modern(ctx):
            await self.bus(principal_of(ctx, "local")).publish(ToolsListChanged())
        else:
            with contextlib.suppress(Exception):  # a client gone away needs no notice
                await ctx.session.send_notification(
                    types.ToolListChangedNotification(), related_request_id=ctx.request_id
                )


def refuse_cursor(params: types.PaginatedRequestParams | None) -> None:
    """Every list is one page, so no cursor was ever handed out: one sent is invalid (-32602)."""
    if params is not None and params.cursor is not None:
        raise MCPError(
            INVALID_PARAMS,
            "invalid cursor: this server returns every list in one page and never hands out a cursor; "
            "list again without one",
        )


def is_modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return bool(ctx.protocol_version) and is_version_at_least(ctx.protocol_version, INPUT_REQUIRED_VERSION)


class ApprovalCard:
    """The approval card (`mcp_tools.approvals.card`) in MCP terms, for the clients that get it."""

    def __init__(self, app: App, namespace: str | None) -> None:
        from mcp_tools.approvals.card import CARD_TOOLS, CARD_URI, CardService

        self.app = app
        self.uri = CARD_URI
        service = CardService(app.store, app.out_of_band.decisions)
        separator = app.config.server.wire_separator
        self.tools = {
            wire_name(spec.name, separator): BoundTool(spec, service, wire_name(spec.name, separator), Risk.LOW)
            for spec in CARD_TOOLS
        }
        self.definitions = [
            tool.model_copy(update={"meta": {"ui": {"resourceUri": CARD_URI, "visibility": ["app"]}}})
            for tool in (tool_definition(bound) for bound in self.tools.values())
        ]
        catalog = app.catalog
        candidates = catalog.available(namespace) if catalog.dynamic else []
        candidates += catalog.visible(namespace)
        self.high_risk = {
            bound.wire_name
            for bound in candidates
            if bound.configured_risk >= Risk.HIGH or bound.spec.dynamic_risk is not None
        }

    def linked(self, tools: list[types.Tool]) -> list[types.Tool]:
        """High-risk tools link the card; the card's own tools (shown to the app only) are added."""
        return [with_card(tool) if tool.name in self.high_risk else tool for tool in tools] + self.definitions

    def with_ticket(self, result: types.CallToolResult, outcome: CallOutcome) -> types.CallToolResult:
        """An `approval_required` result gets the approval id and a fresh ticket, in `_meta` only."""
        from mcp_tools.approvals.card import META_KEY, issue_ticket

        error = outcome.error or {}
        approval_id = error.get("approval_id")
        if error.get("kind") != "approval_required" or not isinstance(approval_id, str):
            return result
        approval = self.app.store.get_approval(approval_id)
        if approval is None or approval.effective_status(self.app.store.clock()) != "pending":
            return result
        show, decide = self.tools
        opened = {"approvalId": approval.id, "ticket": issue_ticket(self.app.store, approval)}
        opened.update(show=show, decide=decide)
        return result.model_copy(update={"meta": {**(result.meta or {}), META_KEY: opened}})

    def resource(self) -> types.Resource:
        from mcp_tools.approvals.card import APP_MIME_TYPE, card_resource_meta

        return types.Resource(
            uri=self.uri,
            name="approval-card",
            title="Approve a high-risk action",
            description="Shows a pending approval and records the person's answer.",
            mime_type=APP_MIME_TYPE,
            _meta=card_resource_meta(),
        )

    def read(self) -> types.ReadResourceResult:
        from mcp_tools.approvals.card import APP_MIME_TYPE, card_html, card_resource_meta

        contents = types.TextResourceContents(
            uri=self.uri, mime_type=APP_MIME_TYPE, text=card_html(), _meta=card_resource_meta()
        )
        return types.ReadResourceResult(contents=[contents])


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
    set of tools, which grows when the model enables toolsets (see `mcp_tools.inventory.discovery`).
    """
    catalog = app.catalog
    dynamic = catalog.dynamic
    cache_dir = app.environment.state_dir / "cache"
    listed = cached_definitions(catalog.available(namespace) if dynamic else catalog.visible(namespace), cache_dir)
    definitions = {definition.name: definition for definition in listed}
    if dynamic:
        definitions.update((tool.wire_name, tool_definition(tool)) for tool in catalog.meta_tools().values())
    settings = app.config.policy
    name = "mcp-tools" if namespace is None else f"mcp-tools-{namespace}"
    clients = ClientStates(app, namespace)
    card = ApprovalCard(app, namespace)
    resources = ResourceHandlers(app, namespace, lambda ctx: caller_for(ctx, None), card, gets_approval_card)

    def view(ctx: ServerRequestContext[Any, Any]) -> ClientToolsets | None:
        return catalog.view_of(clients.enabled(ctx), namespace) if dynamic else None

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        refuse_cursor(params)
        served = catalog.listed(namespace, view(ctx), reach_of(ctx))
        tools = [definitions[tool.wire_name] for tool in served if tool.wire_name in definitions]
        if gets_approval_card(ctx):
            tools = card.linked(tools)
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        caller = caller_for(ctx, params)
        client = view(ctx)
        carded = gets_approval_card(ctx)
        arguments = params.arguments or {}
        # Not served, or outside the caller's scopes (the HTTP guard answers 403 before this): as
        # unknown as no tool at all.
        found = catalog.resolve(
            params.name,
            arguments,
            transport,
            namespace=namespace,
            view=client,
            reaches=caller.reaches,
            extra=card.tools if carded else None,
        )
        if found.tool is None:
            assert found.failure is not None
            outcome = await app.gate.refuse(found.name, found.failure, caller, arguments)
        else:
            tool = found.tool
            outcome = await app.gate.call(tool, params.name, arguments, caller)
            if outcome.is_error:  # a Google sign-in link: to a URL-mode client's person, not the model
                again = functools.partial(app.gate.call, tool, params.name, arguments, caller)
                outcome = await connect_by_url(ctx, app, caller.principal, outcome, again)
        if client is not None and client.changed:
            await anyio.to_thread.run_sync(clients.keep, ctx, client.enabled)
            await clients.notify_changed(ctx)
        if outcome.ask_later is not None:
            payload: types.InputRequiredResult = outcome.ask_later.payload
            return payload
        result = call_result(outcome)
        if found.tool is not None and found.tool.spec.reaches:  # only such a tool saves into a store
            result = resources.linked(result, found.tool, found.arguments, outcome, ctx)
        if carded:
            result = card.with_ticket(result, outcome)
        return result

    def caller_for(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams | None) -> Caller:
        asking = (lambda: _asker(ctx, params)) if params is not None else None  # built when a call asks
        reaches, client, progress = reach_of(ctx), client_of(ctx), progress_reporter(ctx)
        return Caller(transport, principal_of(ctx, "local"), None, client, progress, reaches, asking=asking)

    def _asker(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> Any:
        if not can_elicit_form(ctx) or not forms_reach_person(ctx):
            return url_asker(ctx, app, lambda: caller_for(ctx, None), params.name, forms_reach_person(ctx))
        channel = f"elicitation:{transport}"
        if is_modern(ctx):
            # A nonce must outlive the sealed state that carries it, or a replay after it is
            # forgotten would count again.
            ttl = max(settings.approval_ttl_seconds, settings.elicitation_timeout_seconds)
            return InputRequiredElicitation(params, app.store, ttl, principal_of(ctx, "local"), channel)
        if ctx.session.can_send_request:
            return LegacyElicitation(ctx, settings.elicitation_timeout_seconds, channel)
        return None

    input_schemas = {name: definition.input_schema for name, definition in definitions.items()}

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        """For the SDK's `Mcp-Param-*` header check on 2026-07-28 HTTP: without it the SDK runs the
        whole tools/list handler, validation and serialization included, for every tools/call."""
        return input_schemas.get(tool_name)

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        refuse_cursor(params)
        return types.ListPromptsResult(prompts=[])

    async def set_logging_level(
        ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        return types.EmptyResult()  # accepted; this server sends no log notifications (its log is stderr)

    with warnings.catch_warnings():  # logging/setLevel is deprecated from 2026-07-28; 2025 clients still send it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server = ToolsServer(
            name,
            version=__version__,
            icons=[icon(namespace)],
            instructions=app.instructions(namespace),
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            get_tool_input_schema=input_schema,
            on_list_resources=resources.list_resources,
            on_list_resource_templates=resources.list_resource_templates,
            on_read_resource=resources.read_resource,
            on_subscribe_resource=resources.subscribe,
            on_unsubscribe_resource=resources.unsubscribe,
            lifespan=resources.lifespan,
            on_list_prompts=list_prompts,
            on_set_logging_level=set_logging_level,
            on_subscriptions_listen=resources.listen(clients.bus),
            tools_change=dynamic,
        )
    security = request_state_security(app.config, ttl=float(settings.elicitation_timeout_seconds))
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    serve_tasks(server, app, transport, namespace, view, sys.modules[__name__])  # tasks read requests as this module
    return server
