"""`[http.oauth] calls_per_minute` counts every call, however its body is shaped or sent.

Raw HTTP against `serve --http` on 127.0.0.1. Static tokens are counted per principal like
access tokens, so each test spends the budget of a token of its own on one server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.processes import bearer, cli_in_process, demo_config, free_port, http_server

BODY_LIMIT = 4 * 1024 * 1024  # [http] max_body_bytes by default
NAMES = ("padded", "chunked", "batch", "huge", "broken", "text", "textmcp")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def token(name: str) -> str:
    return f"tok-{name}-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("budget")
    port = free_port()
    tokens = "".join(f'{name} = "{token(name)}"\n' for name in NAMES)
    config = demo_config(
        tmp_path,
        f"[http.tokens]\n{tokens}"
        f'[http.oauth]\nissuer = "http://127.0.0.1:{free_port()}"\nresource = "http://127.0.0.1:{port}/mcp"\n'
        "calls_per_minute = 2\n",
    )
    with http_server(config, port=port) as base:
        yield base, config


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "budget", "version": "1"},
}
MODERN = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "demo_echo"}


def call(text: str, id_: int = 2) -> dict[str, Any]:
    """A 2026-07-28 call: it needs no session, so each body stands alone."""
    params = {"name": "demo_echo", "arguments": {"text": text}, "_meta": META}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def padded(message: Any, size: int) -> bytes:
    """The message, then whitespace up to `size` bytes: the same JSON to any parser."""
    body = json.dumps(message).encode()
    return body + b" " * (size - len(body))


def post(base: str, name: str, content: Any, **headers: str) -> httpx2.Response:
    return httpx2.post(
        base + "/mcp", content=content, headers={**MCP_HEADERS, **MODERN, **bearer(token(name)), **headers}, timeout=60
    )


def echoed(config: Path, name: str) -> int:
    rows = [json.loads(line) for line in cli_in_process(config, "audit", "--json", "--tail", "500").stdout.splitlines()]
    return sum(1 for row in rows if row["principal"] == name and row["tool"] == "demo.echo")


def test_attack_padding_past_the_inspected_size_is_still_counted(server: tuple[str, Path]) -> None:
    """The old guard read 4,000,000 bytes and let a larger body pass uncounted, while the endpoint
    took up to 4 MiB: three padded calls all ran under a budget of two."""
    base, config = server
    statuses = [post(base, "padded", padded(call(f"p{i}"), BODY_LIMIT - 10)).status_code for i in range(3)]
    assert statuses == [200, 200, 429]
    assert echoed(config, "padded") == 2


def test_attack_a_chunked_padded_body_is_counted(server: tuple[str, Path]) -> None:
    base, config = server

    def pieces(body: bytes) -> Iterator[bytes]:
        for start in range(0, len(body), 100_000):
            yield body[start : start + 100_000]

    statuses = [post(base, "chunked", pieces(padded(call(f"c{i}"), BODY_LIMIT - 1))).status_code for i in range(3)]
    assert statuses == [200, 200, 429]
    assert echoed(config, "chunked") == 2


def test_each_call_of_a_batch_is_counted(server: tuple[str, Path]) -> None:
    base, config = server
    batch = [call("b1", 1), call("b2", 2), call("b3", 3)]
    refused = post(base, "batch", json.dumps(batch).encode())
    assert refused.status_code == 429
    assert post(base, "batch", json.dumps(call("one")).encode()).status_code == 200
    assert echoed(config, "batch") == 1


def test_a_body_over_the_limit_is_refused_before_anything_runs(server: tuple[str, Path]) -> None:
    base, config = server
    refused = post(base, "huge", padded(call("too big"), BODY_LIMIT + 1))
    assert refused.status_code == 413
    assert "max_body_bytes" in refused.json()["error"]["message"]

    body = padded(call("too big, streamed"), BODY_LIMIT + 100_000)
    chunked = post(base, "huge", (body[start : start + 65_536] for start in range(0, len(body), 65_536)))
    assert chunked.status_code == 413
    assert echoed(config, "huge") == 0


def test_a_body_no_parser_here_reads_is_refused_not_passed_on(server: tuple[str, Path]) -> None:
    base, config = server
    for body in (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "demo_echo"' + b"[" * 100_000,
        b"\xff\xfe{}",
    ):
        answer = post(base, "broken", body)
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == -32700
    assert echoed(config, "broken") == 0


def text_calls(base: str, name: str, texts: list[str], stream: bool = False) -> httpx2.Response:
    reply = "\n".join(
        f'<tool_call>{{"name": "demo_echo", "arguments": {{"text": "{text}"}}}}</tool_call>' for text in texts
    )
    return httpx2.post(
        base + "/text-calls" + ("?stream=1" if stream else ""),
        json=None if stream else {"reply": reply},
        content=reply.encode() if stream else None,
        headers=bearer(token(name)),
        timeout=60,
    )


def test_attack_text_calls_are_counted_one_by_one(server: tuple[str, Path]) -> None:
    """Text calls run past the MCP endpoint, so the guard never saw them: three calls in one reply
    all ran under a budget of two. Each is now spent as it runs, and the rest are refused."""
    base, config = server
    answer = text_calls(base, "text", ["t1", "t2", "t3"])
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert [result.get("content") for result in results[:2]] == [{"echo": "hello: t1"}, {"echo": "hello: t2"}]
    assert "calls per minute" in results[2]["error"] and "nothing ran" in results[2]["error"]
    assert echoed(config, "text") == 2
    streamed = text_calls(base, "text", ["t4"], stream=True)  # streamed replies spend the same minute
    assert "calls per minute" in streamed.text and "hello: t4" not in streamed.text
    assert echoed(config, "text") == 2


def test_text_calls_and_mcp_calls_share_one_budget(server: tuple[str, Path]) -> None:
    base, config = server
    assert text_calls(base, "textmcp", ["a", "b"]).status_code == 200
    assert post(base, "textmcp", json.dumps(call("c"))).status_code == 429
    assert echoed(config, "textmcp") == 2
