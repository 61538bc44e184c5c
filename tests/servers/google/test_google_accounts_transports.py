"""Two Google accounts through a real `mcp-tools serve` process, over stdio and over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.harness import failure, ok
from tests.processes import http_server, stdio_params, write_config
from tests.servers.fake_google import FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import sign_in
from tests.servers.google_accounts_fixtures import WORK, raw_mail, store_token
from tests.test_http import http_client

pytestmark = pytest.mark.anyio
TOKEN = "tok-accounts-0123456789"


def _config(tmp_path: Path, google: FakeGoogle, work: FakeGoogle) -> Path:
    settings = sign_in(tmp_path, google)
    store_token(tmp_path, work, "work")
    return write_config(
        tmp_path / "config.toml",
        f'[server]\nnamespaces = ["gmail"]\nstate_dir = "{tmp_path / "state"}"\ndata_dir = "{tmp_path / "data"}"\n'
        f'[google]\nclient_secrets = "{settings["google"]["client_secrets"]}"\napi_endpoint = "{google.url}"\n'
        f'retry_seconds = 3\n[http.tokens]\nlaptop = "{TOKEN}"\n',
    )


async def _exercise(client: Client, google: FakeGoogle) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["gmail_search"].input_schema["properties"]["account"] == {"type": "string"}
    home = ok(await client.call_tool("gmail_search", {}))
    office = ok(await client.call_tool("gmail_search", {"account": "work"}))
    assert [m["subject"] for m in home["messages"]] == ["home"] and home["account"] == "default"
    assert [m["subject"] for m in office["messages"]] == ["office"] and office["account"] == "work"
    merged = ok(await client.call_tool("gmail_search", {"account": "all", "limit": 1}))
    assert [(m["subject"], m["account"]) for m in merged["messages"]] == [("office", "work")]
    rest = ok(await client.call_tool("gmail_search", {"account": "all", "cursor": merged["next_cursor"]}))
    assert [(m["subject"], m["account"]) for m in rest["messages"]] == [("home", "default")]
    assert rest["next_cursor"] is None
    unknown = failure(await client.call_tool("gmail_search", {"account": "nobody@example.org"}))
    assert unknown["kind"] == "invalid_arguments" and "work" in unknown["message"]


def _mailboxes(google: FakeGoogle, gmail: FakeGmail) -> FakeGoogle:
    work = google.add_account(WORK)
    gmail.add(raw_mail("home", "Mon, 3 Nov 2025 09:00:00 +0000"))
    FakeGmail(work).add(raw_mail("office", "Tue, 4 Nov 2025 09:00:00 +0000", to=WORK))
    return work


async def test_two_accounts_over_stdio(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail) -> None:
    work = _mailboxes(google, gmail)
    config = _config(tmp_path, google, work)
    async with Client(stdio_params(config), mode="legacy") as client:
        with anyio.fail_after(120):
            await _exercise(client, google)
    assert google.calls_for(WORK) and google.calls_for("me@example.com")


async def test_two_accounts_over_http(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail) -> None:
    work = _mailboxes(google, gmail)
    config = _config(tmp_path, google, work)
    kwargs: dict[str, Any] = {"mode": "legacy"}
    with http_server(config) as base:
        async with http_client(base + "/mcp", TOKEN, **kwargs) as client:
            with anyio.fail_after(120):
                await _exercise(client, google)
    assert google.calls_for(WORK).count("gmail.users.messages.list") == 2  # its one hit given, it is not asked again
