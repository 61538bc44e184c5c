"""`POST /text-calls` on the real HTTP server: the same token, policy, approvals and audit as MCP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.harness import failure, ok
from tests.processes import bearer, cli_in_process, demo_config, http_server

TOKENS = '[http.tokens]\nlaptop = "tok-laptop-0123456789"\n'
SCISSORS = "\u2702\ufe0f\U0001f431"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("text-calls-http")
    config = demo_config(tmp_path, TOKENS, servers='["demo", "files"]')
    with http_server(config) as base:
        yield base, config


def post(base: str, token: str | None = "tok-laptop-0123456789", **kwargs: object) -> httpx2.Response:
    headers = bearer(token) if token else {}
    return httpx2.post(base + "/text-calls", headers=headers, timeout=30, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("token", [None, "wrong"])
def test_text_calls_need_the_token(server: tuple[str, Path], token: str | None) -> None:
    base, _ = server
    response = post(base, token, json={"reply": '{"name": "demo.echo", "arguments": {"text": "x"}}'})
    assert response.status_code == 401


def test_a_scissors_reply_returns_results_and_markdown(server: tuple[str, Path]) -> None:
    base, config = server
    reply = (
        json.dumps([{"id": "e1", "type": "demo.echo", "operation": "echo", "parameters": {"text": "hi"}}])
        + f"\n{SCISSORS}\nHello **there**."
    )
    response = post(base, json={"reply": reply})
    assert response.status_code == 200
    body = response.json()
    assert body["format"] == "scissors" and body["markdown"] == "Hello **there**." and body["parse_errors"] == []
    assert body["results"] == [{"id": "e1", "name": "demo.echo", "content": {"echo": "hello: hi"}}]
    assert body["calls"][0]["status"] == "completed" and set(body["calls"][0]["times"]) == {
        "detected",
        "executing",
        "completed",
    }
    audit = [json.loads(line) for line in cli_in_process(config, "audit", "--json").stdout.splitlines()]
    assert audit[-1]["transport"] == "text" and audit[-1]["principal"] == "laptop"


def test_plain_text_bodies_and_the_other_outputs(server: tuple[str, Path]) -> None:
    base, _ = server
    reply = 'Echo: {"name": "demo.echo", "arguments": {"text": "plain"}}'
    results = post(base, content=reply.encode(), params={"output": "results"})
    assert results.status_code == 200 and results.json()[0]["content"] == {"echo": "hello: plain"}
    markdown = post(base, json={"reply": reply, "output": "markdown"})
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert markdown.text.startswith("### `demo.echo` (call_1): ok")


def test_high_risk_calls_wait_for_an_approval_bound_to_the_call(server: tuple[str, Path]) -> None:
    base, config = server
    reply = '{"name": "demo.erase", "arguments": {"target": "drafts"}}'
    first = post(base, json={"reply": reply}).json()
    error = first["results"][0]["error"]
    assert first["calls"][0]["status"] == "failed" and "approval" in error
    approval_id = error.split("Approval id: ")[1].split()[0].rstrip(".")
    assert cli_in_process(config, "approvals", "approve", approval_id).returncode == 0
    second = post(base, json={"reply": reply}).json()
    assert second["results"] == [{"id": "call_1", "name": "demo.erase", "content": {"erased": "drafts"}}]


@pytest.mark.parametrize(
    ("kwargs", "status"),
    [
        ({"content": b"{not json", "headers": {"content-type": "application/json"}}, 400),
        ({"json": {"text": "no reply key"}}, 400),
        ({"json": {"reply": "x", "format": "xml"}}, 400),
        ({"json": {"reply": "x", "output": "pdf"}}, 400),
        ({"content": b"x" * 4_100_000}, 413),
    ],
)
def test_bad_requests_are_refused_with_a_reason(server: tuple[str, Path], kwargs: dict, status: int) -> None:
    base, _ = server
    headers = {**bearer("tok-laptop-0123456789"), **kwargs.pop("headers", {})}
    response = httpx2.post(base + "/text-calls", headers=headers, timeout=30, **kwargs)
    assert response.status_code == status
    assert response.json()["error"] == "bad_request" and response.json()["message"]
    if status == 413:  # the limit in words a person reads, and what to do
        assert "4,064,000 bytes, about 3.9 MiB" in response.json()["message"]
        assert "nothing ran" in response.json()["message"] and "stream=1" in response.json()["message"]


def test_a_streamed_request_answers_with_ndjson_events(server: tuple[str, Path]) -> None:
    base, _ = server

    def pieces() -> Iterator[bytes]:
        reply = b'Echo first: {"name": "demo.echo", "arguments": {"text": "a"}} then prose.'
        for start in range(0, len(reply), 5):
            yield reply[start : start + 5]

    response = httpx2.post(
        base + "/text-calls",
        params={"stream": "1"},
        headers=bearer("tok-laptop-0123456789", **{"Content-Type": "text/plain"}),
        content=pieces(),
        timeout=30,
    )
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
    events = [json.loads(line) for line in response.text.splitlines()]
    kinds = [event["event"] for event in events]
    assert [kind for index, kind in enumerate(kinds) if kinds[index - 1 : index] != [kind]] == [
        "prose",
        "result",
        "prose",
        "done",
    ]
    result = next(event for event in events if event["event"] == "result")
    assert result["content"] == {"echo": "hello: a"} and result["status"] == "completed"
    assert events[-1]["format"] == "prose" and events[-1]["markdown"] == "Echo first:  then prose."


def test_results_arrive_while_the_reply_is_still_being_sent(server: tuple[str, Path]) -> None:
    import socket
    from urllib.parse import urlparse

    base, _ = server
    address = urlparse(base)
    first = b'Now {"name": "demo.echo", "arguments": {"text": "early"}} and '
    with socket.create_connection((address.hostname, address.port), timeout=20) as connection:
        connection.sendall(
            b"POST /text-calls?stream=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-laptop-0123456789\r\n"
            b"Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(first), first)
        )
        received = b""
        while b'"event": "result"' not in received:  # the call ran before the rest of the reply was sent
            data = connection.recv(65536)
            assert data, received
            received += data
        assert b"hello: early" in received
        last = b"the rest."
        connection.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(last), last))
        while b'"event": "done"' not in received:
            data = connection.recv(65536)
            assert data, received
            received += data
    assert b"Now  and the rest." in received


# Text calls reach exactly what /mcp serves the same token ------------------------------------------

NARROW = '[http.tokens]\nlaptop = "tok-laptop-0123456789"\nphone = "tok-phone-9876543210"\n'


@pytest.fixture(scope="module", params=["static", "dynamic"])
def narrow_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """files.write excluded by `[server] tools`; in dynamic discovery files.mkdir is one enable away."""
    tmp_path = tmp_path_factory.mktemp(f"text-calls-{request.param}")
    discovery = 'discovery = "dynamic"\n' if request.param == "dynamic" else ""
    config = demo_config(
        tmp_path,
        NARROW,
        servers='["demo", "files"]\ntools = ["demo", "files.core", "-files.write"]\n' + discovery,
    )
    (tmp_path / "data" / "files").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "files" / "keep.txt").write_text("precious")
    with http_server(config) as base:
        yield base, tmp_path


async def call_over_mcp(base: str, token: str, name: str, arguments: dict) -> dict:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=30) as http,
        Client(streamable_http_client(base + "/mcp", http_client=http), mode="2026-07-28") as client,  # type: ignore[arg-type]
    ):
        result = await client.call_tool(name, arguments)
        return failure(result) if result.is_error else ok(result)


@pytest.mark.parametrize(
    "reply",
    [
        '{"name": "files.write", "arguments": {"path": "keep.txt", "content": "gone", "overwrite": true}}',
        '```json\n{"tool": "write_file", "path": "keep.txt", "content": "gone", "overwrite": true}\n```',
        '<tool_call>{"name": "files_write", "arguments": {"path": "new.txt", "content": "x"}}</tool_call>',
        json.dumps(
            [{"id": "1", "type": "files_write", "operation": "w", "parameters": {"path": "new.txt", "content": "x"}}]
        )
        + f"\n{SCISSORS}\nok",
    ],
)
@pytest.mark.anyio
async def test_a_tool_mcp_refuses_is_refused_as_text(narrow_server: tuple[str, Path], reply: str) -> None:
    base, tmp_path = narrow_server
    over_mcp = await call_over_mcp(base, "tok-laptop-0123456789", "files_write", {"path": "new.txt", "content": "x"})
    assert over_mcp["kind"] == "unknown_tool"
    body = post(base, json={"reply": reply}).json()
    assert [call["status"] for call in body["calls"]] == ["failed"]
    assert "is not served to this client" in body["results"][0]["error"]
    assert (tmp_path / "data" / "files" / "keep.txt").read_text() == "precious"
    assert not (tmp_path / "data" / "files" / "new.txt").exists()


@pytest.mark.anyio
async def test_text_calls_see_what_the_same_token_enabled(narrow_server: tuple[str, Path]) -> None:
    base, tmp_path = narrow_server
    mkdir = '{"name": "files.mkdir", "arguments": {"path": "made"}}'
    before = post(base, json={"reply": mkdir}).json()
    assert before["calls"][0]["status"] == "failed" and "not served" in before["results"][0]["error"]
    if "dynamic" not in tmp_path.name:
        return  # the selection is all a client is ever served
    enabled = await call_over_mcp(base, "tok-laptop-0123456789", "toolsets_enable", {"toolsets": ["files.mkdir"]})
    assert enabled["enabled"] == ["files_mkdir"]
    other = post(base, "tok-phone-9876543210", json={"reply": mkdir}).json()
    assert other["calls"][0]["status"] == "failed"  # another token's clients enabled nothing
    after = post(base, json={"reply": mkdir}).json()
    assert after["calls"][0]["status"] == "completed" and (tmp_path / "data" / "files" / "made").is_dir()
    refused = post(base, json={"reply": '{"name": "toolsets_enable", "arguments": {"toolsets": ["files.write"]}}'})
    assert refused.json()["calls"][0]["status"] == "failed"  # an excluded tool cannot be enabled, as text either


DEEP = 100_000


@pytest.mark.parametrize(
    ("body", "content_type", "named"),
    [
        (json.dumps({"reply": "look: \ud800"}).encode(), "application/json", "lone surrogate (U+D800)"),
        (b'{"reply": "raw \xed\xa0\x80"}', "application/json", "lone surrogate (U+D800)"),
        (b'{"reply": ' + b"[" * DEEP + b"]" * DEEP + b"}", "application/json", "nested too deeply"),
        (b'{"reply": "x", "format": ' + b"{" * DEEP + b"}", "application/json", "not valid JSON"),
    ],
)
def test_attack_malformed_bodies_get_a_4xx_that_names_the_problem(
    server: tuple[str, Path], body: bytes, content_type: str, named: str
) -> None:
    base, _ = server
    headers = bearer("tok-laptop-0123456789", **{"Content-Type": content_type})
    response = httpx2.post(base + "/text-calls", content=body, headers=headers, timeout=30)
    assert response.status_code == 400, response.text[:300]
    assert response.json()["error"] == "bad_request" and named in response.json()["message"]
    assert httpx2.get(base + "/healthz").status_code == 200


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "reply",
    [
        b'Echo: {"name": "demo.echo", "arguments": {"text": "\\ud800"}}',
        b'Echo: {"name": "demo.echo", "arguments": {"text": "\xed\xa0\x80"}}',
        b'{"name": "demo.echo", "arguments": ' + b"[" * DEEP + b"]" * DEEP + b"}",
        b"[" * DEEP + b"]" * DEEP + "\n\u2702\ufe0f\U0001f431\n".encode(),
    ],
    ids=["escaped-surrogate", "raw-surrogate", "deep-call", "deep-scissors"],
)
def test_attack_hostile_replies_are_answered_never_a_500(server: tuple[str, Path], reply: bytes, stream: bool) -> None:
    base, _ = server
    response = httpx2.post(
        base + "/text-calls",
        content=reply,
        params={"stream": "1"} if stream else {},
        headers=bearer("tok-laptop-0123456789", **{"Content-Type": "text/plain"}),
        timeout=60,
    )
    assert response.status_code == 200, response.text[:300]
    text = response.content.decode("utf-8")  # valid UTF-8 all through, whatever the reply held
    if stream:
        assert json.loads(text.splitlines()[-1])["event"] == "done"
    else:
        report = response.json()
        assert "\ud800" not in json.dumps(report, ensure_ascii=False)
        for call in report["calls"]:
            assert call["status"] == "failed" or call["name"] == "demo.echo"
