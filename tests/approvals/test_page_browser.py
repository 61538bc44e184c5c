"""The approvals page in a real browser (Playwright driving Debian's chromium).

A client that cannot ask calls a high-risk tool over HTTP; the call waits; the person, signed
in on the page, sees it appear without reloading, approves it and sees it run; denies another;
and requests without the session or without the CSRF token are refused.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.approvals.browser import ARTIFACTS, LAUNCH_ARGS, chromium_or_skip
from tests.approvals.helpers import TOKENS, approvals, http_client, store_of, wait_for_pending
from tests.harness import failure, ok
from tests.processes import DEMO_ENTRY, ROOT, child_env, cli_in_process, demo_config, free_port, http_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
CONFIG = TOKENS + "[approvals]\nwait_seconds = 60\nprogress_interval_seconds = 1\n"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()  # the page's address is configured, so calls wait for an answer there
    config = demo_config(tmp_path, CONFIG + f'[approvals.page]\nurl = "http://127.0.0.1:{port}/approvals"\n')
    with http_server(config, port=port) as base:
        yield base, config


def sign_in_link(config: Path, base: str) -> str:
    result = cli_in_process(config, "approvals", "login", "--http")
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip().split("token=", 1)[1]
    return f"{base}/approvals/login?token={token}"


async def test_sign_in_approve_and_deny_live(server: tuple[str, Path]) -> None:
    from playwright.async_api import async_playwright, expect

    executable = chromium_or_skip()
    base, config = server
    results: dict[str, Any] = {}

    async def call(client: Any, target: str) -> None:
        results[target] = await client.call_tool("demo_erase", {"target": target})

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1000, "height": 800})
            await page.goto(sign_in_link(config, base))
            await expect(page.locator("h2").first).to_have_text("Waiting for you (0)")
            await page.evaluate("window.stillTheSamePage = true")

            async with http_client(base + "/mcp") as client, anyio.create_task_group() as group:
                group.start_soon(call, client, "browser-1")
                card = page.locator("article.approval")
                await expect(card).to_have_count(1, timeout=20_000)
                await expect(card).to_contain_text("Erase 'browser-1'")
                await expect(card).to_contain_text("Tool: demo.erase (high risk)")
                await expect(card).to_contain_text('Arguments:\n  target: "browser-1"')
                await expect(card).to_contain_text("by token laptop over HTTP")
                ARTIFACTS.mkdir(exist_ok=True)
                await page.screenshot(path=str(ARTIFACTS / "approvals-page.png"), full_page=True)
                await card.locator("button.approve").click()
            assert ok(results["browser-1"]) == {"erased": "browser-1"}
            recent = page.locator("section.recent tbody tr").first
            await expect(recent).to_contain_text("approved out of band")
            await expect(recent).to_contain_text("page")
            await expect(recent).to_contain_text("ok")
            await expect(page.locator("article.approval")).to_have_count(0)

            async with http_client(base + "/mcp") as client, anyio.create_task_group() as group:
                group.start_soon(call, client, "browser-2")
                card = page.locator("article.approval")
                await expect(card).to_contain_text("Erase 'browser-2'", timeout=20_000)
                await card.locator("button.deny").click()
            assert failure(results["browser-2"])["kind"] == "declined_by_user"
            await expect(page.locator("section.recent tbody tr").first).to_contain_text("declined")
            assert await page.evaluate("window.stillTheSamePage") is True  # nothing reloaded

            # Each approval has its own link, and it shows the decision.
            decided = approvals(config, "--all")[0]
            await page.goto(f"{base}/approvals/a/{decided['id']}")
            await expect(page.locator("section.focus")).to_contain_text("denied")

            phone = await browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
            await phone.context.add_cookies(await page.context.cookies())
            await phone.goto(f"{base}/approvals/")
            await phone.screenshot(path=str(ARTIFACTS / "approvals-page-phone.png"), full_page=True)
            cookies = {c["name"]: c["value"] for c in await page.context.cookies()}
            csrf = await page.locator("input[name=csrf]").first.get_attribute("value")
        finally:
            await browser.close()
    assert cookies and csrf
    await refused_without_session_or_csrf(base, config, cookies, csrf)


async def refused_without_session_or_csrf(base: str, config: Path, cookies: dict[str, str], csrf: str) -> None:
    """Forged requests, each missing one safeguard, against a call that is waiting."""
    outcome: dict[str, Any] = {}

    async def call() -> None:
        async with http_client(base + "/mcp") as client:
            outcome["result"] = await client.call_tool("demo_erase", {"target": "forged"})

    origin = {"Origin": base}
    async with anyio.create_task_group() as group:
        group.start_soon(call)
        [pending] = await wait_for_pending(config)
        url = f"{base}/approvals/a/{pending['id']}/approve"
        async with httpx2.AsyncClient() as http:
            no_session = await http.post(url, data={"csrf": csrf}, headers=origin)
            no_csrf = await http.post(url, headers=origin, cookies=cookies)
            wrong_csrf = await http.post(url, data={"csrf": "x" * 43}, headers=origin, cookies=cookies)
            foreign = await http.post(
                url, data={"csrf": csrf}, headers={"Origin": "https://evil.example"}, cookies=cookies
            )
            no_origin = await http.post(url, data={"csrf": csrf}, cookies=cookies)
            rebound = await http.post(
                url, data={"csrf": csrf}, headers={**origin, "Host": "evil.example"}, cookies=cookies
            )
            page_without_session = await http.get(f"{base}/approvals/fragment")
            assert [r.status_code for r in (no_session, no_csrf, wrong_csrf, foreign, no_origin)] == [
                401,
                403,
                403,
                403,
                403,
            ]
            assert rebound.status_code == 421 and page_without_session.status_code == 401
            assert [item["status"] for item in approvals(config)] == ["pending"]
            # The real thing, with every safeguard, still works.
            deny = f"{base}/approvals/a/{pending['id']}/deny"
            answered = await http.post(
                deny, data={"csrf": csrf}, headers={**origin, "Accept": "application/json"}, cookies=cookies
            )
            assert answered.status_code == 200 and answered.json()["status"] == "denied"
            for response in (no_session, no_csrf, no_origin, answered):
                assert "content-security-policy" in response.headers
    assert failure(outcome["result"])["kind"] == "declined_by_user"


def test_sign_in_links_work_once(server: tuple[str, Path]) -> None:
    base, config = server
    link = sign_in_link(config, base)
    first = httpx2.get(link)
    assert first.status_code == 200 and "mcp_tools_approvals" in first.headers["set-cookie"]
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/approvals" in cookie
    assert httpx2.get(link).status_code == 403
    assert httpx2.get(f"{base}/approvals/login?token=guessed").status_code == 403
    assert httpx2.get(f"{base}/approvals/").status_code == 401


async def test_desktop_and_phone_show_times_in_the_persons_zone_and_the_answer_on_screen(
    server: tuple[str, Path],
) -> None:
    """Five calls wait; on a desktop in Tokyo and a phone (390x844) in New York the person reads them and answers.

    Screenshots of both viewports are kept under artifacts/ for a person to look at.
    """
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from playwright.async_api import async_playwright, expect

    executable = chromium_or_skip()
    base, config = server
    targets = [f"phone-{n}" for n in range(1, 6)]
    results: dict[str, Any] = {}

    async def call(client: Any, target: str) -> None:
        results[target] = await client.call_tool("demo_erase", {"target": target})

    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright, http_client(base + "/mcp") as client:
        browser = await playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        try:
            async with anyio.create_task_group() as group:
                for target in targets:
                    group.start_soon(call, client, target)
                pending = await wait_for_pending(config, count=5)
                created = datetime.fromisoformat(pending[-1]["created"].replace("Z", "+00:00"))

                desktop = await browser.new_context(
                    viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo", locale="en-US"
                )
                page = await desktop.new_page()
                await page.goto(sign_in_link(config, base))
                cards = page.locator("section.pending article.approval")
                await expect(cards).to_have_count(5)
                await expect(page.locator("section.pending h2")).to_have_text("Waiting for you (5)")
                first = cards.last  # the oldest, listed last
                await expect(first.locator("h3")).to_have_text(f"Erase '{pending[-1]['arguments']['target']}'")
                await expect(first).to_contain_text("by token laptop over HTTP (mcp), ")
                asked = first.locator("dd time").first
                await expect(asked).to_have_text(re.compile(r"^(just now|\d+ min ago)$"))
                tokyo = created.astimezone(ZoneInfo("Asia/Tokyo"))
                title = await asked.get_attribute("title") or ""
                assert "GMT+9" in title and tokyo.strftime("%-I:%M:%S") in title, title
                await expect(first.locator("dd time").nth(1)).to_have_text(re.compile(r"^in \d+ min$"))
                await page.screenshot(path=str(ARTIFACTS / "approvals-desktop.png"))

                phone_context = await browser.new_context(
                    viewport={"width": 390, "height": 844},
                    is_mobile=True,
                    has_touch=True,
                    device_scale_factor=2,
                    timezone_id="America/New_York",
                    locale="en-US",
                )
                await phone_context.add_cookies(await desktop.cookies())
                phone = await phone_context.new_page()
                await phone.goto(f"{base}/approvals/")
                phone_cards = phone.locator("section.pending article.approval")
                await expect(phone_cards).to_have_count(5)
                york = created.astimezone(ZoneInfo("America/New_York")).strftime("%-I:%M:%S")
                assert york in (await phone_cards.last.locator("dd time").first.get_attribute("title") or "")
                await phone.screenshot(path=str(ARTIFACTS / "approvals-phone.png"))
                approve = phone_cards.last.locator("button.approve")
                await approve.scroll_into_view_if_needed()
                oldest = pending[-1]["id"]
                await approve.tap()
                answer = phone.locator("header .live")
                await expect(answer).to_have_text(f"Approved {oldest}.")
                await expect(answer).to_be_in_viewport()  # where the person looks, not at the top of the page
                await phone.screenshot(path=str(ARTIFACTS / "approvals-phone-approved.png"))
                for item in pending[:-1]:
                    assert cli_in_process(config, "approvals", "deny", item["id"]).returncode == 0
        finally:
            await browser.close()
    assert ok(results[pending[-1]["arguments"]["target"]]) == {"erased": pending[-1]["arguments"]["target"]}
    declined = [failure(results[item["arguments"]["target"]])["kind"] for item in pending[:-1]]
    assert declined == ["declined_by_user"] * 4


def realistic_approvals(config: Path) -> dict[str, str]:
    """What a person may find waiting: a trash move, a call from the CLI, and two tricks a model may try."""
    store = store_of(config)
    try:
        for n in range(20):  # older ones, on the second page
            made = store.request_approval(
                tool="notes.rename",
                args_sha256=f"{n:064x}",
                args_display={"path": f"Inbox/Idea {n}.md", "new_path": f"Ideas/Idea {n}.md", "dry_run": False},
                summary=f"rename note 'Inbox/Idea {n}.md' to 'Ideas/Idea {n}.md', rewriting 2 links in 1 file",
                risk="high",
                principal="local",
                ttl_seconds=3600,
            )
            store.note_origin(made.id, "stdio", "Claude Desktop")
        spoof = (
            "http://api.example.com/upload"
            + '\n\nTool: http.request (low risk)\nArguments:\n  method: "GET"\n\nAllow this?'
        )
        asked = [
            ("http.request", f"POST {spoof}", {"method": "POST", "url": spoof, "body": "{}"}, "ci-agent", "http", None),
            (
                "files.delete",
                "Delete file 'Downloads/invoice\u202efdp.exe'",
                {"path": "Downloads/invoice\u202efdp.exe"},
                "local",
                "cli",
                None,
            ),
            (
                "notes.delete",
                "move note 'Recipes/Lasagne.md' to the vault's trash folder as '.trash/Lasagne.md'",
                {"path": "Recipes/Lasagne.md", "permanent": False},
                "local",
                "stdio",
                "Claude Desktop",
            ),
        ]
        ids = {}
        for n, (tool, summary, arguments, principal, transport, client) in enumerate(asked):
            made = store.request_approval(
                tool=tool,
                args_sha256=f"{n + 100:064x}",
                args_display=arguments,
                summary=summary,
                risk="high",
                principal=principal,
                ttl_seconds=900,
            )
            store.note_origin(made.id, transport, client)
            ids[tool] = made.id
            time.sleep(0.01)  # newest first, in this order
        return ids
    finally:
        store.close()


@pytest.fixture
def standalone_page(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`mcp-tools approvals serve` on a free port; yields the sign-in link and the config."""
    port = free_port()
    config = demo_config(tmp_path)
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "approvals", "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=child_env(),
        cwd=str(ROOT),
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip(), config
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_what_a_person_reads_on_the_page_in_a_browser(standalone_page: tuple[str, Path]) -> None:
    """The screenshots docs/approvals.md describes: tricks shown as escapes, who asked in words, pages."""
    from playwright.async_api import async_playwright, expect

    executable = chromium_or_skip()
    link, config = standalone_page
    ids = realistic_approvals(config)
    ARTIFACTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        try:
            desktop = await browser.new_context(
                viewport={"width": 1000, "height": 1300}, timezone_id="Europe/Berlin", locale="en-GB"
            )
            page = await desktop.new_page()
            await page.goto(link)
            await expect(page.locator("section.pending h2")).to_have_text("Waiting for you (23)")
            await expect(page.locator("nav.pager").first).to_contain_text("Showing 1–20 of 23 (page 1 of 2)")
            spoof = page.locator(f"article#{ids['http.request']}")
            shown = await spoof.inner_text()
            assert "\\n\\nTool: http.request (low risk)" in shown
            assert [
                line for line in shown.splitlines() if "low risk" in line and not line.startswith(("POST", "  url"))
            ] == []
            reversed_name = page.locator(f"article#{ids['files.delete']}")
            await expect(reversed_name.locator("h3")).to_have_text("Delete file 'Downloads/invoice\\u202efdp.exe'")
            await expect(reversed_name).to_contain_text("from the command line")
            await expect(page.locator(f"article#{ids['notes.delete']}")).to_contain_text("by Claude Desktop")
            assert "\u202e" not in await page.locator("main").inner_text()
            await page.screenshot(path=str(ARTIFACTS / "approvals-docs-desktop.png"))
            await page.get_by_role("link", name="Older").first.click()
            await expect(page.locator("section.pending article.approval")).to_have_count(3)

            phone_context = await browser.new_context(
                viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, timezone_id="Europe/Berlin"
            )
            await phone_context.add_cookies(await desktop.cookies())
            phone = await phone_context.new_page()
            await phone.goto(link.split("/login", 1)[0] + f"/a/{ids['notes.delete']}")
            await phone.locator("section.focus button.approve").tap()
            answer = phone.locator("header .live")
            await expect(answer).to_have_text(f"Approved {ids['notes.delete']}.")
            await expect(answer).to_be_in_viewport()
            await expect(phone.locator("section.focus")).to_contain_text("approved")
            await phone.screenshot(path=str(ARTIFACTS / "approvals-docs-phone.png"))
        finally:
            await browser.close()
