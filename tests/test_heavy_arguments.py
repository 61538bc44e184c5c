"""Calls with absurdly many, deeply nested or oversized arguments, for every tool, on every
transport: each is refused early and clearly, and another client is served meanwhile.

Describing a validation error used to look the whole error list up again for each unknown
name, on the event loop: 40,000 names held every other client for over 20 seconds, and a stdio
server fed a 4 MiB line spun for more than 15 minutes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from mcp_tools.policy.stages.arguments import MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_NAMES
from tests.harness import failure, ok
from tests.processes import bearer, demo_config, http_server, stdio_params
from tests.test_http import http_client

pytestmark = pytest.mark.anyio
TOKENS = '[http.tokens]\nheavy = "tok-heavy-0123456789"\nother = "tok-other-0123456789"\n'
MANY = 2 * MAX_ARGUMENT_NAMES  # about 600 KB of JSON
# Far above anything a call could take on a loaded machine; the old code took minutes here.
SERVED_WITHIN_SECONDS = 15.0


def many_keyed() -> dict[str, Any]:
    return {f"unknown_argument_{index}": index for index in range(MANY)}


def deeply_nested() -> dict[str, Any]:
    value: Any = "bottom"
    for _ in range(MAX_ARGUMENT_DEPTH + 30):
        value = {"a": value}
    return {"nested": value}


def oversized() -> dict[str, Any]:
    return {"unknown": "x" * 1_000_000, **{f"extra_{index}": [index] * 10 for index in range(MAX_ARGUMENT_NAMES - 10)}}


HEAVY = {"many-keyed": many_keyed, "deeply nested": deeply_nested, "oversized": oversized}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("heavy")
    config = demo_config(tmp_path, 'tools = ["*"]\n' + TOKENS, servers='["demo", "files"]')
    (tmp_path / "data" / "files").mkdir(parents=True)
    with http_server(config) as base:
        yield base, config


def refused_clearly(kind: str, error: dict[str, Any]) -> bool:
    """The refusal names what to fix: too many names, too deep, or the names it does not take."""
    message = str(error.get("message", ""))
    if error.get("kind") != "invalid_arguments":
        return False
    if kind == "many-keyed":
        return "names were not read" in message
    if kind == "deeply nested":
        return "nested more than" in message
    return "does not take" in message and "more problems" in message


class Latency:
    """Another client's calls while the heavy ones run: each must be answered, and soon."""

    def __init__(self) -> None:
        self.answered = 0
        self.slowest = 0.0

    async def keep_calling(self, client: Client, done: anyio.Event) -> None:
        while not done.is_set():
            started = time.monotonic()
            ok(await client.call_tool("files_list", {}))
            self.answered += 1
            self.slowest = max(self.slowest, time.monotonic() - started)


async def test_heavy_arguments_for_every_tool_are_refused_while_another_client_is_served(
    server: tuple[str, Path],
) -> None:
    base, _ = server
    latency = Latency()
    async with (
        http_client(base + "/mcp", "tok-heavy-0123456789", mode="legacy") as heavy,
        http_client(base + "/mcp", "tok-other-0123456789", mode="2026-07-28") as other,
    ):
        names = [tool.name for tool in (await heavy.list_tools()).tools]
        assert "files_list" in names and "demo_erase" in names
        done = anyio.Event()
        unclear: list[tuple[str, str, Any]] = []
        async with anyio.create_task_group() as group:
            group.start_soon(latency.keep_calling, other, done)
            for name in names:
                for kind, arguments in HEAVY.items():
                    error = failure(await heavy.call_tool(name, arguments()))
                    if not refused_clearly(kind, error):
                        unclear.append((name, kind, error))
            done.set()
    assert unclear == []
    assert latency.answered >= 1
    assert latency.slowest < SERVED_WITHIN_SECONDS


async def test_heavy_text_calls_are_refused_while_another_client_is_served(server: tuple[str, Path]) -> None:
    base, _ = server
    # The parser reads a reply's first 1,000,000 characters: two calls fit.
    just_allowed = {f"u{index}": index for index in range(MAX_ARGUMENT_NAMES - 1_000)}
    calls = [("files.list", many_keyed()), ("demo.echo", just_allowed)]
    reply = "\n\n".join(json.dumps({"tool": name, **arguments}) for name, arguments in calls)
    latency = Latency()
    async with (
        http_client(base + "/mcp", "tok-other-0123456789", mode="2026-07-28") as other,
        httpx2.AsyncClient(timeout=120, headers=bearer("tok-heavy-0123456789")) as http,
    ):
        done = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(latency.keep_calling, other, done)
            answer = await http.post(base + "/text-calls?output=results", content=reply.encode())
            done.set()
    assert answer.status_code == 200, answer.text[:500]
    results = answer.json()
    assert [result["name"] for result in results] == ["files.list", "demo.echo"]
    assert all("error" in result for result in results)
    assert "names were not read" in results[0]["error"]
    assert "does not take" in results[1]["error"] and "more problems" in results[1]["error"]
    assert latency.slowest < SERVED_WITHIN_SECONDS


async def test_a_stdio_server_refuses_a_line_of_many_names_and_answers_the_next_call(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo", "files"]')
    (tmp_path / "data" / "files").mkdir(parents=True)
    async with Client(stdio_params(config), mode="legacy") as client:
        with anyio.fail_after(120):  # the old code spun for more than 15 minutes on such a line
            refused = failure(await client.call_tool("files_list", {f"k{i}": i for i in range(400_000)}))
            assert refused["kind"] == "invalid_arguments" and "names were not read" in refused["message"]
            deep = failure(await client.call_tool("demo_echo", deeply_nested()))
            assert "nested more than" in deep["message"]
            assert ok(await client.call_tool("demo_echo", {"text": "still here"}))
