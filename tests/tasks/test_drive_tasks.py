"""Long Drive transfers as MCP tasks, through the real server over stdio and HTTP, both protocol
versions, with the client written from the spec and the fake Google in this process.

A large download saved to the files store runs as a task whose status says the bytes done out of
the total after every chunk (and, on 2025-11-25 over stdio, progress notifications on the call's
token), then completes with the result and its `resource_link`. A large upload cancelled between
two chunks stops there: its resumable session is dropped and no file appears in Drive. A task's
result over the result budget is cut like any other. Nothing sleeps: the fake Google holds each
chunk until the test lets it through, and the test waits on those holds.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tools.servers.drive.transfer import CHUNK_BYTES
from mcp_tools.servers.google import scopes
from tests.processes import free_port, http_server, write_config
from tests.servers.fake_google import FakeDrive, FakeGoogle
from tests.servers.gmail.fixtures import sign_in
from tests.tasks.rpc import CLOCK_ENTRY, LEGACY, MODERN, RELATED, Peer, over_http, over_stdio

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TOKEN = "tok-drive-tasks-0123456789"
SIZE = 3 * CHUNK_BYTES + 4321  # four chunks, the last one short
UPLOAD_SIZE = 2 * CHUNK_BYTES + 4321  # three chunks, within [http] max_body_bytes once in base64
HOLD_SECONDS = 120  # the longest a held request or the test waits (the machine may be slow; nothing sleeps)
MODES = [
    pytest.param("stdio", LEGACY, id="stdio-2025"),
    pytest.param("stdio", MODERN, id="stdio-2026"),
    pytest.param("http", LEGACY, id="http-2025"),
    pytest.param("http", MODERN, id="http-2026"),
]


def payload(size: int) -> bytes:
    """Bytes that differ at every offset, so a chunk out of place shows."""
    return b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(size // 32 + 1))[:size]


class Turnstile:
    """Holds each request of one kind at the fake Google (a ranged download, an upload chunk) until
    the test lets it through; the fake answers on its own threads, so holding it blocks no test."""

    def __init__(self, google: FakeGoogle, method: str) -> None:
        self.method = method
        self.arrived = threading.Semaphore(0)
        self.passes = threading.Semaphore(0)
        google.hold = self.hold

    def hold(self, method: str, headers: dict[str, str]) -> None:
        if method != self.method or (method == "drive.files.get" and "range" not in headers):
            return
        self.arrived.release()
        self.passes.acquire(timeout=HOLD_SECONDS)

    async def next(self) -> None:
        """Until the next held request has arrived."""
        assert await anyio.to_thread.run_sync(self.arrived.acquire, True, HOLD_SECONDS)

    def let_through(self, count: int = 1) -> None:
        self.passes.release(count)


def drive_config(tmp_path: Path, google: FakeGoogle, port: int) -> Path:
    settings = sign_in(tmp_path, google, [scopes.DRIVE_FILE], servers=["drive", "files"])
    (tmp_path / "data" / "files").mkdir(parents=True)
    return write_config(
        tmp_path / "config.toml",
        f'[server]\nnamespaces = ["drive", "files"]\nstate_dir = "{tmp_path / "state"}"\n'
        f'data_dir = "{tmp_path / "data"}"\nmax_result_tokens = 1000\n'
        'tools = ["*.core", "drive.create"]\n'
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\napi_endpoint = "{google.url}"\n'
        f"retry_seconds = 3\n[drive]\nmax_read_bytes = 4096\n"
        f'[http]\nport = {port}\n[http.tokens]\nlaptop = "{TOKEN}"\n',
    )


@asynccontextmanager
async def serving(tmp_path: Path, google: FakeGoogle, transport: str, version: str) -> AsyncIterator[Peer]:
    clock = tmp_path / "clock"
    clock.write_text("0", encoding="utf-8")
    port = free_port()
    config = drive_config(tmp_path, google, port)
    if transport == "stdio":
        async with over_stdio(config, clock, version) as peer:
            yield peer
        return
    with http_server(config, port=port, entry=CLOCK_ENTRY, startup=120, TASKS_TEST_CLOCK=str(clock)) as base:
        async with over_http(base + "/mcp", TOKEN, version) as peer:
            yield peer


async def call_as_task(peer: Peer, name: str, arguments: dict[str, Any], token: str | None = None) -> str:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    if peer.version == LEGACY:
        params["task"] = {}
    created = await peer.request("tools/call", params)
    task = created["task"] if peer.version == LEGACY else created
    if peer.version == MODERN:
        assert created["resultType"] == "task"
    assert task["status"] == "working"
    return str(task["taskId"])


async def result_of(peer: Peer, task_id: str) -> dict[str, Any]:
    if peer.version == LEGACY:  # tasks/result waits for the end itself
        result = await peer.request("tasks/result", {"taskId": task_id}, timeout=HOLD_SECONDS)
        assert result["_meta"][RELATED] == {"taskId": task_id}
        return result
    return dict((await peer.until(task_id, "completed", timeout=HOLD_SECONDS))["result"])


@pytest.mark.parametrize(("transport", "version"), MODES)
async def test_a_large_download_runs_as_a_task_with_progress_then_completes(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive, transport: str, version: str
) -> None:
    data = payload(SIZE)
    item = drive.add("film.bin", data, "application/octet-stream")
    gate = Turnstile(google, "drive.files.get")
    statuses: list[str] = []
    async with serving(tmp_path, google, transport, version) as peer:
        tools = {tool["name"]: tool for tool in (await peer.request("tools/list"))["tools"]}
        if version == LEGACY:  # 2026-07-28 has no execution field: the server decides
            assert tools["drive_read"]["execution"] == {"taskSupport": "optional"}
            assert tools["drive_create"]["execution"] == {"taskSupport": "optional"}
        else:
            assert "execution" not in tools["drive_read"]
            # unasked, only a long call is made a task: a read that saves nothing answers at once
            plain = await peer.request("tools/call", {"name": "drive_read", "arguments": {"id": item.id}})
            assert plain.get("resultType", "complete") == "complete" and plain["isError"] is True
        task_id = await call_as_task(peer, "drive_read", {"id": item.id, "save_to": "in/film.bin"}, "dl-1")
        for _ in range(4):  # each chunk is asked for once the one before is in the task's status
            await gate.next()
            task = await peer.get(task_id)
            assert task["status"] == "working"
            statuses.append(task["statusMessage"])
            gate.let_through()
        result = await result_of(peer, task_id)
        ended = await peer.get(task_id)
    assert statuses == [
        f"Bytes downloaded from Drive ({done:,}/{SIZE:,})"
        for done in (0, CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES)
    ]
    assert ended["status"] == "completed" and ended.get("statusMessage") == "Completed."
    assert result["structuredContent"]["encoding"] == "saved" and result["structuredContent"]["file"]["size"] == SIZE
    [link] = [block for block in result["content"] if block["type"] == "resource_link"]
    assert (link["uri"], link["name"]) == ("files:///in/film.bin", "film.bin")
    assert (tmp_path / "data" / "files" / "in" / "film.bin").read_bytes() == data
    assert [start for start, _ in drive.ranges] == [0, CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES]
    if transport == "stdio" and version == LEGACY:  # on the call's own token, each with the related task
        progress = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
        assert [(p["progress"], p["total"]) for p in progress] == [
            (done, SIZE) for done in (0, CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES, SIZE)
        ]
        assert {p["progressToken"] for p in progress} == {"dl-1"}
        assert all(p["_meta"][RELATED] == {"taskId": task_id} for p in progress)
        status = [n["params"] for n in peer.notifications if n["method"] == "notifications/tasks/status"]
        assert status and status[-1]["taskId"] == task_id and status[-1]["status"] == "completed"
        assert all(RELATED not in (item.get("_meta") or {}) for item in status)  # its taskId says it already
        assert RELATED not in (ended.get("_meta") or {})
    if transport == "stdio" and version == MODERN:  # 2026-07-28 tasks carry no progress notifications
        assert not [n for n in peer.notifications if n["method"] == "notifications/progress"]


@pytest.mark.parametrize(("transport", "version"), MODES)
async def test_a_cancelled_upload_stops_between_chunks_and_leaves_nothing_in_drive(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive, transport: str, version: str
) -> None:
    encoded = base64.b64encode(payload(UPLOAD_SIZE)).decode("ascii")
    gate = Turnstile(google, "drive.files.create:put")
    before = set(drive.files)
    async with serving(tmp_path, google, transport, version) as peer:
        task_id = await call_as_task(peer, "drive_create", {"name": "film.bin", "content_base64": encoded}, "up-1")
        await gate.next()
        gate.let_through()
        await gate.next()  # the second chunk is at Drive when the client cancels
        cancelled = await peer.request("tasks/cancel", {"taskId": task_id})
        assert cancelled["status"] == "cancelled" if version == LEGACY else cancelled["resultType"] == "complete"
        gate.let_through(4)
        assert await anyio.to_thread.run_sync(google.resumable.dropping.wait, HOLD_SECONDS)
        task = await peer.get(task_id)
    assert task["status"] == "cancelled" and "result" not in task
    if transport == "stdio" and version == LEGACY:  # the second chunk's progress never went out
        progress = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
        assert [(p["progress"], p["total"]) for p in progress] == [(0, UPLOAD_SIZE), (CHUNK_BYTES, UPLOAD_SIZE)]
    assert google.resumable.chunks == [CHUNK_BYTES, CHUNK_BYTES]  # no chunk after the cancel
    assert google.resumable.sessions == {} and google.resumable.finished == []
    assert set(drive.files) == before and not any(item.name == "film.bin" for item in drive.files.values())


@pytest.mark.parametrize(("transport", "version"), MODES)
async def test_a_tasks_result_over_the_result_budget_is_cut(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive, transport: str, version: str
) -> None:
    name = "A report with a very long name " * 200 + ".bin"  # 6,000 characters, told twice in the result
    item = drive.add(name, b"\x00" * 5000, "application/octet-stream")
    async with serving(tmp_path, google, transport, version) as peer:
        task_id = await call_as_task(peer, "drive_read", {"id": item.id, "save_to": "in/report.bin"})
        result = await result_of(peer, task_id)
    text = "".join(block["text"] for block in result["content"] if block["type"] == "text")
    assert len(text) + len(json.dumps(result["structuredContent"])) <= 4000  # 1,000 tokens
    assert "result budget" in text
    assert (tmp_path / "data" / "files" / "in" / "report.bin").stat().st_size == 5000


@pytest.mark.parametrize(("transport", "version"), MODES)
async def test_a_large_upload_from_the_files_store_runs_as_a_task_then_completes(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive, transport: str, version: str
) -> None:
    data = payload(SIZE)  # over [http] max_body_bytes in base64: only from the store can it go up
    gate = Turnstile(google, "drive.files.create:put")
    statuses: list[str] = []
    async with serving(tmp_path, google, transport, version) as peer:
        (tmp_path / "data" / "files" / "film.bin").write_bytes(data)
        task_id = await call_as_task(peer, "drive_create", {"name": "film.bin", "from_path": "film.bin"})
        for _ in range(4):
            await gate.next()
            statuses.append((await peer.get(task_id))["statusMessage"])
            gate.let_through()
        result = await result_of(peer, task_id)
    assert statuses == [
        f"Bytes uploaded to Drive ({done:,}/{SIZE:,})" for done in (0, CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES)
    ]
    created = result["structuredContent"]["file"]
    assert drive.files[created["id"]].content == data and created["size"] == SIZE
    assert google.resumable.finished == ["drive.files.create"]
