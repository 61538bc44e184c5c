"""Connect the SDK's real MCP client to a composed mcp-tools server, in process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext

from mcp_tools.composition.app import App, build_app
from mcp_tools.core.config import parse_config
from mcp_tools.transports.mcp_server import build_server
from tests.results import error_payload

ElicitBehaviour = Literal["accept", "decline", "cancel", "accept_unchecked"] | None


def make_config(tmp_path: Path, settings: dict[str, Any] | None = None, environ: dict[str, str] | None = None):
    """A config whose state and data live under tmp_path unless the settings say otherwise.

    It serves every tool of the running namespaces (`tools = ["*"]`) unless the settings choose:
    tests of a namespace exercise all its tiers; tests of the default pass `"tools": None`.
    """
    settings = {key: dict(value) for key, value in (settings or {}).items()}
    server = settings.setdefault("server", {})
    server.setdefault("tools", ["*"])
    server.setdefault("state_dir", str(tmp_path / "state"))
    server.setdefault("data_dir", str(tmp_path / "data"))
    return parse_config(settings, environ or {})


def elicitation_handler(behaviour: ElicitBehaviour, seen: list[types.ElicitRequestParams] | None = None):
    if behaviour is None:
        return None

    async def answer(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        if seen is not None:
            seen.append(params)
        if behaviour == "accept":
            return types.ElicitResult(action="accept", content={"confirm": True})
        if behaviour == "accept_unchecked":
            return types.ElicitResult(action="accept", content={"confirm": False})
        return types.ElicitResult(action=behaviour)

    return answer


@asynccontextmanager
async def connect(
    tmp_path: Path,
    settings: dict[str, Any] | None = None,
    *,
    elicit: ElicitBehaviour = "accept",
    mode: str = "legacy",
    seen: list[types.ElicitRequestParams] | None = None,
    app: App | None = None,
) -> AsyncIterator[Client]:
    """A real MCP client over an in-process server, with the policy layer in front of the tools.

    Every result it returns has been checked against the tool's `outputSchema` or the error
    shape (the session fixture in conftest.py does that for every real client).
    """
    app = app or build_app(make_config(tmp_path, settings))
    server = build_server(app, transport="test")
    async with (
        app.running(),
        Client(server, mode=mode, elicitation_callback=elicitation_handler(elicit, seen)) as client,
    ):
        yield client


def ok(result: types.CallToolResult) -> dict[str, Any]:
    """The structured result of a call that must have succeeded."""
    assert not result.is_error, f"expected success, got {result.content}"
    assert result.structured_content is not None
    return result.structured_content


def failure(result: types.CallToolResult) -> dict[str, Any]:
    """The error object of a call that must have failed (its shape checked by `tests/results.py`)."""
    assert result.is_error, f"expected an error, got {result.content}"
    error: dict[str, Any] = error_payload(result)["error"]
    return error


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


SPEC_DEFAULT_HINTS = {
    "read_only_hint": False,
    "destructive_hint": True,
    "idempotent_hint": False,
    "open_world_hint": True,
}


def annotation(tool: types.Tool, hint: str) -> bool:
    """A tool's hint as the spec reads it: a hint left out takes the spec's default, and a
    read-only tool is neither destructive nor anything but idempotent."""
    annotations = tool.annotations or types.ToolAnnotations()
    if annotations.read_only_hint is True and hint in ("destructive_hint", "idempotent_hint"):
        return hint == "idempotent_hint"
    value = getattr(annotations, hint)
    return SPEC_DEFAULT_HINTS[hint] if value is None else value
