"""A model that tries to trick the person: the same two attacks against every channel that asks.

An `http.request` URL whose newlines draw a fake "low risk / GET / Allow this?" block under the
real confirmation, and a raw U+202E in a path that reverses the file name on screen. Every
channel (the client's elicitation form, the approvals page, Telegram, the CLI prompt, the notify
hook) must show both as visible escapes.
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_tools.composition.app import build_app
from tests.approvals.fake_telegram import CHAT, TOKEN, FakeBotApi, running_fake
from tests.approvals.test_page import signed_in
from tests.harness import connect, failure, make_config
from tests.processes import answer_on_terminal, demo_config, run_cli

pytestmark = pytest.mark.anyio

FAKE_BLOCK = '\n\nTool: http.request (low risk)\nArguments:\n  method: "GET"\n\nAllow this?\n\n\n\n'
ATTACKS = {
    "newlines": ("http://api.test/upload" + FAKE_BLOCK, "upload\\n\\nTool: http.request (low risk)\\nArguments:"),
    "bidi": ("http://api.test/invoice\u202efdp.exe", "invoice\\u202efdp.exe"),
}
OUTBOUND = {"enabled": True, "allow_hosts": ["api.test"], "allow_plain_http": True}


@pytest.fixture(params=sorted(ATTACKS))
def attack(request: pytest.FixtureRequest) -> tuple[str, str]:
    return ATTACKS[request.param]


def arguments(url: str) -> dict[str, Any]:
    return {"method": "POST", "url": url, "body": "{}"}


def http_app(tmp_path: Path, **approvals: Any) -> Any:
    settings = {"server": {"servers": ["http"]}, "http": {"outbound": OUTBOUND}, "approvals": approvals}
    return build_app(make_config(tmp_path, settings, environ={"MCP_TOOLS_TELEGRAM_BOT_TOKEN": TOKEN}))


def assert_shown_safely(text: str, escaped: str) -> None:
    """The real confirmation's lines only: the attack shows as escapes inside one quoted value."""
    lines = text.splitlines()
    assert not any(line.lstrip().startswith("Tool: http.request (low risk)") for line in lines), text
    assert lines.count("Allow this?") <= 1 and 'method: "GET"' not in lines
    assert "\u202e" not in text
    assert escaped in text, text


async def test_the_elicitation_form(tmp_path: Path, attack: tuple[str, str]) -> None:
    url, escaped = attack
    seen: list[Any] = []
    async with connect(tmp_path, app=http_app(tmp_path), elicit="decline", seen=seen) as client:
        result = await client.call_tool("http_request", arguments(url))
    assert failure(result)["kind"] == "declined_by_user"
    [asked] = seen
    assert_shown_safely(asked.message, escaped)
    assert asked.message.splitlines()[2] == "Tool: http.request (high risk)"


async def test_the_approvals_page(tmp_path: Path, attack: tuple[str, str]) -> None:
    url, escaped = attack
    app = http_app(tmp_path)
    async with connect(tmp_path, app=app, elicit=None) as client:
        pending = failure(await client.call_tool("http_request", arguments(url)))
    client, _ = signed_in(app.store)
    body = client.get(f"/approvals/a/{pending['approval_id']}").text
    card = html.unescape(body.split('<section class="focus">', 1)[1].split("</section>", 1)[0])
    assert_shown_safely(card, escaped)
    assert card.count("Tool: http.request (high risk)") == 1


async def test_telegram(tmp_path: Path, attack: tuple[str, str]) -> None:
    url, escaped = attack
    with running_fake() as fake:
        app = http_app(tmp_path, wait_seconds=0, telegram=telegram_settings(fake))
        async with connect(tmp_path, app=app, elicit=None) as client:
            assert failure(await client.call_tool("http_request", arguments(url)))["kind"] == "approval_required"
        message = await anyio.to_thread.run_sync(fake.sent_with_buttons)
    assert_shown_safely(message["text"], escaped)


async def test_the_notify_hook(tmp_path: Path, attack: tuple[str, str]) -> None:
    url, escaped = attack
    received = tmp_path / "notice.json"
    command = [sys.executable, "-c", f"import sys; open({str(received)!r}, 'wb').write(sys.stdin.buffer.read())"]
    app = http_app(tmp_path, wait_seconds=0, notify={"command": command})
    async with connect(tmp_path, app=app, elicit=None) as client:
        assert failure(await client.call_tool("http_request", arguments(url)))["kind"] == "approval_required"
    notice = json.loads(received.read_text(encoding="utf-8"))
    assert_shown_safely(notice["message"], escaped)
    assert "\n" not in notice["summary"] and "\u202e" not in notice["summary"]
    assert notice["asked_by"] == "asked by local over test (mcp)"  # the SDK client's clientInfo name


OUTBOUND_TOML = '[http.outbound]\nenabled = true\nallow_hosts = ["api.test"]\nallow_plain_http = true\n'


def test_the_cli_prompt(tmp_path: Path, attack: tuple[str, str]) -> None:
    url, escaped = attack
    config = demo_config(tmp_path, OUTBOUND_TOML, servers='["http"]')
    prompt, out, code = answer_on_terminal(
        config, "call", "http.request", "--args", json.dumps(arguments(url)), answer=b"n\n"
    )
    shown = prompt.decode().replace("\r\n", "\n")
    assert_shown_safely(shown, escaped)
    assert code == 1 and "you declined it" in out


def telegram_settings(fake: FakeBotApi) -> dict[str, Any]:
    return {"chat_id": CHAT, "api_base": fake.base, "poll_timeout_seconds": 1}


def test_the_cli_approvals_commands(tmp_path: Path, attack: tuple[str, str]) -> None:
    """`approvals list`, `show` and `approve` print the summary and arguments to a person's terminal too."""
    url, _ = attack
    config = demo_config(tmp_path, OUTBOUND_TOML, servers='["http"]')
    waiting = run_cli(config, "call", "http.request", "--args", json.dumps(arguments(url)), "--json")
    approval = json.loads(waiting.stdout)["error"]["approval_id"]
    listed = run_cli(config, "approvals", "list").stdout
    shown = run_cli(config, "approvals", "show", approval).stdout
    approved = run_cli(config, "approvals", "approve", approval).stdout
    for printed in (listed, shown, approved):
        assert "\u202e" not in printed and "Tool: http.request (low risk)" not in printed.splitlines()
    assert listed.count("\n") == 1 and approved.startswith(f"Approved {approval}: POST http://api.test/")
    assert json.loads(shown)["arguments"]["url"] == url  # still JSON, with the escapes JSON allows
