"""`mcp-tools serve` over stdio, in a real subprocess, with the SDK's real client."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.harness import ElicitBehaviour, annotation, elicitation_handler, failure, ok
from tests.processes import DEMO_ENTRY, ROOT, child_env, cli_in_process, demo_config, stdio_params

pytestmark = pytest.mark.anyio
BOTH_ERAS = pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])


@BOTH_ERAS
async def test_lists_tools_with_wire_names_and_annotations(tmp_path: Path, mode: str) -> None:
    async with Client(stdio_params(demo_config(tmp_path)), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == ["demo_echo", "demo_erase", "demo_fail", "demo_note"]
    assert annotation(tools["demo_echo"], "read_only_hint") is True
    assert annotation(tools["demo_erase"], "destructive_hint") is True


@BOTH_ERAS
@pytest.mark.parametrize(("answer", "runs"), [("accept", True), ("decline", False), ("cancel", False)])
async def test_elicitation_decides_high_risk_calls(
    tmp_path: Path, mode: str, answer: ElicitBehaviour, runs: bool
) -> None:
    config = demo_config(tmp_path)
    async with Client(stdio_params(config), mode=mode, elicitation_callback=elicitation_handler(answer)) as client:
        result = await client.call_tool("demo_erase", {"target": "t"})
    if runs:
        assert ok(result) == {"erased": "t"}
    else:
        assert failure(result)["kind"] == "declined_by_user"
    audit = [json.loads(line) for line in cli_in_process(config, "audit", "--json").stdout.splitlines()]
    assert [(row["tool"], row["decision"], row["transport"]) for row in audit] == [
        ("demo.erase", "confirmed" if runs else "declined", "stdio")
    ]


@BOTH_ERAS
async def test_client_without_elicitation_uses_out_of_band_approval(tmp_path: Path, mode: str) -> None:
    config = demo_config(tmp_path)
    async with Client(stdio_params(config), mode=mode) as client:
        first = failure(await client.call_tool("demo_erase", {"target": "t"}))
        assert first["kind"] == "approval_required"
        listed = json.loads(cli_in_process(config, "approvals", "list", "--json").stdout)
        assert [item["id"] for item in listed] == [first["approval_id"]]
        assert listed[0]["arguments"] == {"target": "t"} and listed[0]["status"] == "pending"
        approve = cli_in_process(config, "approvals", "approve", first["approval_id"])
        assert approve.returncode == 0, approve.stderr
        assert ok(await client.call_tool("demo_erase", {"target": "t"})) == {"erased": "t"}
        third = failure(await client.call_tool("demo_erase", {"target": "t"}))
        assert third["kind"] == "approval_required" and third["approval_id"] != first["approval_id"]
        assert cli_in_process(config, "approvals", "deny", third["approval_id"]).returncode == 0
        assert failure(await client.call_tool("demo_erase", {"target": "t"}))["kind"] == "declined_by_user"
    # A used approval cannot be decided again.
    again = cli_in_process(config, "approvals", "approve", first["approval_id"])
    assert again.returncode == 1 and "consumed" in again.stderr
    decisions = [json.loads(line)["decision"] for line in cli_in_process(config, "audit", "--json").stdout.splitlines()]
    assert decisions == ["approval_required", "approved_out_of_band", "approval_required", "declined"]


def test_malformed_requests_get_errors_and_the_server_keeps_serving(tmp_path: Path) -> None:
    """Raw JSON-RPC on stdin, as a misbehaving client would send it."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": 5}},
        "this is not json",
        "[]",
        "42",
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "demo_echo", "arguments": [1]}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "demo_echo", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "demo_echo", "arguments": {"text": "é"}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(demo_config(tmp_path)), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_env(),
        cwd=str(ROOT),
    )
    assert process.stdin is not None and process.stdout is not None
    replies: dict[object, dict[str, Any]] = {}
    unaddressed: list[dict[str, Any]] = []  # answers to lines that were not requests: id null
    try:
        for message in messages:
            process.stdin.write(((message if isinstance(message, str) else json.dumps(message)) + "\n").encode())
        process.stdin.flush()
        while not {2, 3, 4, 5} <= replies.keys():
            line = process.stdout.readline()
            assert line, "the server stopped answering"
            reply = json.loads(line)
            if reply.get("id") is None:
                unaddressed.append(reply)
            else:
                replies[reply["id"]] = reply
        assert process.poll() is None  # still serving
    finally:
        process.kill()
        process.wait(timeout=10)
    assert replies[2]["error"]["code"] == -32602  # invalid params: no tool name
    assert replies[3]["error"]["code"] == -32602  # arguments must be an object
    assert replies[4]["result"]["isError"] is True
    assert "structuredContent" not in replies[4]["result"]
    assert json.loads(replies[4]["result"]["content"][0]["text"])["error"]["message"] == "demo.echo needs text"
    assert replies[5]["result"]["structuredContent"] == {"echo": "hello: é"}
    assert all("Traceback" not in json.dumps(reply) for reply in replies.values())
    # JSON-RPC 2.0: a line that is not JSON is a parse error, JSON that is no request an invalid request
    assert [reply["error"]["code"] for reply in unaddressed] == [-32700, -32600, -32600]


async def test_non_ascii_round_trips_under_a_non_utf8_locale(tmp_path: Path) -> None:
    text = "naïve café — 東京 🗂️ NFD: e\u0301"
    params = stdio_params(demo_config(tmp_path), LANG="C", LC_ALL="C", PYTHONIOENCODING="latin-1", PYTHONUTF8="0")
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("demo_echo", {"text": text})
    assert ok(result) == {"echo": f"hello: {text}"}


async def test_serves_only_the_namespaces_asked_for(tmp_path: Path) -> None:
    config = demo_config(tmp_path, servers='["demo", "files"]')
    async with Client(stdio_params(config, "--servers", "demo"), mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert names and all(name.startswith("demo_") for name in names)


async def test_progress_notifications_reach_the_client(tmp_path: Path) -> None:
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async with Client(stdio_params(demo_config(tmp_path)), mode="legacy") as client:
        result = await client.call_tool("demo_echo", {"text": "x"}, progress_callback=on_progress)
    assert ok(result)
    assert updates == [(1.0, 1.0, "echoed")]
    assert isinstance(result, types.CallToolResult)


async def test_names_that_are_not_utf8_are_listed_escaped_and_the_server_keeps_answering(tmp_path: Path) -> None:
    """An unzip can leave a name with a Latin-1 byte; the server must list it, not die encoding it."""
    config = demo_config(tmp_path, servers='["demo", "files"]')
    root = tmp_path / "data" / "files"
    root.mkdir(parents=True)
    (root / os.fsdecode(b"caf\xe9-report.txt")).write_bytes(b"latin-1 name")
    with anyio.fail_after(60):  # a server that died on the name would leave the call unanswered
        async with Client(stdio_params(config), mode="legacy") as client:
            listed = ok(await client.call_tool("files_list", {}))
            assert [entry["path"] for entry in listed["entries"]] == ["caf\\xe9-report.txt"]
            assert ok(await client.call_tool("demo_echo", {"text": "still here"})) == {"echo": "hello: still here"}
            read = ok(await client.call_tool("files_read", {"path": "caf\\xe9-report.txt"}))
            assert read["content"] == "latin-1 name"
    assert os.listdir(root) == [os.fsdecode(b"caf\xe9-report.txt")]


async def test_hostile_arguments_over_stdio_never_stop_the_server(tmp_path: Path) -> None:
    from tests.test_hostile_input import assert_answered_cleanly, hostile_arguments

    config = demo_config(tmp_path, servers='["demo", "files"]')
    root = tmp_path / "data" / "files"
    root.mkdir(parents=True)
    (root / os.fsdecode(b"\xff\xfe.bin")).write_bytes(b"\x00\xff")
    rng = random.Random(3)
    with anyio.fail_after(120):
        async with Client(stdio_params(config), mode="legacy") as client:
            for tool in (await client.list_tools()).tools:
                if tool.name == "demo_fail":
                    continue  # it fails on purpose
                for _ in range(8):
                    arguments = hostile_arguments(rng, tool.input_schema)
                    assert_answered_cleanly(tool.name, arguments, await client.call_tool(tool.name, arguments))
            assert ok(await client.call_tool("demo_echo", {"text": "alive"})) == {"echo": "hello: alive"}


def test_a_client_that_goes_away_ends_the_server_quietly(tmp_path: Path) -> None:
    """The client quits after its first answer: no traceback lands in its log."""
    process = initialized_server(tmp_path)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the client is gone: nobody reads the next answer
    process.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
    process.stdin.close()
    try:
        process.wait(timeout=60)
    finally:
        process.kill()
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


@pytest.mark.parametrize("then", ["nothing", "a request"])
def test_a_client_that_stops_reading_ends_the_server_even_with_stdin_open(tmp_path: Path, then: str) -> None:
    """The client closes its end of our stdout but not of our stdin: the server ends by itself,
    whether or not it has an answer to write, with no traceback (exit 141, as a pipe writer)."""
    process = initialized_server(tmp_path)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdout.close()
    if then == "a request":
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}\n')
        process.stdin.flush()
    try:
        code = process.wait(timeout=30)
    finally:
        process.kill()
        process.stdin.close()
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert code == 141
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


def test_sigterm_ends_the_server_cleanly(tmp_path: Path) -> None:
    """A client (or systemd) stopping the server with SIGTERM: exit 0 after a clean shutdown, no traceback."""
    import signal

    process = initialized_server(tmp_path)  # serving, stdin still open
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=30)
    finally:
        process.kill()
        process.stdin.close()
        process.stdout.close()
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr


def initialized_server(tmp_path: Path) -> subprocess.Popen[bytes]:
    """`serve` over stdio spoken to raw: initialized, its answer read, stdin and stdout still open."""
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(demo_config(tmp_path)), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=str(ROOT),
    )
    assert process.stdin is not None and process.stdout is not None
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    process.stdin.write(
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}) + "\n").encode()
    )
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    return process
