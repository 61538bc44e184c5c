"""`mcp-tools serve --http` in a real subprocess (uvicorn on 127.0.0.1), with the SDK's real client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.harness import elicitation_handler, failure, ok
from tests.processes import bearer, cli_in_process, demo_config, http_server, run_cli

pytestmark = pytest.mark.anyio
# `phone` is marked as a client that shows confirmation forms to the person; `laptop` is a plain token.
TOKENS = (
    '[http.tokens]\nlaptop = "tok-laptop-0123456789"\n'
    '[http.tokens.phone]\ntoken = "tok-phone-9876543210"\nperson_answers_forms = true\n'
)
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("http")
    config = demo_config(tmp_path, TOKENS, servers='["demo", "files"]')
    with http_server(config) as base:
        yield base, config


@asynccontextmanager
async def http_client(url: str, token: str, **kwargs: object):
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), **kwargs) as client,  # type: ignore[arg-type]
    ):
        yield client


def test_health_needs_no_token(server: tuple[str, Path]) -> None:
    base, _ = server
    response = httpx2.get(base + "/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.parametrize("headers", [{}, bearer("wrong-token"), {"Authorization": "Basic dG9rLWxhcHRvcA=="}])
def test_mcp_without_a_valid_token_is_401(server: tuple[str, Path], headers: dict[str, str]) -> None:
    base, _ = server
    response = httpx2.post(base + "/mcp", json=INIT, headers={**MCP_HEADERS, **headers})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "tok-laptop" not in response.text


def test_foreign_origin_is_refused_even_with_a_token(server: tuple[str, Path]) -> None:
    base, _ = server
    headers = {**MCP_HEADERS, **bearer("tok-laptop-0123456789"), "Origin": "https://evil.example"}
    response = httpx2.post(base + "/mcp", json=INIT, headers=headers)
    assert response.status_code == 403


def test_foreign_host_header_is_refused(server: tuple[str, Path]) -> None:
    base, _ = server
    headers = {**MCP_HEADERS, **bearer("tok-laptop-0123456789"), "Host": "rebound.example:80"}
    response = httpx2.post(base + "/mcp", json=INIT, headers=headers)
    assert response.status_code == 421


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_combined_and_per_namespace_endpoints(server: tuple[str, Path], mode: str) -> None:
    base, _ = server
    async with http_client(base + "/mcp", "tok-laptop-0123456789", mode=mode) as client:
        combined = {tool.name for tool in (await client.list_tools()).tools}
    async with http_client(base + "/demo/mcp", "tok-laptop-0123456789", mode=mode) as client:
        demo_only = {tool.name for tool in (await client.list_tools()).tools}
        outside = failure(await client.call_tool("files_list", {}))
    assert {"demo_echo", "files_read"} <= combined
    assert demo_only == {"demo_echo", "demo_erase", "demo_fail", "demo_note"}
    assert outside["kind"] == "unknown_tool"


def audit_rows(config: Path) -> list[dict]:
    return [json.loads(line) for line in cli_in_process(config, "audit", "--json", "--tail", "500").stdout.splitlines()]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(("answer", "runs"), [("accept", True), ("decline", False)])
async def test_elicitation_over_http_for_a_token_marked_person_answers_forms(
    server: tuple[str, Path], mode: str, answer: str, runs: bool
) -> None:
    base, config = server
    target = f"http-{mode}-{answer}"
    async with http_client(
        base + "/mcp", "tok-phone-9876543210", mode=mode, elicitation_callback=elicitation_handler(answer)
    ) as client:
        result = await client.call_tool("demo_erase", {"target": target})
    if runs:
        assert ok(result) == {"erased": target}
    else:
        assert failure(result)["kind"] == "declined_by_user"
    [row] = [row for row in audit_rows(config) if row["arguments"] == {"target": target}]
    assert row["decision"] == ("confirmed" if runs else "declined")
    assert row["answered_by"] == "elicitation:http" and row["principal"] == "phone"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_attack_a_plain_token_cannot_approve_its_own_call_by_answering_the_form(
    server: tuple[str, Path], mode: str
) -> None:
    """The remote agent holding the token declares elicitation and accepts every form it is sent."""
    base, config = server
    target = f"self-approved-{mode}"
    asked: list[object] = []
    async with http_client(
        base + "/mcp", "tok-laptop-0123456789", mode=mode, elicitation_callback=elicitation_handler("accept", asked)
    ) as agent:
        refused = failure(await agent.call_tool("demo_erase", {"target": target}))
        assert refused["kind"] == "approval_required" and asked == []
        [row] = [row for row in audit_rows(config) if row["arguments"] == {"target": target}]
        assert (row["decision"], row["answered_by"]) == ("approval_required", None)
        # The person approves out of band; the same call then runs, and the audit says who said yes.
        assert cli_in_process(config, "approvals", "approve", refused["approval_id"]).returncode == 0
        assert ok(await agent.call_tool("demo_erase", {"target": target})) == {"erased": target}
    rows = [row for row in audit_rows(config) if row["arguments"] == {"target": target}]
    assert [(row["decision"], row["answered_by"]) for row in rows] == [
        ("approval_required", None),
        ("approved_out_of_band", "cli"),
    ]
    assert asked == []


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_audit_names_the_token_as_principal(server: tuple[str, Path], mode: str) -> None:
    base, config = server
    async with http_client(base + "/mcp", "tok-laptop-0123456789", mode=mode) as client:
        assert ok(await client.call_tool("demo_echo", {"text": f"who {mode}"}))
    rows = [json.loads(line) for line in cli_in_process(config, "audit", "--json", "--tail", "200").stdout.splitlines()]
    mine = [row for row in rows if row["arguments"] == {"text": f"who {mode}"}]
    assert [(row["principal"], row["transport"]) for row in mine] == [("laptop", "http")]
    assert all("tok-" not in json.dumps(row) for row in rows)


def test_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    result = run_cli(config, "serve", "--http", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2
    assert "without a bearer token" in result.stderr


async def test_loopback_without_configured_token_uses_a_private_token_file(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    with http_server(config) as base:
        token_file = tmp_path / "state" / "http-token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text().strip()
        assert httpx2.post(base + "/mcp", json=INIT, headers=MCP_HEADERS).status_code == 401
        async with http_client(base + "/mcp", token, mode="legacy") as client:
            assert ok(await client.call_tool("demo_echo", {"text": "x"}))


async def test_an_approval_asked_for_by_one_token_cannot_be_used_by_another(server: tuple[str, Path]) -> None:
    base, config = server
    arguments = {"target": "bound-to-laptop"}
    async with http_client(base + "/mcp", "tok-laptop-0123456789") as laptop:
        asked = failure(await laptop.call_tool("demo_erase", arguments))
        assert asked["kind"] == "approval_required"
        assert cli_in_process(config, "approvals", "approve", asked["approval_id"]).returncode == 0
        async with http_client(base + "/mcp", "tok-phone-9876543210") as phone:
            stolen = failure(await phone.call_tool("demo_erase", arguments))
        assert stolen["kind"] == "approval_required" and stolen["approval_id"] != asked["approval_id"]
        assert ok(await laptop.call_tool("demo_erase", arguments)) == {"erased": "bound-to-laptop"}
    rows = [json.loads(line) for line in cli_in_process(config, "audit", "--json", "--tail", "200").stdout.splitlines()]
    mine = [(row["principal"], row["decision"]) for row in rows if row["arguments"] == arguments]
    assert mine == [("laptop", "approval_required"), ("phone", "approval_required"), ("laptop", "approved_out_of_band")]


async def test_debug_logging_writes_no_response_bodies(tmp_path: Path) -> None:
    config = demo_config(tmp_path, TOKENS, servers='["demo", "files"]')
    (tmp_path / "data" / "files").mkdir(parents=True)
    (tmp_path / "data" / "files" / "diary.txt").write_text("BODY-MARKER private diary entry")
    log = tmp_path / "server.log"
    with http_server(config, log=log, MCP_TOOLS_LOG_LEVEL="debug") as base:
        async with http_client(base + "/mcp", "tok-laptop-0123456789", mode="legacy") as client:  # SSE replies
            assert "BODY-MARKER" in ok(await client.call_tool("files_read", {"path": "diary.txt"}))["content"]
    written = log.read_text()
    assert "INFO mcp.server" in written  # the libraries still log, at INFO
    assert "BODY-MARKER" not in written
    assert "tok-laptop" not in written


def forged_headers(base: str) -> list[tuple[dict[str, str], int]]:
    """Host and Origin values that start like ours and are not: a list, a path, a user, a query."""
    authority = base.removeprefix("http://")
    return [
        ({"Host": f"{authority}, evil.example"}, 421),
        ({"Host": f"{authority} evil.example"}, 421),
        ({"Host": f"{authority}@evil.example"}, 421),
        ({"Host": f"{authority}/evil.example"}, 421),
        ({"Origin": f"{base}/evil"}, 403),
        ({"Origin": f"{base}/"}, 403),
        ({"Origin": f"{base}?from=evil.example"}, 403),
        ({"Origin": f"{base}, https://evil.example"}, 403),
        ({"Origin": f"http://user@{authority}"}, 403),
    ]


def test_attack_forged_host_and_origin_are_refused_on_mcp_with_a_valid_token(server: tuple[str, Path]) -> None:
    base, _ = server
    headers = {**MCP_HEADERS, **bearer("tok-laptop-0123456789")}
    assert httpx2.post(base + "/mcp", json=INIT, headers={**headers, "Origin": base}).status_code == 200
    for forged, status in forged_headers(base):
        response = httpx2.post(base + "/mcp", json=INIT, headers={**headers, **forged})
        assert response.status_code == status, forged


def test_attack_forged_host_and_origin_are_refused_on_the_approvals_page_with_a_session(
    server: tuple[str, Path],
) -> None:
    base, config = server
    with httpx2.Client(base_url=base, headers=bearer("tok-laptop-0123456789")) as agent:
        asked = failure_of(
            agent.post("/text-calls", json={"reply": '{"name": "demo.erase", "arguments": {"target": "page-forged"}}'})
        )
    approval_id = asked.split("Approval id: ")[1].split()[0].rstrip(".")
    token = cli_in_process(config, "approvals", "login", "--http").stdout.strip().split("token=", 1)[1]
    with httpx2.Client(base_url=base) as browser:
        assert browser.get(f"/approvals/login?token={token}").status_code == 200
        page = browser.get("/approvals/")
        assert page.status_code == 200
        csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        for forged, status in forged_headers(base):
            assert browser.get("/approvals/", headers=forged).status_code == status, forged
            posted = browser.post(
                f"/approvals/a/{approval_id}/approve", data={"csrf": csrf}, headers={"Origin": base, **forged}
            )
            assert posted.status_code == status, forged
        assert approvals_status(config, approval_id) == "pending"
        done = browser.post(f"/approvals/a/{approval_id}/approve", data={"csrf": csrf}, headers={"Origin": base})
        assert done.status_code == 303 and approvals_status(config, approval_id) == "approved"


def failure_of(response: httpx2.Response) -> str:
    return response.json()["results"][0]["error"]


def approvals_status(config: Path, approval_id: str) -> str:
    shown = json.loads(cli_in_process(config, "approvals", "show", approval_id).stdout)
    return str(shown["status"])
