"""A client for MCP tasks written from the specification, since the SDK's client has none.

Raw JSON-RPC: over the SDK's stdio transport (a real `mcp-tools serve` process) or over HTTP with
httpx2 (a real `serve --http`). A 2025-11-25 client initializes and speaks in its session; a
2026-07-28 client sends its version, identity and capabilities in every request's `_meta` (and the
routing headers over HTTP). Requests the server sends (a confirmation form) are answered by `answer`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx2
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import jsonrpc_message_adapter

from tests.processes import ROOT, child_env

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
CLOCK_ENTRY = str(ROOT / "tests" / "tasks" / "serve_clocked.py")
Answer = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = int(error.get("code", 0))
        self.message = str(error.get("message", ""))
        self.data = error.get("data")


def accept_forms(seen: list[dict[str, Any]] | None = None, action: str = "accept") -> Answer:
    """A client that shows the confirmation form and gets this answer from the person."""

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert method == "elicitation/create", method
        if seen is not None:
            seen.append(params)
        return {"action": action, "content": {"confirm": True}} if action == "accept" else {"action": action}

    return answer


class Peer:
    """One client: requests out, answers matched by id, notifications kept in order."""

    def __init__(self, version: str, capabilities: dict[str, Any], answer: Answer | None) -> None:
        self.version = version
        self.capabilities = capabilities
        self.answer = answer
        self.notifications: list[dict[str, Any]] = []
        self.ids = itertools.count(1)
        self._waiting: dict[int, tuple[anyio.Event, list[dict[str, Any]]]] = {}

    def params_of(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.version != MODERN:
            return params
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        }
        return {**params, "_meta": {**meta, **params.get("_meta", {})}}

    async def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        raise NotImplementedError

    async def result(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        return await self.request(method, params, timeout)

    async def _server_request(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.answer is None:
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        result = await self.answer(message["method"], message.get("params") or {})
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    # The task calls, as the specification writes them.
    async def call_as_task(self, name: str, arguments: dict[str, Any], ttl: int | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if self.version == LEGACY:
            params["task"] = {} if ttl is None else {"ttl": ttl}
        return await self.request("tools/call", params)

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.request("tasks/get", {"taskId": task_id})

    async def until(self, task_id: str, *statuses: str, timeout: float = 30) -> dict[str, Any]:
        """Poll tasks/get until the task is in one of `statuses`."""
        with anyio.fail_after(timeout):
            while True:
                task = await self.get(task_id)
                if task["status"] in statuses:
                    return task
                await anyio.sleep(0.05)


class StdioPeer(Peer):
    def __init__(self, version: str, capabilities: dict[str, Any], answer: Answer | None) -> None:
        super().__init__(version, capabilities, answer)
        self.write: Any = None

    async def send(self, message: dict[str, Any]) -> None:
        await self.write.send(SessionMessage(jsonrpc_message_adapter.validate_python(message)))

    async def read(self, stream: Any, group: anyio.abc.TaskGroup) -> None:
        async for item in stream:
            if isinstance(item, Exception):
                continue
            message = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            if "method" in message and "id" in message:
                group.start_soon(self._answer_request, message)
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") in self._waiting:
                event, box = self._waiting.pop(message["id"])
                box.append(message)
                event.set()

    async def _answer_request(self, message: dict[str, Any]) -> None:
        await self.send(await self._server_request(message))

    async def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        request_id = next(self.ids)
        event, box = anyio.Event(), []
        self._waiting[request_id] = (event, box)
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": self.params_of(method, params or {})}
        await self.send(body)
        with anyio.fail_after(timeout):
            await event.wait()
        answer = box[0]
        if "error" in answer:
            raise RpcError(answer["error"])
        return dict(answer["result"])


class HttpPeer(Peer):
    def __init__(
        self, http: httpx2.AsyncClient, url: str, version: str, capabilities: dict[str, Any], answer: Answer | None
    ) -> None:
        super().__init__(version, capabilities, answer)
        self.http = http
        self.url = url
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def headers_of(self, method: str, params: dict[str, Any]) -> dict[str, str]:
        if self.version != MODERN:
            return self.headers
        headers = {**self.headers, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        name = params.get("name") if method == "tools/call" else params.get("taskId")
        if isinstance(name, str):
            headers["Mcp-Name"] = name
        return headers

    async def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
        request_id = next(self.ids)
        sent = self.params_of(method, params or {})
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": sent}
        with anyio.fail_after(timeout):
            async with self.http.stream("POST", self.url, json=body, headers=self.headers_of(method, sent)) as response:
                if response.headers.get("content-type", "").startswith("application/json"):  # errors: 4xx on 2026
                    answer = json.loads(await response.aread())
                else:
                    assert response.status_code == 200, (response.status_code, await response.aread())
                    answer = await self._from_stream(response, request_id)
        if "error" in answer:
            raise RpcError(answer["error"])
        return dict(answer["result"])

    async def _from_stream(self, response: Any, request_id: int) -> dict[str, Any]:
        async for line in response.aiter_lines():
            if not line.startswith("data:") or not line[5:].strip():
                continue
            message = json.loads(line[5:])
            if "method" in message and "id" in message:
                reply = await self._server_request(message)
                posted = await self.http.post(self.url, json=reply, headers=self.headers)
                assert posted.status_code in (200, 202), posted.text
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == request_id:
                return dict(message)
        raise AssertionError("the stream ended without an answer")


def legacy_capabilities(forms: bool) -> dict[str, Any]:
    return {"elicitation": {"form": {}}} if forms else {}


def modern_capabilities(forms: bool, tasks: bool = True) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"elicitation": {"form": {}}} if forms else {}
    if tasks:
        capabilities["extensions"] = {EXTENSION: {}}
    return capabilities


async def _initialize(peer: Peer, forms: bool) -> dict[str, Any]:
    init = await peer.request(
        "initialize",
        {
            "protocolVersion": LEGACY,
            "capabilities": legacy_capabilities(forms),
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    return init


def clocked_params(config: Path, clock: Path) -> StdioServerParameters:
    """`mcp-tools serve` on stdio, its state on the clock the file `clock` moves (seconds ahead)."""
    return StdioServerParameters(
        command=sys.executable,
        args=[CLOCK_ENTRY, "--config", str(config), "serve"],
        env=child_env(TASKS_TEST_CLOCK=str(clock)),
        cwd=str(ROOT),
    )


@asynccontextmanager
async def over_stdio(
    config: Path, clock: Path, version: str = LEGACY, forms: bool = False, answer: Answer | None = None
) -> AsyncIterator[StdioPeer]:
    capabilities = legacy_capabilities(forms) if version == LEGACY else modern_capabilities(forms)
    peer = StdioPeer(version, capabilities, answer or (accept_forms() if forms else None))
    with open(os.devnull, "w") as errlog:  # the server's log is not this test's
        async with stdio_client(clocked_params(config, clock), errlog=errlog) as (read, write):
            peer.write = write
            async with anyio.create_task_group() as group:
                group.start_soon(peer.read, read, group)
                if version == LEGACY:
                    peer.initialized = await _initialize(peer, forms)  # type: ignore[attr-defined]
                    await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                yield peer
                group.cancel_scope.cancel()


@asynccontextmanager
async def over_http(
    url: str, token: str, version: str = LEGACY, forms: bool = False, answer: Answer | None = None
) -> AsyncIterator[HttpPeer]:
    capabilities = legacy_capabilities(forms) if version == LEGACY else modern_capabilities(forms)
    async with httpx2.AsyncClient(timeout=120, headers={"Authorization": f"Bearer {token}"}) as http:
        peer = HttpPeer(http, url, version, capabilities, answer or (accept_forms() if forms else None))
        if version == LEGACY:
            sent = {
                "protocolVersion": LEGACY,
                "capabilities": capabilities,
                "clientInfo": {"name": "t", "version": "1"},
            }
            first = await http.post(
                url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": sent}, headers=peer.headers
            )
            assert first.status_code == 200, first.text
            peer.headers = {**peer.headers, "Mcp-Session-Id": first.headers["mcp-session-id"]}
            peer.headers["MCP-Protocol-Version"] = LEGACY
            peer.initialized = _first_message(first)  # type: ignore[attr-defined]
            done = await http.post(
                url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=peer.headers
            )
            assert done.status_code == 202
        yield peer
        with contextlib.suppress(httpx2.HTTPError):
            await http.delete(url, headers=peer.headers)


def _first_message(response: httpx2.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("application/json"):
        return dict(response.json()["result"])
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return dict(json.loads(line[5:])["result"])
    raise AssertionError(response.text)
