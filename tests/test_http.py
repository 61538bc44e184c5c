"""`mcp-tools serve --http` in a real subprocess (uvicorn on 127.0.0.1), with the SDK's real client."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_tools.composition.app import build_app
from mcp_tools.core.config import ConfigError, weak_token
from mcp_tools.transports.http import build_http_app
from tests.harness import ElicitBehaviour, elicitation_handler, failure, make_config, ok
from tests.processes import (
    DEMO_ENTRY,
    ROOT,
    bearer,
    child_env,
    cli_in_process,
    demo_config,
    free_port,
    http_server,
    run_cli,
)

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
async def http_client(url: str, token: str, **kwargs: Any) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), **kwargs) as client,
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


def audit_rows(config: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in cli_in_process(config, "audit", "--json", "--tail", "500").stdout.splitlines()]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize(("answer", "runs"), [("accept", True), ("decline", False)])
async def test_elicitation_over_http_for_a_token_marked_person_answers_forms(
    server: tuple[str, Path], mode: str, answer: ElicitBehaviour, runs: bool
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
    asked: list[types.ElicitRequestParams] = []
    async with http_client(
        base + "/mcp", "tok-laptop-0123456789", mode=mode, elicitation_callback=elicitation_handler("accept", asked)
    ) as agent:
        refused = failure(await agent.call_tool("demo_erase", {"target": target}))
        # No form to answer; a client that declares URL mode is sent the approvals page's link for
        # this approval, which opens only in the person's signed-in browser: accepting it approves nothing.
        assert refused["kind"] == "approval_required" and forms(asked) == []
        assert all(ask.url.endswith(f"/approvals/a/{refused['approval_id']}") for ask in asked)  # type: ignore[union-attr]
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
    assert forms(asked) == []


def forms(asked: list[types.ElicitRequestParams]) -> list[types.ElicitRequestParams]:
    return [ask for ask in asked if getattr(ask, "mode", "form") != "url"]


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
    error: str = response.json()["results"][0]["error"]
    return error


def approvals_status(config: Path, approval_id: str) -> str:
    shown = json.loads(cli_in_process(config, "approvals", "show", approval_id).stdout)
    return str(shown["status"])


async def test_a_body_over_the_limit_gets_a_json_rpc_error_naming_the_limit_and_the_remedy(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    from mcp.shared.exceptions import MCPError

    base, config = server
    content = "x" * (5 * 1024 * 1024)
    async with http_client(base + "/mcp", "tok-laptop-0123456789") as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("files_write", {"path": "big.txt", "content": content})
        assert ok(await client.call_tool("demo_echo", {"text": "still here"}))  # the session goes on
    message = str(refused.value)
    assert "larger than this server accepts (4194304 bytes, 4 MiB; [http] max_body_bytes)" in message
    assert "nothing ran" in message and "split a large write" in message
    assert refused.value.error.data == {"limit_bytes": 4194304, "setting": "[http] max_body_bytes"}
    assert not (config.parent / "data" / "files" / "big.txt").exists()

    # Streamed without a Content-Length, the same answer.
    def pieces() -> Iterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "demo_echo", "arguments":'
        for _ in range(5):
            yield b'{"text": "' + b"y" * (1024 * 1024) + b'"}'

    headers = {**MCP_HEADERS, **bearer("tok-laptop-0123456789")}
    streamed = httpx2.post(base + "/mcp", content=pieces(), headers=headers, timeout=30)
    assert streamed.status_code == 413 and streamed.headers["content-type"] == "application/json"
    assert streamed.json()["error"]["data"]["limit_bytes"] == 4194304

    # Sent whole, well past the limit: the client reads its 413 once its body is out, never a reset.
    whole = httpx2.post(base + "/mcp", content=b"z" * (12 * 1024 * 1024), headers=headers, timeout=30)
    assert whole.status_code == 413 and whole.json()["error"]["data"]["limit_bytes"] == 4194304

    raised = demo_config(tmp_path, TOKENS + "[http]\nmax_body_bytes = 8388608\n", servers='["demo", "files"]')
    with http_server(raised) as larger:
        async with http_client(larger + "/mcp", "tok-laptop-0123456789") as client:
            written = ok(await client.call_tool("files_write", {"path": "big.txt", "content": content}))
    assert written and (tmp_path / "data" / "files" / "big.txt").stat().st_size == len(content)


@pytest.mark.parametrize(
    ("mode", "stop"), [("legacy", "SIGINT"), ("2026-07-28", "SIGINT"), ("legacy", "SIGTERM"), ("2026-07-28", "SIGTERM")]
)
async def test_ctrl_c_with_a_client_connected_ends_the_server_cleanly(tmp_path: Path, mode: str, stop: str) -> None:
    """SIGINT (Ctrl-C) or SIGTERM (`kill`, systemd) while a client holds its event stream open and
    waits on a call: exit 0, the address it recorded for `approvals login` removed, and nothing in
    the log but the banner (no ASGI error, no traceback)."""
    import signal
    import subprocess
    import sys

    import anyio

    from tests.processes import DEMO_ENTRY, ROOT, child_env, free_port
    from tests.servers.notes.fixtures import wait_for

    config = demo_config(tmp_path, TOKENS)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "serve", "--http", "--port", str(port)],
        env=child_env(),
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        await wait_for(lambda: process.poll() is None and healthy(base), timeout=30)
        assert list((tmp_path / "state").glob("listening-http*.json"))
        async with http_client(base + "/mcp", "tok-laptop-0123456789", mode=mode) as client:
            assert ok(await client.call_tool("demo_echo", {"text": "connected"}))
            async with anyio.create_task_group() as calls:
                calls.start_soon(client.call_tool, "demo_erase", {"target": "waiting"})  # waits for an approval
                await wait_for(lambda: pending_approvals(config), timeout=30)
                process.send_signal(getattr(signal, stop))
                code = await anyio.to_thread.run_sync(lambda: process.wait(timeout=30))
                calls.cancel_scope.cancel()
    finally:
        process.kill()
        process.wait()
    assert process.stderr is not None
    log = process.stderr.read().decode()
    process.stderr.close()
    assert code == 0, log
    assert not list((tmp_path / "state").glob("listening-http*.json"))
    weak_token_warning = "the HTTP bearer token(s) laptop, phone are shorter than 32 characters"
    unexpected = [
        line for line in log.splitlines() if not line.startswith("mcp-tools: ") and weak_token_warning not in line
    ]
    assert unexpected == [], log


def healthy(base: str) -> bool:
    try:
        return httpx2.get(base + "/healthz", timeout=1).status_code == 200
    except httpx2.HTTPError:
        return False


def pending_approvals(config: Path) -> list[Any]:
    listed: list[Any] = json.loads(run_cli(config, "approvals", "list", "--json").stdout)
    return listed


# -- weak bearer tokens -----------------------------------------------------------------------

STRONG = "Vq3x9L_kP2mZ8rT4wY7uB1nC6dF0gH5j"  # 32 characters, 32 distinct


def test_a_one_character_token_is_refused_on_a_public_address(tmp_path: Path) -> None:
    """ATTACK: `MCP_TOOLS_HTTP_TOKEN=a serve --http --host 0.0.0.0` would hand the accounts to a
    guesser; the server does not start, and says how to make a token without echoing this one."""
    config = demo_config(tmp_path)
    result = subprocess.run(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "serve", "--http", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        env=child_env(MCP_TOOLS_HTTP_TOKEN="hunter2-hunter2"),
        cwd=str(ROOT),
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "refusing to serve HTTP on 0.0.0.0" in result.stderr and "shorter than 32 characters" in result.stderr
    assert "secrets.token_urlsafe(32)" in result.stderr and "hunter2" not in result.stderr


@pytest.mark.parametrize("token", ["short-token-0123456789", "ab" * 20])
def test_weak_configured_tokens_are_refused_off_loopback(tmp_path: Path, token: str) -> None:
    app = build_app(make_config(tmp_path, {"http": {"tokens": {"phone": token, "laptop": STRONG}}}))
    with pytest.raises(ConfigError, match="token\\(s\\) phone are shorter than 32 characters or too repetitive"):
        build_http_app(app, "192.0.2.10")
    assert weak_token(token) and not weak_token(STRONG)


def test_a_strong_token_serves_a_public_address(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {"http": {"tokens": {"laptop": STRONG}}}))
    assert build_http_app(app, "0.0.0.0") is not None


def test_a_weak_token_on_loopback_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    app = build_app(make_config(tmp_path, {"http": {"tokens": {"dev": "abc"}}}))
    with caplog.at_level(logging.WARNING):
        assert build_http_app(app, "127.0.0.1") is not None
    assert any("token(s) dev are shorter than 32" in record.getMessage() for record in caplog.records)


def test_doctor_reports_a_weak_token(tmp_path: Path) -> None:
    public = demo_config(tmp_path, '[http]\nhost = "0.0.0.0"\n[http.tokens]\nphone = "qwzx"\n')
    result = run_cli(public, "doctor")
    assert result.returncode == 1
    assert "problem: token(s) phone shorter than 32 characters" in result.stdout
    assert "secrets.token_urlsafe(32)" in result.stdout and "qwzx" not in result.stdout
    local = demo_config(tmp_path, '[http.tokens]\nphone = "qwzx"\n')
    result = run_cli(local, "doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "warning: token(s) phone shorter than 32 characters" in result.stdout


# The docs' placeholders as they were, and as they are: none may guard a server.
PLACEHOLDERS = [
    "a-secrets.token_urlsafe-32-output-for-scripts",
    "paste-a-secrets.token_urlsafe-32-output-here",
    "and-another-secrets.token_urlsafe-32-output",
    "<paste the output of: python3 -c 'import secrets; print(secrets.token_urlsafe(32))'>",
    "replace-me-with-a-long-random-string-of-letters",
    "YOUR_TOKEN_HERE_0123456789abcdefghijklmnop",
]


@pytest.mark.parametrize("token", PLACEHOLDERS)
def test_placeholder_tokens_are_weak(token: str) -> None:
    assert weak_token(token)


def test_tokens_a_client_cannot_send_are_weak() -> None:
    assert weak_token(STRONG[:20] + " " + STRONG[20:]) and weak_token(STRONG + '"') and weak_token("é" + STRONG)
    assert not weak_token(STRONG + "==") and not weak_token("x.Y~z+/" + STRONG)  # RFC 6750's b64token


def docs_placeholder_config(tmp_path: Path, host: str) -> Path:
    """The reproduction: the token of docs/oauth.md's example, as copied."""
    path = tmp_path / f"config-{host}.toml"
    path.write_text(
        f'[server]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\nnamespaces = ["demo"]\n'
        f'[http]\nhost = "{host}"\nport = 0\nallowed_hosts = ["mcp.example.org"]\n'
        '[http.tokens]\nci = "a-secrets.token_urlsafe-32-output-for-scripts"\n',
        encoding="utf-8",
    )
    return path


def test_a_token_copied_from_the_docs_does_not_guard_a_public_address(tmp_path: Path) -> None:
    """ATTACK: the example's placeholder token passed the length check, so a server on 0.0.0.0
    started and accepted it from anyone who had read the docs."""
    config = docs_placeholder_config(tmp_path, "0.0.0.0")
    result = run_cli(config, "serve", "--http")
    assert result.returncode == 2, result.stderr
    assert "refusing to serve HTTP on 0.0.0.0: the HTTP bearer token(s) ci look like placeholders" in result.stderr
    assert "secrets.token_urlsafe(32)" in result.stderr and "for-scripts" not in result.stderr
    doctor = run_cli(config, "doctor")
    assert doctor.returncode == 1 and "1 problem(s) to fix: http" in doctor.stderr
    assert "problem: token(s) ci look like placeholders copied from an example" in doctor.stdout
    assert "for-scripts" not in doctor.stdout + doctor.stderr


def test_a_token_copied_from_the_docs_is_a_warning_on_loopback(tmp_path: Path) -> None:
    config = docs_placeholder_config(tmp_path, "127.0.0.1")
    doctor = run_cli(config, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "warning: token(s) ci look like placeholders copied from an example" in doctor.stdout
    app = build_app(make_config(tmp_path, {"http": {"tokens": {"ci": PLACEHOLDERS[0]}}}))
    with pytest.raises(ConfigError, match="token\\(s\\) ci look like placeholders"):
        build_http_app(app, "0.0.0.0")


async def test_a_token_copied_from_the_docs_serves_loopback_with_a_warning(tmp_path: Path) -> None:
    from tests.servers.notes.fixtures import wait_for

    config = docs_placeholder_config(tmp_path, "127.0.0.1")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "serve", "--http", "--port", str(port)],
        env=child_env(),
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        await wait_for(lambda: process.poll() is None and healthy(f"http://127.0.0.1:{port}"), timeout=30)
    finally:
        process.terminate()
        _, log = process.communicate(timeout=30)
    assert "token(s) ci look like placeholders copied from an example" in log and "(accepted on loopback only)" in log


# -- serving on every interface ---------------------------------------------------------------


async def test_a_wildcard_bind_without_allowed_hosts_serves_this_machine_and_says_what_remote_clients_need(
    tmp_path: Path,
) -> None:
    """`serve --http --host 0.0.0.0` with no `[http] allowed_hosts` refused every request, even from
    127.0.0.1, with 421. Loopback names get in; any other Host is still refused (DNS rebinding)."""
    config = demo_config(tmp_path)
    log = tmp_path / "server.log"
    with http_server(config, "--host", "0.0.0.0", log=log, MCP_TOOLS_HTTP_TOKEN=STRONG) as base:
        port = base.rsplit(":", 1)[1]
        for url in (f"http://127.0.0.1:{port}/mcp", f"http://localhost:{port}/mcp"):
            async with http_client(url, STRONG) as client:
                assert ok(await client.call_tool("demo_echo", {"text": "here"})) == {"echo": "hello: here"}
        foreign = httpx2.post(
            base + "/mcp", json=INIT, headers={**MCP_HEADERS, **bearer(STRONG), "Host": f"rebound.example:{port}"}
        )
        assert foreign.status_code == 421
    assert (
        "serving on 0.0.0.0 with no [http] allowed_hosts: clients on this machine get in (127.0.0.1, localhost), "
        "others are refused (421 Invalid Host header) until allowed_hosts names the host they use, e.g. "
        'allowed_hosts = ["mcp.example.org", "192.168.1.20:*"]'
    ) in log.read_text()
    public = demo_config(tmp_path, f'[http]\nhost = "0.0.0.0"\n[http.tokens]\nci = "{STRONG}"\n')
    doctor = run_cli(public, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "warning: serving on 0.0.0.0 with no [http] allowed_hosts" in doctor.stdout
    named = demo_config(
        tmp_path, f'[http]\nhost = "0.0.0.0"\nallowed_hosts = ["mcp.example.org"]\n[http.tokens]\nci = "{STRONG}"\n'
    )
    assert "allowed_hosts" not in run_cli(named, "doctor").stdout


def test_a_wildcard_bind_with_allowed_hosts_takes_them_and_loopback(tmp_path: Path) -> None:
    from mcp_tools.transports.http import security_settings

    app = build_app(make_config(tmp_path, {"http": {"allowed_hosts": ["mcp.example.org"]}}))
    for host in ("0.0.0.0", "::"):
        allowed = security_settings(app, host).allowed_hosts
        assert "mcp.example.org" in allowed and "127.0.0.1:*" in allowed and "localhost:*" in allowed
        assert host not in allowed
    assert security_settings(app, "192.0.2.10").allowed_hosts == ["mcp.example.org"]


# -- the sign-in link names a server that runs ------------------------------------------------


def login_link(config: Path) -> tuple[str, str]:
    result = cli_in_process(config, "approvals", "login", "--http")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip(), result.stderr


def test_login_links_a_running_server_whichever_of_several_stopped(tmp_path: Path) -> None:
    """Two servers share a state dir; the newer stops (SIGTERM): the link names the one still
    running, not the stopped one's port nor the configured one. With none left it says so."""
    config = demo_config(tmp_path, TOKENS)
    with http_server(config) as first:
        with http_server(config) as second:
            link, _ = login_link(config)
            assert link.startswith(second + "/approvals/login?token=")
        link, said = login_link(config)
        assert link.startswith(first + "/approvals/login?token="), link
        assert "is running" not in said
    link, said = login_link(config)
    assert link.startswith("http://127.0.0.1:8765/approvals/login?token=")  # the configured address
    assert f"serve --http` is running with this state dir ({tmp_path / 'state'}); the link is for the" in said
    assert not list((tmp_path / "state").glob("listening-*"))


def test_login_ignores_the_record_of_a_server_that_was_killed(tmp_path: Path) -> None:
    config = demo_config(tmp_path, TOKENS)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = tmp_path / "state" / f"listening-http.{gone.pid}.json"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text(json.dumps({"url": "http://127.0.0.1:1/approvals", "pid": gone.pid}), encoding="utf-8")
    link, said = login_link(config)
    assert link.startswith("http://127.0.0.1:8765/approvals/login?token=") and "is running" in said
    assert not stale.exists()


def test_login_links_a_wildcard_server_at_an_address_its_page_accepts(tmp_path: Path) -> None:
    """A server on 0.0.0.0 recorded `http://0.0.0.0:PORT`, which its own page refused with 421."""
    config = demo_config(tmp_path)
    with http_server(config, "--host", "0.0.0.0", MCP_TOOLS_HTTP_TOKEN=STRONG) as base:
        link, _ = login_link(config)
        assert link.startswith(base + "/approvals/login?token="), link
        signed_in = httpx2.get(link, follow_redirects=False)
        assert signed_in.status_code == 200 and "Signed in" in signed_in.text, signed_in.text
        assert signed_in.headers.get("set-cookie")
