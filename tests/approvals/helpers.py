"""Shared pieces of the approvals tests: MCP clients that cannot ask, and reading the state."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_tools.state.sqlite import PolicyStore
from tests.processes import bearer

TOKEN = "tok-laptop-0123456789"
TOKENS = f'[http.tokens]\nlaptop = "{TOKEN}"\n'


@asynccontextmanager
async def http_client(url: str, token: str = TOKEN, **kwargs: Any) -> AsyncIterator[Client]:
    """The SDK's real client over streamable HTTP, without elicitation (like Claude Desktop)."""
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), **{"mode": "legacy", **kwargs}) as client,  # type: ignore[arg-type]
    ):
        yield client


def store_of(config: Path) -> PolicyStore:
    """The server's policy store, opened beside it as `mcp-tools approvals` would (demo_config's layout)."""
    return PolicyStore(config.parent / "state" / "policy.sqlite3")


def approvals(config: Path, *flags: str) -> list[dict[str, Any]]:
    """What `mcp-tools approvals list --json [--all]` prints, without starting a process."""
    store = store_of(config)
    try:
        now = time.time()
        return [item.as_dict(now) for item in store.list_approvals(include_done="--all" in flags)]
    finally:
        store.close()


def audit(config: Path) -> list[dict[str, Any]]:
    store = store_of(config)
    try:
        return [row.as_dict() for row in store.tail(500)]
    finally:
        store.close()


async def wait_for_pending(config: Path, count: int = 1, timeout: float = 20) -> list[dict[str, Any]]:
    """The pending approvals, once there are `count` of them (the calls asked from another task)."""
    with anyio.fail_after(timeout):
        while True:
            pending = [item for item in approvals(config) if item["status"] == "pending"]
            if len(pending) >= count:
                return pending
            await anyio.sleep(0.1)
