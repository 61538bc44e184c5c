"""The notify hook posting to a webhook URL, and the `approvals serve` / `approvals login` commands."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcp_tools.composition.app import build_app
from tests.harness import connect, failure, make_config
from tests.processes import (
    DEMO_ENTRY,
    ROOT,
    STOP_POLL_SECONDS,
    child_env,
    demo_config,
    free_port,
    run_cli,
    stdio_params,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A webhook receiver on loopback, standing in for ntfy or Slack."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            assert self.headers["Content-Type"] == "application/json"
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()


async def test_the_hook_posts_each_pending_approval_as_json_without_secrets(
    tmp_path: Path, demo_namespace: str, receiver: tuple[str, list[dict[str, Any]]]
) -> None:
    url, received = receiver
    settings = {
        "server": {"servers": ["demo"]},
        "approvals": {"wait_seconds": 0, "notify": {"url": url}, "page": {"url": "https://phone.example/approvals"}},
    }
    app = build_app(make_config(tmp_path, settings))
    async with connect(tmp_path, app=app, elicit=None) as client:
        await client.call_tool("demo_note", {"key": "k", "text": "v1", "api_token": "sk-live-123"})
        replaced = failure(await client.call_tool("demo_note", {"key": "k", "text": "v2", "api_token": "sk-live-123"}))
        again = failure(await client.call_tool("demo_note", {"key": "k", "text": "v2", "api_token": "sk-live-123"}))
    assert replaced["kind"] == "approval_required" and again["approval_id"] == replaced["approval_id"]
    link = f"https://phone.example/approvals/a/{replaced['approval_id']}"
    assert replaced["hint"].startswith(f"Ask the person to approve it on the approvals page ({link}) or run `")
    [notice] = received  # announced once, though asked twice
    assert notice["event"] == "approval_requested" and notice["id"] == replaced["approval_id"]
    assert notice["tool"] == "demo.note" and notice["risk"] == "high" and notice["summary"] == "Store note 'k'"
    assert notice["arguments"]["api_token"] == "[redacted]"
    assert notice["link"] == f"https://phone.example/approvals/a/{notice['id']}"
    assert notice["approve_command"].endswith(f"mcp-tools approvals approve {notice['id']}")
    assert set(notice) >= {"message", "principal", "transport", "created", "expires"}
    assert "sk-live-123" not in json.dumps(received)


def test_login_prints_a_one_time_link_for_the_page(tmp_path: Path) -> None:
    config = demo_config(tmp_path, "[approvals.page]\nport = 9911\n[http]\nport = 9912\n")
    standalone = run_cli(config, "approvals", "login")
    served = run_cli(config, "approvals", "login", "--http")
    assert standalone.returncode == served.returncode == 0
    assert standalone.stdout.startswith("http://127.0.0.1:9911/approvals/login?token=")
    assert served.stdout.startswith("http://127.0.0.1:9912/approvals/login?token=")
    assert "works once" in standalone.stderr
    stored = (tmp_path / "state" / "policy.sqlite3").read_bytes()
    assert standalone.stdout.strip().split("token=")[1].encode() not in stored  # only its hash is kept


def test_approvals_serve_prints_a_sign_in_link_and_serves_the_page(tmp_path: Path) -> None:
    port = free_port()
    config = demo_config(tmp_path)
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "approvals", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=str(ROOT),
    )
    try:
        assert process.stdout is not None
        link = process.stdout.readline().strip()
        assert link.startswith(f"http://127.0.0.1:{port}/approvals/login?token=")
        deadline = time.monotonic() + 20
        while True:
            try:
                root = httpx2.get(f"http://127.0.0.1:{port}/")
                break
            except httpx2.HTTPError:
                assert time.monotonic() < deadline, "the page did not come up"
                time.sleep(0.1)
        assert root.status_code == 307 and root.headers["location"] == "/approvals/"
        with httpx2.Client() as browser:
            assert browser.get(link).status_code == 200
            page = browser.get(f"http://127.0.0.1:{port}/approvals/")
            assert page.status_code == 200 and "Waiting for you (0)" in page.text
            assert "script-src 'self'" in page.headers["content-security-policy"]
            assert browser.get(link).status_code == 403
            rebound = browser.get(f"http://127.0.0.1:{port}/approvals/", headers={"Host": "evil.example"})
            assert rebound.status_code == 421
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_approvals_serve_refuses_a_public_address_without_allowed_hosts(tmp_path: Path) -> None:
    result = run_cli(demo_config(tmp_path), "approvals", "serve", "--host", "0.0.0.0", "--port", "9913")
    assert result.returncode == 2 and "allowed_hosts" in result.stderr


async def test_cli_decisions_are_recorded_as_the_cli(tmp_path: Path, demo_namespace: str) -> None:
    config = demo_config(tmp_path)
    app = build_app(make_config(tmp_path, {"server": {"servers": ["demo"]}}))
    async with connect(tmp_path, app=app, elicit=None) as client:
        pending = failure(await client.call_tool("demo_erase", {"target": "t"}))
    result = await anyio.to_thread.run_sync(lambda: run_cli(config, "approvals", "deny", pending["approval_id"]))
    assert result.returncode == 0
    meta = app.store.approval_meta([pending["approval_id"]])[pending["approval_id"]]
    assert meta == {"transport": "test", "decided_by": "cli", "client": "mcp"}  # the SDK client's clientInfo
    shown = json.loads(run_cli(config, "approvals", "show", pending["approval_id"]).stdout)
    assert shown["status"] == "denied" and shown["decided_by"] == "cli" and shown["transport"] == "test"


async def test_who_asked_is_named_from_the_clients_own_clientinfo(tmp_path: Path) -> None:
    """Claude Desktop over stdio reads as "asked by Claude Desktop" on every channel, not "local over stdio"."""
    import mcp_types as types
    from mcp import Client

    received = tmp_path / "notice.json"
    command = [sys.executable, "-c", f"import sys; open({str(received)!r}, 'wb').write(sys.stdin.buffer.read())"]
    config = demo_config(
        tmp_path, f"[approvals]\nwait_seconds = 0\n[approvals.notify]\ncommand = {json.dumps(command)}\n"
    )
    desktop = types.Implementation(name="claude-ai", version="0.1.0")
    async with Client(stdio_params(config), mode="legacy", client_info=desktop) as client:
        pending = failure(await client.call_tool("demo_erase", {"target": "t"}))
    notice = json.loads(received.read_text(encoding="utf-8"))
    assert notice["id"] == pending["approval_id"] and notice["transport"] == "stdio"
    assert notice["client"] == "Claude Desktop" and notice["asked_by"] == "asked by Claude Desktop"
    shown = json.loads(run_cli(config, "approvals", "show", pending["approval_id"]).stdout)
    assert shown["client"] == "Claude Desktop" and shown["transport"] == "stdio"
