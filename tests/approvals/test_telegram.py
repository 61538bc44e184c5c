"""The Telegram channel end to end against the fake Bot API: buttons, presses, edits, refusals."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from mcp_tools.approvals.telegram import TelegramError
from mcp_tools.composition.app import build_app
from mcp_tools.core.config import ConfigError
from tests.approvals.fake_telegram import CHAT, PERSON, STRANGER, TOKEN, FakeBotApi, running_fake
from tests.harness import connect, failure, make_config, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
def fake() -> Iterator[FakeBotApi]:
    with running_fake() as api:
        yield api


def telegram_app(tmp_path: Path, fake: FakeBotApi, wait: float = 30, **telegram: Any):
    settings = {
        "server": {"servers": ["demo"]},
        "approvals": {
            "wait_seconds": wait,
            "progress_interval_seconds": 0.5,
            "telegram": {
                "chat_id": CHAT,
                "api_base": fake.base,
                "poll_timeout_seconds": 1,
                **telegram,
            },
        },
    }
    return build_app(make_config(tmp_path, settings, environ={"MCP_TOOLS_TELEGRAM_BOT_TOKEN": TOKEN}))


def telegram_of(app: Any) -> Any:
    return next(channel for channel in app.out_of_band.channels if channel.name == "telegram")


async def in_thread(function: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(function, *args)


async def test_a_press_on_approve_runs_the_waiting_call(tmp_path: Path, fake: FakeBotApi, demo_namespace: str) -> None:
    app = telegram_app(tmp_path, fake, allowed_user_ids=[PERSON["id"]])
    result: dict[str, Any] = {}

    async def call(client: Any) -> None:
        result["r"] = await client.call_tool("demo_erase", {"target": "old-drafts"})

    def confirmed() -> bool:  # the next poll, long (late presses are still answered) or not, names the offset
        return any(method == "getUpdates" and params.get("offset") == 1001 for method, params in fake.calls)

    async with connect(tmp_path, app=app, elicit=None) as client, anyio.create_task_group() as group:
        group.start_soon(call, client)
        message = await in_thread(fake.sent_with_buttons)
        query = fake.press(message, "Approve")
        assert await in_thread(fake.answer_to, query) == "Approved"
        # while the server still runs: the message is edited and the press confirmed
        await in_thread(fake.edited_text, message["message_id"], "Approved by telegram:@ada")
        await in_thread(fake.until, confirmed, "the press was never confirmed with the next offset")
    assert ok(result["r"]) == {"erased": "old-drafts"}
    text = message["text"]
    assert "Erase 'old-drafts'" in text and "Tool: demo.erase (high risk)" in text
    assert "Asked by local over test" in text
    buttons = message["reply_markup"]["inline_keyboard"][0]
    assert [b["text"] for b in buttons] == ["Approve", "Deny"]
    for button in buttons:
        assert len(button["callback_data"].encode()) <= 64 and "old-drafts" not in button["callback_data"]
    edited = await in_thread(fake.edited_text, message["message_id"], "Approved by telegram:@ada")
    assert edited.startswith(text)
    assert "reply_markup" not in fake.messages[message["message_id"]]  # the buttons are gone
    getupdates = [params for method, params in fake.calls if method == "getUpdates"]
    assert all(p["allowed_updates"] == ["callback_query"] for p in getupdates)
    assert getupdates[0]["timeout"] == 1  # long polling while the message waits
    assert any(p.get("offset") == 1001 for p in getupdates)  # the press is confirmed by the next poll
    rows = app.store.tail()
    assert [(row.decision, row.outcome) for row in rows] == [("approved_out_of_band", "ok")]
    assert app.store.approval_meta([rows[0].approval_id])[rows[0].approval_id]["decided_by"] == "telegram:@ada"  # type: ignore[index]
    assert TOKEN not in str(rows) and TOKEN not in str(fake.messages)


async def test_a_press_on_deny_declines_the_call(tmp_path: Path, fake: FakeBotApi, demo_namespace: str) -> None:
    app = telegram_app(tmp_path, fake)
    result: dict[str, Any] = {}

    async def call(client: Any) -> None:
        result["r"] = await client.call_tool("demo_erase", {"target": "t"})

    async with connect(tmp_path, app=app, elicit=None) as client, anyio.create_task_group() as group:
        group.start_soon(call, client)
        message = await in_thread(fake.sent_with_buttons)
        assert await in_thread(fake.answer_to, fake.press(message, "Deny")) == "Denied"
        await in_thread(fake.edited_text, message["message_id"], "Denied by telegram:@ada")
    assert failure(result["r"])["kind"] == "declined_by_user"
    assert app.services["demo"].erased == []


async def test_presses_from_another_user_or_chat_are_refused(
    tmp_path: Path, fake: FakeBotApi, demo_namespace: str
) -> None:
    app = telegram_app(tmp_path, fake, allowed_user_ids=[PERSON["id"]])
    result: dict[str, Any] = {}

    async def call(client: Any) -> None:
        result["r"] = await client.call_tool("demo_erase", {"target": "t"})

    async with connect(tmp_path, app=app, elicit=None) as client, anyio.create_task_group() as group:
        group.start_soon(call, client)
        message = await in_thread(fake.sent_with_buttons)
        stranger = await in_thread(fake.answer_to, fake.press(message, "Approve", user=STRANGER))
        other_chat = await in_thread(fake.answer_to, fake.press(message, "Approve", chat=5555))
        forged = await in_thread(fake.answer_to, fake.press_data(message, "a:guessed-nonce"))
        other_message = dict(message, message_id=message["message_id"] + 1000)
        data = message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        moved = await in_thread(fake.answer_to, fake.press_data(other_message, data))
        assert [item.status for item in app.store.list_approvals()] == ["pending"]
        assert app.services["demo"].erased == []
        assert await in_thread(fake.answer_to, fake.press(message, "Deny")) == "Denied"
    assert stranger == "Not accepted: you may not answer this approval."
    assert other_chat == "Not accepted: wrong chat or message."
    assert moved == "Not accepted: wrong chat or message."
    assert forged == "Not accepted: this button is not known to this server."
    assert failure(result["r"])["kind"] == "declined_by_user"


async def test_replayed_and_expired_presses_are_refused(
    tmp_path: Path, fake: FakeBotApi, demo_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = telegram_app(tmp_path, fake, wait=0.5)
    async with connect(tmp_path, app=app, elicit=None) as client:
        first = failure(await client.call_tool("demo_erase", {"target": "once"}))
        message = await in_thread(fake.sent_with_buttons)
        assert await in_thread(fake.answer_to, fake.press(message, "Approve")) == "Approved"
        replay = await in_thread(fake.answer_to, fake.press(message, "Approve"))
        replay_deny = await in_thread(fake.answer_to, fake.press(message, "Deny"))
        assert ok(await client.call_tool("demo_erase", {"target": "once"})) == {"erased": "once"}

        second = failure(await client.call_tool("demo_erase", {"target": "late"}))
        late = fake.sent_with_buttons()
        assert late["message_id"] != message["message_id"]
        later = SimpleNamespace(time=lambda: time.time() + 3600)
        monkeypatch.setattr("mcp_tools.approvals.telegram.time", later)
        expired = await in_thread(fake.answer_to, fake.press(late, "Approve"))
    assert first["kind"] == second["kind"] == "approval_required"
    assert first["hint"].startswith("Ask the person to approve it in Telegram or run `")
    assert "mcp-tools approvals approve apr-" in first["hint"]
    assert replay == replay_deny == "Not accepted: this approval was already answered."
    assert expired == "Not accepted: this approval has expired."
    assert app.store.get_approval(second["approval_id"]).status == "pending"  # type: ignore[union-attr]
    assert app.services["demo"].erased == ["once"]


async def test_the_message_shows_decisions_made_elsewhere(
    tmp_path: Path, fake: FakeBotApi, demo_namespace: str
) -> None:
    app = telegram_app(tmp_path, fake)
    result: dict[str, Any] = {}

    async def call(client: Any, target: str) -> None:
        result[target] = await client.call_tool("demo_erase", {"target": target})

    async with connect(tmp_path, app=app, elicit=None) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(call, client, "by-cli")
            message = await in_thread(fake.sent_with_buttons)
            approval_id = app.store.list_approvals()[0].id
            from mcp_tools.state.sqlite import PolicyStore

            PolicyStore(tmp_path / "state" / "policy.sqlite3").decide(approval_id, True, 600, decided_by="cli")
        await in_thread(fake.edited_text, message["message_id"], "Approved by cli")

        with anyio.move_on_after(1.5):
            await client.call_tool("demo_erase", {"target": "cancelled"})
        cancelled = fake.sent_with_buttons()  # on this loop: the withdrawal cannot edit it away meanwhile
        await in_thread(fake.edited_text, cancelled["message_id"], "Withdrawn: the request was cancelled")
        late = await in_thread(fake.answer_to, fake.press(cancelled, "Approve"))
    assert ok(result["by-cli"]) == {"erased": "by-cli"}
    assert late == "Not accepted: this approval was already answered."
    assert app.services["demo"].erased == ["by-cli"]


@pytest.mark.slow
async def test_servers_sharing_one_bot_poll_in_turn_and_any_of_them_takes_the_press(
    tmp_path: Path, fake: FakeBotApi, demo_namespace: str
) -> None:
    """Claude Desktop's stdio server and `serve --http` often run side by side with the same bot."""
    first, second = telegram_app(tmp_path, fake), telegram_app(tmp_path, fake)
    result: dict[str, Any] = {}

    async def call(client: Any, target: str) -> None:
        result[target] = await client.call_tool("demo_erase", {"target": target})

    async with second.running(), connect(tmp_path, app=first, elicit=None) as client:
        for target, button in (("one", "Approve"), ("two", "Deny"), ("three", "Approve")):
            async with anyio.create_task_group() as group:
                group.start_soon(call, client, target)
                message = await in_thread(fake.sent_with_buttons)
                (waiting,) = first.store.pending_approvals()
                with anyio.fail_after(15):  # both servers have seen the open message
                    for app in (first, second):
                        await telegram_of(app).sees_waiting(waiting.id)
                assert await in_thread(fake.answer_to, fake.press(message, button)) in ("Approved", "Denied")
            await in_thread(fake.edited_text, message["message_id"], "by telegram:@ada")
    assert ok(result["one"]) == {"erased": "one"} and ok(result["three"]) == {"erased": "three"}
    assert failure(result["two"])["kind"] == "declined_by_user"
    assert fake.conflicts == 0  # never two getUpdates at once
    assert fake.methods().count("editMessageText") == 3  # each message edited once, by one server
    assert fake.methods().count("sendMessage") == 3


async def test_new_mail_is_announced_with_sender_subject_and_summary(
    tmp_path: Path, fake: FakeBotApi, demo_namespace: str
) -> None:
    settings = {
        "server": {"servers": ["inbox"]},
        "inbox": {"addresses": ["assistant@example.org"], "notify": "telegram"},
        "approvals": {"telegram": {"chat_id": CHAT, "api_base": fake.base, "bot_token": TOKEN}},
    }
    app = build_app(make_config(tmp_path, settings))
    raw = (
        b"From: Grace Hopper <grace@example.com>\r\nTo: assistant@example.org\r\n"
        b"Subject: Compiler review on Friday\r\nMessage-ID: <m1@example.com>\r\n\r\n"
        b"Could we move the compiler review to Friday at ten? The draft is attached in the shared folder.\r\n"
    )
    async with app.running():
        await app.services["inbox"].ingest(raw, via="test")
        await app.services["inbox"].ingest(raw, via="test")  # a duplicate is not announced again
    [message] = list(fake.messages.values())
    assert message["chat"]["id"] == CHAT and "reply_markup" not in message
    assert "Grace Hopper <grace@example.com>" in message["text"]
    assert "Compiler review on Friday" in message["text"]
    assert "move the compiler review to Friday" in message["text"]


def test_inbox_notify_telegram_needs_the_bot(tmp_path: Path) -> None:
    settings = {"server": {"servers": ["inbox"]}, "inbox": {"notify": "telegram"}}
    with pytest.raises(ConfigError, match=r"approvals\.telegram"):
        build_app(make_config(tmp_path, settings))


def test_the_bot_token_is_required_and_never_shown(tmp_path: Path) -> None:
    settings = {"approvals": {"telegram": {"chat_id": CHAT}}}
    with pytest.raises(ConfigError, match="bot_token"):
        build_app(make_config(tmp_path, settings))
    bad = {"approvals": {"telegram": {"chat_id": "not-a-number", "bot_token": TOKEN}}}
    with pytest.raises(ConfigError) as raised:
        make_config(tmp_path, bad)
    assert TOKEN not in str(raised.value)


async def test_the_bot_token_stays_out_of_logs_even_when_telegram_refuses(
    tmp_path: Path, fake: FakeBotApi, demo_namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    app = telegram_app(tmp_path, fake, wait=0.5, chat_id=9999)  # a chat the bot is not in
    async with connect(tmp_path, app=app, elicit=None) as client:
        refused = failure(await client.call_tool("demo_erase", {"target": "t"}))
        channel = app.out_of_band.channels[0]
        with pytest.raises(TelegramError, match="chat not found"):
            await channel.say("hello")  # type: ignore[attr-defined]
    assert refused["kind"] == "approval_required"
    assert "could not announce" in caplog.text
    assert TOKEN not in caplog.text and TOKEN.split(":")[1] not in caplog.text
    assert fake.methods()[0] == "sendMessage" and not fake.messages


def padded_request() -> dict[str, Any]:
    """An `http.request` whose confirmation cannot fit one Telegram message: 30 long headers."""
    headers = {f"X-Pad-{n:02}": "p" * 400 for n in range(30)}
    return {"method": "POST", "url": "http://api.test/run", "headers": headers, "body": "rm -rf ~"}


def http_telegram_app(tmp_path: Path, fake: FakeBotApi, **approvals: Any):
    settings = {
        "server": {"servers": ["http"]},
        "http": {"outbound": {"enabled": True, "allow_hosts": ["api.test"], "allow_plain_http": True}},
        "approvals": {
            "wait_seconds": 30,
            "progress_interval_seconds": 0.5,
            "telegram": {"chat_id": CHAT, "api_base": fake.base, "poll_timeout_seconds": 1},
            **approvals,
        },
    }
    return build_app(make_config(tmp_path, settings, environ={"MCP_TOOLS_TELEGRAM_BOT_TOKEN": TOKEN}))


async def test_a_confirmation_too_long_for_a_message_says_so_and_cannot_be_approved_there(
    tmp_path: Path, fake: FakeBotApi
) -> None:
    app = http_telegram_app(tmp_path, fake)
    result: dict[str, Any] = {}

    async def call(client: Any) -> None:
        result["r"] = await client.call_tool("http_request", padded_request())

    async with connect(tmp_path, app=app, elicit=None) as client, anyio.create_task_group() as group:
        group.start_soon(call, client)
        message = await in_thread(fake.sent_with_buttons)
        [pending] = app.store.pending_approvals()
        text = message["text"]
        assert len(text) <= 4096 and text.startswith("⚠️ Not shown in full.")
        assert "too long for a Telegram message" in text and "cannot be approved here" in text
        assert "Tool: http.request (high risk)" in text
        assert "Asked by local over test (mcp)" in text and f"Approval {pending.id}." in text
        assert f"`mcp-tools approvals show {pending.id}`" in text  # no page: the command that shows all of it
        assert [b["text"] for b in message["reply_markup"]["inline_keyboard"][0]] == ["Deny"]
        deny = message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        forged = await in_thread(fake.answer_to, fake.press_data(message, "a:" + deny[2:]))
        assert forged.startswith("Not accepted") and "too long" in forged
        assert app.store.get_approval(pending.id).status == "pending"  # type: ignore[union-attr]
        assert await in_thread(fake.answer_to, fake.press(message, "Deny")) == "Denied"
    assert failure(result["r"])["kind"] == "declined_by_user"


def test_a_confirmation_too_long_for_a_message_links_to_the_page() -> None:
    from mcp_tools.approvals.telegram import message_text
    from mcp_tools.policy.channels import ApprovalNotice

    link = "https://phone.example/approvals/a/apr-long"
    notice = ApprovalNotice(
        id="apr-long",
        tool="terminal.run",
        summary="Run " + "x" * 9000,
        message="Run " + "x" * 9000 + "\n\nTool: terminal.run (high risk)",
        risk="high",
        arguments={},
        principal="ci-agent",
        transport="http",
        created=0.0,
        expires=600.0,
        link=link,
    )
    text = message_text(notice)
    assert len(text) <= 4096 - 200  # room left for the edit that settles it
    assert f"Read all of it on the approvals page: {link}" in text
    assert "Tool: terminal.run (high risk)" in text and "Asked by token ci-agent over HTTP;" in text
    assert "Approval apr-long." in text and "more characters)" in text
    short = message_text(ApprovalNotice(**{**notice.__dict__, "message": "Run x\n\nTool: t (high risk)"}))
    assert not short.startswith("⚠️") and short.startswith("Run x") and link in short
