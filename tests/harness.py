"""Connect the SDK's real MCP client to a composed mcp-tools server, in process."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext

from mcp_tools.app import App, build_app
from mcp_tools.config import parse_config
from mcp_tools.mcp_server import build_server

ElicitBehaviour = Literal["accept", "decline", "cancel", "accept_unchecked"] | None


def make_config(
    tmp_path: Path, settings: dict[str, Any] | None = None, environ: dict[str, str] | None = None
):
    """A config whose state and data live under tmp_path unless the settings say otherwise."""
    settings = {key: dict(value) for key, value in (settings or {}).items()}
    server = settings.setdefault("server", {})
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
    """A real MCP client over an in-process server, with the policy layer in front of the tools."""
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
    """The error object of a call that must have failed."""
    assert result.is_error, f"expected an error, got {result.content}"
    assert result.structured_content is None, "an error result must not carry structuredContent"
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    payload = json.loads(result.content[0].text)
    assert set(payload) == {"error"}
    return payload["error"]


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
