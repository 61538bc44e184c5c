"""Shared pieces of the approvals tests: MCP clients that cannot ask, and reading the state."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.processes import bearer, run_cli

TOKEN = "tok-laptop-0123456789"
TOKENS = f'[http.tokens]\nlaptop = "{TOKEN}"\n'


@asynccontextmanager
async def http_client(url: str, token: str = TOKEN, **kwargs: Any) -> AsyncIterator[Client]:
    """The SDK's real client over streamable HTTP, without elicitation (like Claude Desktop)."""
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy", **kwargs) as client,  # type: ignore[arg-type]
    ):
        yield client


def approvals(config: Path, *flags: str) -> list[dict[str, Any]]:
    result = run_cli(config, "approvals", "list", "--json", *flags)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def audit(config: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run_cli(config, "audit", "--json", "--tail", "500").stdout.splitlines()]


async def wait_for_pending(config: Path, count: int = 1, timeout: float = 20) -> list[dict[str, Any]]:
    """The pending approvals, once there are `count` of them (the calls asked from another task)."""
    with anyio.fail_after(timeout):
        while True:
            pending = [item for item in approvals(config) if item["status"] == "pending"]
            if len(pending) >= count:
                return pending
            await anyio.sleep(0.1)
