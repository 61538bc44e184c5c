"""Waiting calls over real transports (stdio and HTTP subprocesses), answered on Telegram.

Each transport: a press on Approve runs the call, a press on Deny declines it, silence ends the
wait with `approval_required` (and the retry flow still works), and a client that gives up
withdraws the approval and the Telegram message says so. Then the page, Telegram and the CLI
race to answer one approval: exactly one of them wins.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from tests.approvals.fake_telegram import CHAT, TOKEN, FakeBotApi, running_fake
from tests.approvals.helpers import TOKENS, approvals, audit, http_client, wait_for_pending
from tests.harness import failure, ok
from tests.processes import cli_in_process, demo_config, http_server, run_cli, stdio_params

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def fake() -> Iterator[FakeBotApi]:
    with running_fake() as api:
        yield api


def telegram_config(tmp_path: Path, fake: FakeBotApi, wait: float = 4, extra: str = "") -> Path:
    return demo_config(
        tmp_path,
        TOKENS
        + f"[approvals]\nwait_seconds = {wait}\nprogress_interval_seconds = 0.5\n"
        + f'[approvals.telegram]\nchat_id = {CHAT}\napi_base = "{fake.base}"\npoll_timeout_seconds = 1\n'
        + extra,
    )


@asynccontextmanager
async def client_over(transport: str, config: Path) -> AsyncIterator[Client]:
    env = {"MCP_TOOLS_TELEGRAM_BOT_TOKEN": TOKEN}
    if transport == "stdio":
        async with Client(stdio_params(config, **env), mode="legacy") as client:
            yield client
    else:
        with http_server(config, **env) as base:
            async with http_client(base + "/mcp") as client:
                yield client


async def pressed(fake: FakeBotApi, button: str, after: set[int]) -> dict[str, Any]:
    """Wait for a new message with buttons, press one, and check the bot answered."""

    def find() -> dict[str, Any]:
        return fake._until(
            lambda: next(
                (m for m in fake.messages.values() if m.get("reply_markup") and m["message_id"] not in after), None
            ),
            20,
            "no new approval message",
        )

    message = await anyio.to_thread.run_sync(find)
    after.add(message["message_id"])
    query = fake.press(message, button)
    await anyio.to_thread.run_sync(fake.answer_to, query)
    return message


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_waiting_calls_answered_on_telegram(tmp_path: Path, fake: FakeBotApi, transport: str) -> None:
    config = telegram_config(tmp_path, fake)
    seen: set[int] = set()
    progress: list[str | None] = []
    results: dict[str, Any] = {}

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async def call(client: Client, target: str) -> None:
        results[target] = await client.call_tool("demo_erase", {"target": target}, progress_callback=on_progress)

    async with client_over(transport, config) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(call, client, "approved")
            approved_message = await pressed(fake, "Approve", seen)
        async with anyio.create_task_group() as group:
            group.start_soon(call, client, "denied")
            denied_message = await pressed(fake, "Deny", seen)

        timed_out = failure(await client.call_tool("demo_erase", {"target": "silence"}))
        silence = await pressed(fake, "Approve", seen)  # the person answers late
        assert ok(await client.call_tool("demo_erase", {"target": "silence"})) == {"erased": "silence"}

        with anyio.move_on_after(1.5):
            await client.call_tool("demo_erase", {"target": "cancelled"})
        cancelled = await anyio.to_thread.run_sync(
            lambda: fake._until(
                lambda: next((m for m in fake.messages.values() if m["message_id"] not in seen), None), 20, "none"
            )
        )
        await anyio.to_thread.run_sync(fake.edited_text, cancelled["message_id"], "Withdrawn")

    assert ok(results["approved"]) == {"erased": "approved"}
    assert failure(results["denied"])["kind"] == "declined_by_user"
    assert timed_out["kind"] == "approval_required" and timed_out["approval_id"].startswith("apr-")
    assert progress and all(str(text).startswith("Waiting for the person to approve apr-") for text in progress)
    assert "Approved by telegram:@ada" in fake.messages[approved_message["message_id"]]["text"]
    assert "Denied by telegram:@ada" in fake.messages[denied_message["message_id"]]["text"]
    assert "Approved by telegram:@ada" in fake.messages[silence["message_id"]]["text"]
    decisions = [(row["tool"], row["decision"], row["outcome"]) for row in audit(config)]
    assert decisions == [
        ("demo.erase", "approved_out_of_band", "ok"),
        ("demo.erase", "declined", "declined_by_user"),
        ("demo.erase", "approval_required", "approval_required"),
        ("demo.erase", "approved_out_of_band", "ok"),
        ("demo.erase", "withdrawn", "cancelled"),
    ]
    statuses = {item["id"]: item["status"] for item in approvals(config, "--all")}
    assert sorted(statuses.values()) == ["consumed", "consumed", "denied", "withdrawn"]


async def test_page_telegram_and_cli_race_and_exactly_one_wins(tmp_path: Path, fake: FakeBotApi) -> None:
    config = telegram_config(tmp_path, fake, wait=30)
    env = {"MCP_TOOLS_TELEGRAM_BOT_TOKEN": TOKEN}
    outcome: dict[str, Any] = {}
    with http_server(config, **env) as base:
        token = cli_in_process(config, "approvals", "login", "--http").stdout.strip().split("token=", 1)[1]
        browser = httpx2.Client(base_url=base)
        assert browser.get(f"/approvals/login?token={token}").status_code == 200
        csrf = browser.get("/approvals/").text.split('name="csrf" value="', 1)[1].split('"', 1)[0]

        async def call() -> None:
            async with http_client(base + "/mcp") as client:
                outcome["result"] = await client.call_tool("demo_erase", {"target": "contested"})

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            [pending] = await wait_for_pending(config)
            message = await anyio.to_thread.run_sync(fake.sent_with_buttons)
            answers: dict[str, Any] = {}
            start = threading.Barrier(3)

            def page() -> None:
                start.wait()
                answers["page"] = browser.post(
                    f"/approvals/a/{pending['id']}/deny",
                    data={"csrf": csrf},
                    headers={"Origin": base, "Accept": "application/json"},
                )

            def telegram() -> None:
                start.wait()
                answers["telegram"] = fake.answer_to(fake.press(message, "Approve"))

            def cli() -> None:
                start.wait()
                answers["cli"] = run_cli(config, "approvals", "approve", pending["id"])

            threads = [threading.Thread(target=f) for f in (page, telegram, cli)]
            for thread in threads:
                thread.start()
            await anyio.to_thread.run_sync(lambda: [thread.join(60) for thread in threads])

    wins = {
        "page": answers["page"].status_code == 200,
        "telegram": answers["telegram"] in ("Approved", "Denied"),
        "cli": answers["cli"].returncode == 0,
    }
    assert sum(wins.values()) == 1, (wins, answers)
    assert answers["page"].status_code in (200, 409)
    assert answers["cli"].returncode == 0 or "only a pending approval can be decided" in answers["cli"].stderr
    assert wins["telegram"] or answers["telegram"].startswith("Not accepted")
    [final] = [item for item in approvals(config, "--all") if item["id"] == pending["id"]]
    if wins["page"]:
        assert final["status"] == "denied" and failure(outcome["result"])["kind"] == "declined_by_user"
    else:
        assert final["status"] == "consumed" and ok(outcome["result"]) == {"erased": "contested"}
    winner = next(name for name, won in wins.items() if won)
    text = fake.messages[message["message_id"]]["text"]
    assert ("Denied by page" if winner == "page" else f"Approved by {'cli' if winner == 'cli' else 'telegram'}") in text


async def test_webhook_updates_need_telegrams_secret_header(tmp_path: Path, fake: FakeBotApi) -> None:
    extra = (
        'updates = "webhook"\nwebhook_url = "https://assistant.example.org"\nwebhook_secret = "s3cret-Header_value"\n'
    )
    config = telegram_config(tmp_path, fake, wait=30, extra=extra)
    outcome: dict[str, Any] = {}
    with http_server(config, MCP_TOOLS_TELEGRAM_BOT_TOKEN=TOKEN) as base:

        async def call() -> None:
            async with http_client(base + "/mcp") as client:
                outcome["result"] = await client.call_tool("demo_erase", {"target": "hooked"})

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            message = await anyio.to_thread.run_sync(fake.sent_with_buttons)
            assert fake.webhook == {
                "url": "https://assistant.example.org/telegram/webhook",
                "secret_token": "s3cret-Header_value",
                "allowed_updates": ["callback_query"],
            }
            query = fake.press(message, "Approve")
            update = fake.updates[-1]
            async with httpx2.AsyncClient() as http:
                url = base + "/telegram/webhook"
                missing = await http.post(url, json=update)
                wrong = await http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "guess"})
                assert [item["status"] for item in approvals(config)] == ["pending"]
                right = await http.post(
                    url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret-Header_value"}
                )
            assert (missing.status_code, wrong.status_code, right.status_code) == (403, 403, 200)
            assert await anyio.to_thread.run_sync(fake.answer_to, query) == "Approved"
    assert ok(outcome["result"]) == {"erased": "hooked"}
    assert "getUpdates" not in fake.methods()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_waiting_call_on_the_2026_protocol_runs_after_a_press(
    tmp_path: Path, fake: FakeBotApi, transport: str
) -> None:
    config = telegram_config(tmp_path, fake, wait=20)
    result: dict[str, Any] = {}
    env = {"MCP_TOOLS_TELEGRAM_BOT_TOKEN": TOKEN}

    async def call(client: Client) -> None:
        result["r"] = await client.call_tool("demo_erase", {"target": "modern"})

    async def run(client: Client) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(call, client)
            await pressed(fake, "Approve", set())

    if transport == "stdio":
        async with Client(stdio_params(config, **env), mode="2026-07-28") as client:
            await run(client)
    else:
        with http_server(config, **env) as base:
            async with http_client(base + "/mcp", mode="2026-07-28") as client:
                await run(client)
    assert ok(result["r"]) == {"erased": "modern"}


async def test_under_serve_http_the_approval_required_hint_links_to_the_served_page(tmp_path: Path) -> None:
    """The page runs inside `serve --http` without a configured address: nobody waits on it, but the hint names it."""
    config = demo_config(tmp_path, TOKENS)
    with http_server(config) as base:
        async with http_client(base + "/mcp") as client:
            pending = failure(await client.call_tool("demo_erase", {"target": "t"}))
    assert pending["kind"] == "approval_required"
    link = f"{base}/approvals/a/{pending['approval_id']}"
    assert pending["hint"].startswith(f"Ask the person to approve it on the approvals page ({link}) or run `")
    assert f"approve {pending['approval_id']}`" in pending["hint"]
