"""The MCP face of the app: tools/list and tools/call on the SDK's low-level server.

This is the only module that speaks MCP types. It turns a request into a `Caller` (who, over
what, and how the person can be asked), hands it to the policy gate, and turns the gate's
outcome back into a `CallToolResult` or, on 2026-07-28 connections, an `InputRequiredResult`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.version import is_version_at_least

from mcp_tools import __version__
from mcp_tools.app import App
from mcp_tools.policy.gate import Answer, AskLater, BoundTool, Caller, CallOutcome, ConfirmationRequest
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
    note = {
        Risk.LOW: "",
        Risk.MEDIUM: " Risk: medium (runs, and the person is told).",
        Risk.HIGH: " Risk: high (asks the person first).",
    }.get(risk, "")
    if spec.dynamic_risk is not None and risk < Risk.HIGH:
        note += " May ask the person first, depending on the arguments."
    return types.Tool(
        name=tool.wire_name,
        title=spec.title,
        description=spec.description + note,
        input_schema=compact_schema(spec.input_model.model_json_schema()),
        output_schema=compact_schema(spec.output_model.model_json_schema(mode="serialization")),
        annotations=types.ToolAnnotations(
            read_only_hint=spec.read_only,
            destructive_hint=destructive,
            idempotent_hint=spec.idempotent or spec.read_only,
            open_world_hint=spec.open_world,
        ),
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
        digest.update(f"{tool.spec.name}:{tool.wire_name}:{tool.configured_risk.label}\n".encode())
    return digest.hexdigest()[:24]


def compact_schema(schema: Any) -> Any:
    """Drop pydantic's generated titles: they repeat the property names and cost context."""
    if isinstance(schema, dict):
        return {
            key: compact_schema(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    return schema


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
    and a nonce counts once, so an answer can neither be moved to another call or another
    token's session nor replayed.
    """

    def __init__(
        self, params: types.CallToolRequestParams, used_nonces: dict[str, float], ttl: float, principal: str = "local"
    ) -> None:
        self.params = params
        self.used_nonces = used_nonces
        self.ttl = ttl
        self.principal = principal

    async def ask(self, request: ConfirmationRequest) -> Answer | AskLater:
        answer = self._answer_for(request)
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

    def _answer_for(self, request: ConfirmationRequest) -> Answer | None:
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
        now = time.monotonic()
        for nonce, seen in list(self.used_nonces.items()):
            if now - seen > self.ttl:
                del self.used_nonces[nonce]
        nonce = str(state.get("nonce"))
        if nonce in self.used_nonces:
            return None
        self.used_nonces[nonce] = now
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


def build_server(app: App, transport: str, namespace: str | None = None) -> Server[Any]:
    """One MCP server over all enabled namespaces, or over one of them (`/files/mcp`)."""
    listed = cached_definitions(app.visible_tools(namespace), app.environment.state_dir / "cache")
    used_nonces: dict[str, float] = {}
    settings = app.config.policy
    name = "mcp-tools" if namespace is None else f"mcp-tools-{namespace}"

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        caller = Caller(
            transport=transport,
            principal=principal_of(ctx, "local"),
            asker=_asker(ctx, params),
            progress=progress_reporter(ctx),
        )
        tool = app.find_tool(params.name, namespace)
        outcome = await app.gate.call(tool, params.name, params.arguments or {}, caller)
        if outcome.ask_later is not None:
            payload: types.InputRequiredResult = outcome.ask_later.payload
            return payload
        return call_result(outcome)

    def _asker(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> Any:
        if not can_elicit_form(ctx):
            return None
        if ctx.protocol_version and is_version_at_least(ctx.protocol_version, INPUT_REQUIRED_VERSION):
            return InputRequiredElicitation(
                params, used_nonces, settings.approval_ttl_seconds, principal_of(ctx, "local")
            )
        if ctx.session.can_send_request:
            return LegacyElicitation(ctx, settings.elicitation_timeout_seconds)
        return None

    server: Server[Any] = Server(
        name,
        version=__version__,
        instructions=app.instructions(namespace),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    security = RequestStateSecurity.ephemeral(ttl=float(settings.elicitation_timeout_seconds))
    server.middleware.append(RequestStateBoundary(security, default_audience=name))
    return server
