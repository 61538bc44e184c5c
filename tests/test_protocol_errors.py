"""What a client that sends something wrong at the protocol level is told: raw HTTP against `serve --http`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.processes import bearer, demo_config, http_server

TOKEN = "tok-probe-0123456789abcdef"
VERSION = "2025-11-25"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = demo_config(tmp_path_factory.mktemp("probe"), f'[http.tokens]\nprobe = "{TOKEN}"\n')
    with http_server(config) as url:
        yield url


def answer_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a reply sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(next(item for item in data if item)))
    return dict(response.json())


def session(base: str) -> dict[str, str]:
    """Headers of an initialized 2025-11-25 session."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
    }
    response = httpx2.post(f"{base}/mcp", json=init, headers=bearer(TOKEN, **MCP_HEADERS), timeout=30)
    assert response.status_code == 200, response.text
    headers = bearer(TOKEN, **MCP_HEADERS, **{"MCP-Protocol-Version": VERSION})
    headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(f"{base}/mcp", json=done, headers=headers, timeout=30).status_code == 202
    return headers


@pytest.mark.parametrize("method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list"])
def test_a_cursor_the_server_never_handed_out_is_invalid_params(base: str, method: str) -> None:
    headers = session(base)
    plain = {"jsonrpc": "2.0", "id": 2, "method": method}
    listed = answer_of(httpx2.post(f"{base}/mcp", json=plain, headers=headers, timeout=30))
    assert "result" in listed and "nextCursor" not in listed["result"]

    bogus = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {"cursor": "not-a-cursor"}}
    answer = answer_of(httpx2.post(f"{base}/mcp", json=bogus, headers=headers, timeout=30))
    assert "result" not in answer
    assert answer["error"]["code"] == -32602
    assert "cursor" in answer["error"]["message"]


@pytest.mark.parametrize("sent", ["1999-01-01", "2025-13-45", "latest"])
def test_an_unknown_protocol_version_header_is_named_in_the_400(base: str, sent: str) -> None:
    headers = bearer(TOKEN, **MCP_HEADERS, **{"MCP-Protocol-Version": sent})
    probe = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = httpx2.post(f"{base}/mcp", json=probe, headers=headers, timeout=30)
    assert response.status_code == 400
    error = response.json()["error"]
    assert "MCP-Protocol-Version" in error["message"] and sent in error["message"]
    assert "_meta" not in error["message"]
    assert VERSION in error["data"]["supported"] and error["data"]["requested"] == sent
    assert response.json()["id"] == 1  # the client matches the error to its request


MODERN = "2026-07-28"


def modern(method: str, version: str, request_id: int | str) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": meta}}


def modern_headers(version: str, method: str) -> dict[str, str]:
    return bearer(TOKEN, **MCP_HEADERS, **{"MCP-Protocol-Version": version, "Mcp-Method": method})


def test_a_2026_request_in_a_version_not_served_gets_the_versions_discover_lists(base: str) -> None:
    """2026-07-28: -32022 UnsupportedProtocolVersionError, 400, with the request's id and
    `data.supported` as `server/discover` lists them, and `data.requested` echoing the version."""
    discovered = httpx2.post(
        f"{base}/mcp", json=modern("server/discover", MODERN, 1), headers=modern_headers(MODERN, "server/discover")
    )
    assert discovered.status_code == 200, discovered.text
    versions = answer_of(discovered)["result"]["supportedVersions"]
    for request_id in (301, "probe-301"):
        refused = httpx2.post(
            f"{base}/mcp",
            json=modern("server/discover", "v999.0.0", request_id),
            headers=modern_headers("v999.0.0", "server/discover"),
        )
        assert refused.status_code == 400
        answer = refused.json()
        assert answer["id"] == request_id and answer["error"]["code"] == -32022
        assert answer["error"]["data"] == {"supported": versions, "requested": "v999.0.0"}


def test_a_version_header_that_differs_from_the_body_is_a_header_mismatch_with_its_id(base: str) -> None:
    refused = httpx2.post(
        f"{base}/mcp",
        json=modern("tools/list", MODERN, 302),
        headers=modern_headers("v999.0.0", "tools/list"),
    )
    assert refused.status_code == 400
    answer = refused.json()
    assert answer["id"] == 302 and answer["error"]["code"] == -32020


def test_a_known_protocol_version_header_still_reaches_the_server(base: str) -> None:
    headers = session(base)
    listed = answer_of(
        httpx2.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
    )
    assert any(tool["name"].startswith("demo_") for tool in listed["result"]["tools"])


def test_logging_set_level_is_accepted(base: str) -> None:
    headers = session(base)
    request = {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "warning"}}
    answer = answer_of(httpx2.post(f"{base}/mcp", json=request, headers=headers, timeout=30))
    assert answer.get("result") == {}


def test_reading_a_resource_that_does_not_exist_says_which(base: str) -> None:
    headers = session(base)
    request = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "file:///etc/passwd"}}
    answer = answer_of(httpx2.post(f"{base}/mcp", json=request, headers=headers, timeout=30))
    assert answer["error"]["code"] == -32602 and "file:///etc/passwd" in answer["error"]["message"]


@pytest.mark.parametrize(
    "body",
    ["[]", "42", '"tools/list"', '[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', '{"jsonrpc": "2.0", "id": 1}'],
)
def test_a_body_that_is_json_but_no_json_rpc_message_is_an_invalid_request(base: str, body: str) -> None:
    """JSON-RPC 2.0: -32600 with what to send, not -32602 and a validation dump with links."""
    headers = bearer(TOKEN, **MCP_HEADERS, **{"MCP-Protocol-Version": VERSION})
    response = httpx2.post(f"{base}/mcp", content=body, headers=headers, timeout=30)
    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] is None and answer["error"]["code"] == -32600
    message = answer["error"]["message"]
    assert "one JSON-RPC 2.0 object" in message and "batches" in message
    assert "pydantic" not in message and "validation error" not in message.lower()


def test_a_body_that_is_not_json_stays_a_parse_error(base: str) -> None:
    headers = bearer(TOKEN, **MCP_HEADERS, **{"MCP-Protocol-Version": VERSION})
    response = httpx2.post(f"{base}/mcp", content="nope", headers=headers, timeout=30)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32700
