"""Resources through the real server over stdio and HTTP: listed, read, and a subscribed file or
note that changes is announced with `notifications/resources/updated`."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_tools.composition.app import build_app
from mcp_tools.transports.mcp_server import build_server
from tests.approvals.helpers import TOKENS, http_client
from tests.harness import make_config, ok
from tests.processes import demo_config, http_server, stdio_params

pytestmark = pytest.mark.anyio


class Updates:
    """The URIs of `notifications/resources/updated` a client received, awaitable."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.event = anyio.Event()

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self.event.set()

    async def next(self, timeout: float = 20) -> str:
        with anyio.fail_after(timeout):
            while not self.uris:
                self.event = anyio.Event()
                await self.event.wait()
        return self.uris.pop(0)


def config_file(tmp_path: Path) -> Path:
    vault, files = tmp_path / "vault", tmp_path / "data" / "files"
    vault.mkdir()
    files.mkdir(parents=True)
    (vault / "Plan.md").write_text("# Plan\n", encoding="utf-8")
    (files / "report.txt").write_text("draft\n", encoding="utf-8")
    return demo_config(
        tmp_path,
        TOKENS + f'[notes]\nvault = "{vault}"\nwatch = false\n',
        servers='["files", "notes"]',
    )


@asynccontextmanager
async def client_over(transport: str, config: Path, updates: Updates) -> AsyncIterator[Client]:
    if transport == "stdio":
        async with Client(stdio_params(config), mode="legacy", message_handler=updates.handler) as client:
            yield client
    else:
        with http_server(config) as base:
            async with http_client(base + "/mcp", message_handler=updates.handler) as client:
                yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_resources_over_a_real_transport(tmp_path: Path, transport: str) -> None:
    config = config_file(tmp_path)
    updates = Updates()
    async with client_over(transport, config, updates) as client:
        assert client.server_capabilities.resources.subscribe is True  # type: ignore[union-attr]
        listed = await client.list_resources(cache_mode="bypass")
        assert {resource.uri for resource in listed.resources} == {"files:///report.txt", "notes:///Plan.md"}
        read = await client.read_resource("files:///report.txt")
        assert read.contents[0].text == "draft\n"  # type: ignore[union-attr]
        await client.subscribe_resource("files:///report.txt")
        await client.subscribe_resource("notes:///Plan.md")
        ok(
            await client.call_tool(
                "files_edit", {"path": "report.txt", "edits": [{"old_string": "draft", "new_string": "final"}]}
            )
        )
        assert await updates.next() == "files:///report.txt"
        (tmp_path / "vault" / "Plan.md").write_text("# Plan\n\nChanged elsewhere.\n", encoding="utf-8")
        assert await updates.next() == "notes:///Plan.md"
        await client.unsubscribe_resource("notes:///Plan.md")
        again = await client.read_resource("files:///report.txt")
        assert again.contents[0].text == "final\n"  # type: ignore[union-attr]


async def test_a_deleted_file_is_news_too(tmp_path: Path) -> None:
    """In process: the subscription is per connection and forgotten with it; a deleted file is news too."""
    config = make_config(tmp_path, {"server": {"servers": ["files"]}})
    (tmp_path / "data" / "files").mkdir(parents=True)
    (tmp_path / "data" / "files" / "a.txt").write_text("a", encoding="utf-8")
    app = build_app(config)
    updates = Updates()
    server = build_server(app, transport="test")
    async with (
        app.running(),
        server.lifespan(server),
        Client(server, mode="legacy", message_handler=updates.handler) as client,
    ):
        await client.subscribe_resource("files:///a.txt")
        (tmp_path / "data" / "files" / "a.txt").unlink()
        assert await updates.next() == "files:///a.txt"


@asynccontextmanager
async def modern_client_over(transport: str, config: Path) -> AsyncIterator[Client]:
    if transport == "stdio":
        async with Client(stdio_params(config), mode="2026-07-28") as client:
            yield client
    else:
        with http_server(config) as base:
            async with http_client(base + "/mcp", mode="2026-07-28") as client:
                yield client


async def next_event(subscription: Any, timeout: float = 20) -> Any:
    with anyio.fail_after(timeout):
        return await subscription.__anext__()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_on_2026_07_28_a_listen_stream_carries_the_documents_it_names(tmp_path: Path, transport: str) -> None:
    """2026-07-28 has no resources/subscribe: the documents come on a `subscriptions/listen` stream,
    which acknowledges only those the caller could read, and ends with the client's cancel."""
    from mcp.shared.subscriptions import ResourceUpdated

    config = config_file(tmp_path)
    (tmp_path / "outside.txt").write_text("not served\n", encoding="utf-8")
    asked = ["files:///report.txt", "notes:///Plan.md", "files:///missing.txt", "files:///../outside.txt"]
    async with modern_client_over(transport, config) as client:
        async with client.listen(resource_subscriptions=asked) as subscription:
            assert subscription.honored.resource_subscriptions == ["files:///report.txt", "notes:///Plan.md"]
            assert not subscription.honored.prompts_list_changed
            edit = {"path": "report.txt", "edits": [{"old_string": "draft", "new_string": "final"}]}
            ok(await client.call_tool("files_edit", edit))
            assert await next_event(subscription) == ResourceUpdated(uri="files:///report.txt")
            (tmp_path / "vault" / "Plan.md").write_text("# Plan\n\nChanged elsewhere.\n", encoding="utf-8")
            assert await next_event(subscription) == ResourceUpdated(uri="notes:///Plan.md")
        with pytest.raises(MCPError) as removed, warnings.catch_warnings():  # the 2025 method, gone on 2026-07-28
            warnings.simplefilter("ignore")
            await client.subscribe_resource("files:///report.txt")
        assert removed.value.error.code == -32601
