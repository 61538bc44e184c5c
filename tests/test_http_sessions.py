"""An MCP session over `serve --http` answers to the token that opened it, on every kind of request.

`phone` is trusted to show confirmation forms to the person; `laptop` is a plain agent token
that learnt the phone's `Mcp-Session-Id`. Raw HTTP against the real server on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.processes import bearer, cli_in_process, demo_config, http_server

pytestmark = pytest.mark.anyio
TOKENS = (
    '[http.tokens]\nlaptop = "tok-laptop-0123456789"\n'
    '[http.tokens.phone]\ntoken = "tok-phone-9876543210"\nperson_answers_forms = true\n'
)
PHONE, LAPTOP = bearer("tok-phone-9876543210"), bearer("tok-laptop-0123456789")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LEGACY = "2025-11-25"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("sessions")
    config = demo_config(tmp_path, 'tools = ["*"]\n' + TOKENS, servers='["demo", "files"]')
    (tmp_path / "data" / "files").mkdir(parents=True)
    with http_server(config) as base:
        yield base, config


def files_dir(config: Path) -> Path:
    return config.parent / "data" / "files"


async def open_session(http: httpx2.AsyncClient, url: str, who: dict[str, str]) -> dict[str, str]:
    """Initialize a 2025-era session that declares form elicitation; the headers that name it."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "phone", "version": "1"},
        },
    }
    answer = await http.post(url, json=init, headers={**MCP_HEADERS, **who})
    assert answer.status_code == 200, answer.text
    headers = {**MCP_HEADERS, **who, "Mcp-Session-Id": answer.headers["mcp-session-id"]}
    headers["MCP-Protocol-Version"] = LEGACY
    done = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert done.status_code == 202
    return headers


async def messages(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    async for line in lines:
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def as_laptop(headers: dict[str, str]) -> dict[str, str]:
    return {**headers, **LAPTOP}


def audit(config: Path, path: str) -> list[tuple[str, str | None]]:
    rows = [json.loads(line) for line in cli_in_process(config, "audit", "--json", "--tail", "500").stdout.splitlines()]
    return [
        (r["decision"], r["answered_by"])
        for r in rows
        if r["tool"] == "files.delete" and r["arguments"].get("path") == path
    ]


def delete_call(path: str, id_: int = 7) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": "files_delete", "arguments": {"path": path}},
    }


@pytest.mark.parametrize("endpoint", ["/mcp", "/files/mcp"])
async def test_attack_another_token_cannot_answer_the_persons_form_in_a_trusted_session(
    server: tuple[str, Path], endpoint: str
) -> None:
    """The old behaviour: the laptop's accept, posted into the phone's session, answered the form
    the person had not answered yet, and files.delete ran "confirmed by elicitation"."""
    base, config = server
    path = f"precious{endpoint.replace('/', '-')}.txt"
    (files_dir(config) / path).write_text("keep me")
    async with httpx2.AsyncClient(timeout=30) as http:
        phone = await open_session(http, base + endpoint, PHONE)
        async with http.stream("POST", base + endpoint, json=delete_call(path), headers=phone) as stream:
            assert stream.status_code == 200
            events = messages(stream.aiter_lines())
            asked = await anext(events)
            assert asked.get("method") == "elicitation/create", asked
            forged = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"confirm": True}}}
            refused = await http.post(base + endpoint, json=forged, headers=as_laptop(phone))
            assert refused.status_code == 404
            assert refused.json()["error"]["message"] == "Session not found"
            # The person's own answer still reaches the form: they decline.
            declined = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
            assert (await http.post(base + endpoint, json=declined, headers=phone)).status_code == 202
            result = await anext(events)
    assert result["id"] == 7 and result["result"]["isError"] is True
    assert "declined_by_user" in result["result"]["content"][0]["text"]
    assert (files_dir(config) / path).read_text() == "keep me"
    assert audit(config, path) == [("declined", "elicitation:http")]


async def test_attack_every_request_kind_in_another_tokens_session_is_404(server: tuple[str, Path]) -> None:
    """Calls, notifications (a cancel of the person's pending call), the event stream (where the
    forms go) and DELETE: from another token, each is an unknown session, and the session goes on."""
    base, config = server
    path = "kept-while-attacked.txt"
    (files_dir(config) / path).write_text("keep me")
    async with httpx2.AsyncClient(timeout=30) as http:
        phone = await open_session(http, base + "/mcp", PHONE)
        laptop = as_laptop(phone)
        with anyio.fail_after(60):  # a cancel that reached the call would leave its stream without an answer
            await attack_a_pending_call(http, base, phone, laptop, path)
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "demo_echo", "arguments": {"text": "x"}},
        }
        echo = await http.post(base + "/mcp", json=call, headers=phone)
        assert echo.status_code == 200 and "echo" in echo.text  # the session goes on
        assert (await http.delete(base + "/mcp", headers=phone)).status_code == 200
        assert (await http.post(base + "/mcp", json=call, headers=phone)).status_code == 404
    assert not (files_dir(config) / path).exists()
    assert audit(config, path) == [("confirmed", "elicitation:http")]


async def attack_a_pending_call(
    http: httpx2.AsyncClient, base: str, phone: dict[str, str], laptop: dict[str, str], path: str
) -> None:
    """While the phone's call waits for the person, the laptop tries every kind of request in its
    session; then the person accepts and the call runs."""
    async with http.stream("POST", base + "/mcp", json=delete_call(path, 9), headers=phone) as stream:
        events = messages(stream.aiter_lines())
        asked = await anext(events)
        assert asked.get("method") == "elicitation/create", asked
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "demo_echo", "arguments": {"text": "x"}},
        }
        attempts = [
            await http.post(base + "/mcp", json=cancel, headers=laptop),
            await http.post(base + "/mcp", json=call, headers=laptop),
            await http.post(base + "/mcp", json=[call], headers=laptop),
            await http.get(base + "/mcp", headers={**laptop, "Accept": "text/event-stream"}),
            await http.get(base + "/mcp", headers={**laptop, "Accept": "text/event-stream", "Last-Event-ID": "0"}),
            await http.delete(base + "/mcp", headers=laptop),
            # the same session id twice: the SDK reads the first, so no second one may slip by
            await http.post(base + "/mcp", json=call, headers=[*phone.items(), ("Mcp-Session-Id", "other")]),
        ]
        assert [answer.status_code for answer in attempts] == [404] * len(attempts)
        # The person accepts in their own session: the call runs.
        accepted = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"confirm": True}}}
        assert (await http.post(base + "/mcp", json=accepted, headers=phone)).status_code == 202
        result = await anext(events)
    assert result["id"] == 9 and not result["result"].get("isError")


async def test_a_session_from_another_endpoint_or_an_unknown_one_is_404(server: tuple[str, Path]) -> None:
    base, _ = server
    async with httpx2.AsyncClient(timeout=30) as http:
        phone = await open_session(http, base + "/demo/mcp", PHONE)
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "demo_echo", "arguments": {"text": "x"}},
        }
        assert (await http.post(base + "/mcp", json=call, headers=phone)).status_code == 404
        unknown = {**phone, "Mcp-Session-Id": "f" * 32}
        assert (await http.post(base + "/demo/mcp", json=call, headers=unknown)).status_code == 404
        assert (await http.post(base + "/demo/mcp", json=call, headers=phone)).status_code == 200


async def test_attack_a_2026_answer_moved_to_another_token_does_not_confirm(server: tuple[str, Path]) -> None:
    """2026-07-28 has no sessions: the answer travels with the retried call, sealed with the
    principal that was asked. The laptop replays the phone's sealed state with an accept."""
    base, config = server
    path = "kept-2026.txt"
    (files_dir(config) / path).write_text("keep me")
    modern = {**MCP_HEADERS, "MCP-Protocol-Version": "2026-07-28"}
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "phone", "version": "1"},
    }
    params: dict[str, Any] = {"name": "files_delete", "arguments": {"path": path}, "_meta": meta}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {**modern, "Mcp-Method": "tools/call", "Mcp-Name": "files_delete"}
    async with httpx2.AsyncClient(timeout=30) as http:
        first = await http.post(base + "/mcp", json=call, headers={**headers, **PHONE})
        assert first.status_code == 200, first.text
        asked = first.json()["result"]
        assert "requestState" in asked, asked
        accept = {"action": "accept", "content": {"confirm": True}}
        replay = {
            **params,
            "requestState": asked["requestState"],
            "inputResponses": {k: accept for k in asked["inputRequests"]},
        }
        moved = await http.post(base + "/mcp", json={**call, "params": replay}, headers={**headers, **LAPTOP})
        assert moved.status_code == 200
        # Not the laptop's answer to give: its own call waits for the person, out of band.
        assert "approval_required" in moved.json()["result"]["content"][0]["text"]
    assert (files_dir(config) / path).read_text() == "keep me"
    assert ("confirmed", "elicitation:http") not in audit(config, path)
