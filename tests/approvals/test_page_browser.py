"""The approvals page in a real browser (Playwright driving Debian's chromium).

A client that cannot ask calls a high-risk tool over HTTP; the call waits; the person, signed
in on the page, sees it appear without reloading, approves it and sees it run; denies another;
and requests without the session or without the CSRF token are refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.approvals.browser import ARTIFACTS, LAUNCH_ARGS, chromium_or_skip
from tests.approvals.helpers import TOKENS, approvals, http_client, wait_for_pending
from tests.harness import failure, ok
from tests.processes import demo_config, free_port, http_server, run_cli

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
CONFIG = TOKENS + "[approvals]\nwait_seconds = 60\nprogress_interval_seconds = 1\n"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()  # the page's address is configured, so calls wait for an answer there
    config = demo_config(tmp_path, CONFIG + f'[approvals.page]\nurl = "http://127.0.0.1:{port}/approvals"\n')
    with http_server(config, port=port) as base:
        yield base, config


def sign_in_link(config: Path, base: str) -> str:
    result = run_cli(config, "approvals", "login", "--http")
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
                    assert run_cli(config, "approvals", "deny", item["id"]).returncode == 0
        finally:
            await browser.close()
    assert ok(results[pending[-1]["arguments"]["target"]]) == {"erased": pending[-1]["arguments"]["target"]}
    declined = [failure(results[item["arguments"]["target"]])["kind"] for item in pending[:-1]]
    assert declined == ["declined_by_user"] * 4
