"""URL-mode elicitation: a high-risk call from a client that declared `elicitation: {url: {}}` is
offered as a link to the approvals page, through the real server over stdio and HTTP.

The SDK client's URL callback follows the link like the person's browser (httpx2): over stdio
the link is single-use and opens that one approval; over HTTP with a token whose forms are not
the person's yes, it is the approval's page, which wants a signed-in browser.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession

from tests.approvals.helpers import TOKENS, approvals, audit, http_client
from tests.harness import failure, ok
from tests.processes import (
    DEMO_ENTRY,
    ROOT,
    child_env,
    cli_in_process,
    demo_config,
    free_port,
    http_server,
    stdio_params,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@contextmanager
def url_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The SDK client declares form and URL mode with a callback; this one declares URL mode only."""
    original = ClientSession._build_capabilities

    def build(self: ClientSession, version: str) -> types.ClientCapabilities:
        capabilities = original(self, version)
        only_url = types.ElicitationCapability(url=types.UrlElicitationCapability())
        return capabilities.model_copy(update={"elicitation": only_url})

    monkeypatch.setattr(ClientSession, "_build_capabilities", build)
    yield


class Person:
    """The client's URL callback: remembers each request, and answers it in a browser as told."""

    def __init__(self, answer: str = "approve", consent: str = "accept", sign_in: Any = None) -> None:
        self.answer = answer
        self.consent = consent
        self.sign_in = sign_in
        self.asked: list[types.ElicitRequestURLParams] = []
        self.completed: list[str] = []
        self.pages: list[httpx2.Response] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), "a URL-mode request, never a form"
        self.asked.append(params)
        if self.consent == "accept":
            await anyio.to_thread.run_sync(self.follow, params.url)
        return types.ElicitResult(action=self.consent)  # type: ignore[arg-type]

    def follow(self, url: str) -> None:
        origin = re.match(r"https?://[^/]+", url).group(0)  # type: ignore[union-attr]
        with httpx2.Client(timeout=30) as browser:
            if self.sign_in is not None:
                assert browser.get(url).status_code == 401  # the link alone opens nothing
                assert browser.get(self.sign_in()).status_code == 200
            page = browser.get(url)
            self.pages.append(page)
            assert page.status_code == 200, page.text
            field, token = re.search(r'name="(\w+)" value="([^"]+)"', page.text).groups()  # type: ignore[union-attr]
            action = re.search(rf'action="([^"]+/{self.answer})"', page.text).group(1)  # type: ignore[union-attr]
            answered = browser.post(origin + action, data={field: token}, headers={"Origin": origin})
            assert answered.status_code in (200, 303), answered.text
            self.pages.append(browser.get(url))  # opened again after the answer

    async def notified(self, message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)


def page_config(tmp_path: Path, port: int, extra: str = "") -> Path:
    return demo_config(
        tmp_path,
        TOKENS
        + f'[approvals]\nwait_seconds = 20\n[approvals.page]\nurl = "http://127.0.0.1:{port}/approvals"\n'
        + extra,
    )


@contextmanager
def page_process(config: Path, port: int) -> Iterator[None]:
    process = subprocess.Popen(
        [sys.executable, DEMO_ENTRY, "--config", str(config), "approvals", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_env(),
        cwd=str(ROOT),
    )
    try:
        deadline = time.monotonic() + 120  # a busy machine starts a Python process slowly
        while True:
            try:
                httpx2.get(f"http://127.0.0.1:{port}/approvals/", timeout=1)
                break
            except httpx2.HTTPError:
                assert process.poll() is None, process.stderr.read() if process.stderr else "the page exited"
                assert time.monotonic() < deadline, "the page did not come up"
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.communicate(timeout=10)


@asynccontextmanager
async def stdio_client(config: Path, person: Person, port: int) -> AsyncIterator[Client]:
    with page_process(config, port):
        async with Client(
            stdio_params(config), mode="legacy", elicitation_callback=person.elicit, message_handler=person.notified
        ) as client:
            yield client


async def test_stdio_url_only_client_approves_through_a_single_use_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    config = page_config(tmp_path, port)
    approving, denying = Person("approve"), Person("deny")
    with url_only(monkeypatch):
        async with stdio_client(config, approving, port) as client:
            ran = ok(await client.call_tool("demo_erase", {"target": "a"}))
        async with stdio_client(config, denying, port) as client:
            refused = failure(await client.call_tool("demo_erase", {"target": "b"}))
    assert ran == {"erased": "a"}
    assert refused["kind"] == "declined_by_user"
    [asked] = approving.asked
    assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/approvals/e/apr-[a-z0-9-]+/[\w-]{{40,}}", asked.url)
    assert "Erase 'a'" in asked.message
    assert approving.completed == [asked.elicitation_id]  # notifications/elicitation/complete, that one
    assert denying.completed == [denying.asked[0].elicitation_id]
    assert approving.pages[0].status_code == 200 and approving.pages[1].status_code == 403  # single use
    rows = [(row["tool"], row["decision"], row["outcome"]) for row in audit(config)]
    assert rows == [("demo.erase", "confirmed", "ok"), ("demo.erase", "declined", "declined_by_user")]
    statuses = sorted(item["status"] for item in approvals(config, "--all"))
    assert statuses == ["consumed", "denied"]  # the approved one used by the call that asked


async def test_a_refused_link_withdraws_the_approval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    config = page_config(tmp_path, port)
    person = Person(consent="decline")
    with url_only(monkeypatch):
        async with stdio_client(config, person, port) as client:
            refused = failure(await client.call_tool("demo_erase", {"target": "a"}))
    assert refused["kind"] == "declined_by_user" and person.completed == []
    assert [item["status"] for item in approvals(config, "--all")] == ["withdrawn"]


async def test_http_client_gets_the_approvals_page_which_wants_a_signed_in_browser(tmp_path: Path) -> None:
    port = free_port()
    config = page_config(tmp_path, port)
    person = Person(sign_in=lambda: cli_in_process(config, "approvals", "login").stdout.strip())
    with http_server(config, port=port) as base:
        async with http_client(base + "/mcp", elicitation_callback=person.elicit, message_handler=person.notified) as c:
            ran = ok(await c.call_tool("demo_erase", {"target": "remote"}))
    [asked] = person.asked
    assert asked.url == f"{base}/approvals/a/{approvals(config, '--all')[0]['id']}"
    assert ran == {"erased": "remote"} and person.completed == [asked.elicitation_id]


@asynccontextmanager
async def modern_stdio_client(config: Path, person: Person, port: int) -> AsyncIterator[Client]:
    with page_process(config, port):
        async with Client(stdio_params(config), mode="2026-07-28", elicitation_callback=person.elicit) as client:
            yield client


async def test_on_2026_07_28_the_link_is_an_input_request_over_stdio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2026-07-28 has no elicitation/create request: the link comes in the call's InputRequiredResult,
    the client retries with the person's consent, and the retried call waits for the page's answer."""
    port = free_port()
    config = page_config(tmp_path, port)
    approving, denying, refusing = Person("approve"), Person("deny"), Person(consent="decline")
    with url_only(monkeypatch):
        async with modern_stdio_client(config, approving, port) as client:
            ran = ok(await client.call_tool("demo_erase", {"target": "a"}))
        async with modern_stdio_client(config, denying, port) as client:
            refused = failure(await client.call_tool("demo_erase", {"target": "b"}))
        async with modern_stdio_client(config, refusing, port) as client:
            withdrawn = failure(await client.call_tool("demo_erase", {"target": "c"}))
    assert ran == {"erased": "a"}
    assert refused["kind"] == "declined_by_user" and withdrawn["kind"] == "declined_by_user"
    [asked] = approving.asked
    assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/approvals/e/apr-[a-z0-9-]+/[\w-]{{40,}}", asked.url)
    assert "Erase 'a'" in asked.message
    assert approving.pages[0].status_code == 200 and approving.pages[1].status_code == 403  # single use
    rows = [(row["tool"], row["decision"], row["outcome"]) for row in audit(config)]
    assert rows == [  # approved on the page before the client retried: the retry uses the approval
        ("demo.erase", "approved_out_of_band", "ok"),
        ("demo.erase", "declined", "declined_by_user"),
        ("demo.erase", "declined", "declined_by_user"),
    ]
    statuses = sorted(item["status"] for item in approvals(config, "--all"))
    assert statuses == ["consumed", "denied", "withdrawn"]


async def test_on_2026_07_28_an_http_client_gets_the_approvals_page_as_an_input_request(tmp_path: Path) -> None:
    port = free_port()
    config = page_config(tmp_path, port)
    person = Person(sign_in=lambda: cli_in_process(config, "approvals", "login").stdout.strip())
    with http_server(config, port=port) as base:
        async with http_client(base + "/mcp", mode="2026-07-28", elicitation_callback=person.elicit) as client:
            ran = ok(await client.call_tool("demo_erase", {"target": "remote"}))
    [asked] = person.asked
    assert asked.url == f"{base}/approvals/a/{approvals(config, '--all')[0]['id']}"
    assert ran == {"erased": "remote"}
    assert [(row["decision"], row["principal"]) for row in audit(config)] == [("approved_out_of_band", "laptop")]
