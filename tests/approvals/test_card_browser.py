"""The approval card in a real browser: a test host built on the MCP Apps host bridge.

The host is what a chat client does with an MCP App: the `@modelcontextprotocol/ext-apps`
`AppBridge` (pinned by `tests/ext_apps/package-lock.json`, bundled for the browser with esbuild),
a sandboxed iframe holding the card read from the real server, and the SDK's real MCP client
(declaring Apps support and no elicitation) behind the bridge's `tools/call`. Playwright drives
Debian's chromium. The card shows the summary, a script's click does nothing, the person's click
approves, and the model's retry runs.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_tools.approvals.card import CARD_URI, META_KEY
from tests.approvals.browser import ARTIFACTS, LAUNCH_ARGS, chromium_or_skip
from tests.approvals.helpers import TOKEN, http_client
from tests.approvals.test_card import AppsSupport
from tests.harness import failure, ok
from tests.npm_packages import npm_ci
from tests.processes import ROOT, demo_config, http_server

# the host's token is one whose client shows things to a person, so it gets the card
PERSONS_HOST = f'[http.tokens.laptop]\ntoken = "{TOKEN}"\nperson_answers_forms = true\n'

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
PINNED = ROOT / "tests" / "ext_apps"
ESBUILD = Path("node_modules", ".bin", "esbuild")
BRIDGE_MODULE = "@modelcontextprotocol/ext-apps/app-bridge"
HOST_ORIGIN = "http://host.test"
HOST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>test host</title></head>
<body>
<iframe id="card" sandbox="allow-scripts" style="width: 640px; height: 520px; border: 1px solid #ccc"></iframe>
<script type="module">
import { AppBridge, PostMessageTransport } from "/bridge.js";
window.startCard = async (html, toolInput, toolResult) => {
  const frame = document.getElementById("card");
  const bridge = new AppBridge(null, { name: "mcp-tools test host", version: "1" }, { serverTools: {} });
  bridge.oncalltool = async (params) => window.hostCallTool(params);
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  // the frame's window outlives the navigation to srcdoc: connect first, so no message is missed
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: toolInput });
  await bridge.sendToolResult(toolResult);
};
window.hostReady = true;
</script>
</body></html>
"""


def bundled_bridge() -> Path:
    """The host bridge as one browser module, built once next to the pinned install."""
    prefix = npm_ci(PINNED, ESBUILD)
    bundle = prefix / "bridge.js"
    if not bundle.is_file():
        entry = prefix / "entry.js"
        entry.write_text(
            'export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";\n'
        )
        staging = prefix / f"bridge.{os.getpid()}.js"
        done = subprocess.run(
            [
                str(prefix / ESBUILD),
                str(entry),
                "--bundle",
                "--format=esm",
                "--platform=browser",
                f"--outfile={staging}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=str(prefix),
        )
        assert done.returncode == 0, done.stderr
        staging.replace(bundle)
    return bundle


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    with http_server(demo_config(tmp_path, PERSONS_HOST)) as base:
        yield f"{base}/mcp"


async def test_the_person_approves_in_the_card_and_the_retry_runs(served: str) -> None:
    from playwright.async_api import async_playwright, expect

    executable = chromium_or_skip()
    bridge = bundled_bridge()
    requests: list[str] = []

    async with http_client(served, extensions=[AppsSupport()]) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert (listed["demo_erase"].meta or {})["ui"]["resourceUri"] == CARD_URI
        html = (await client.read_resource(CARD_URI)).contents[0]
        assert isinstance(html, types.TextResourceContents)
        arguments = {"target": "Quarterly <b>report</b><img src=x onerror=alert(1)>.md"}
        asked = await client.call_tool("demo_erase", arguments)
        assert failure(asked)["kind"] == "approval_required"
        result = asked.model_dump(mode="json", by_alias=True, exclude_none=True)
        ticket = result["_meta"][META_KEY]["ticket"]

        async def host_call_tool(params: dict[str, Any]) -> dict[str, Any]:
            """What the host does with the card's tools/call: send it to the server over its connection."""
            answer = await client.call_tool(params["name"], params.get("arguments") or {})
            return answer.model_dump(mode="json", by_alias=True, exclude_none=True)

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 700, "height": 600})
                page.on("request", lambda request: requests.append(request.url))
                await page.route(
                    f"{HOST_ORIGIN}/",
                    lambda route: route.fulfill(body=HOST_PAGE, content_type="text/html; charset=utf-8"),
                )
                await page.route(
                    f"{HOST_ORIGIN}/bridge.js",
                    lambda route: route.fulfill(path=str(bridge), content_type="text/javascript"),
                )
                await page.expose_function("hostCallTool", host_call_tool)
                await page.goto(f"{HOST_ORIGIN}/")
                await page.wait_for_function("window.hostReady === true")
                await page.evaluate(
                    "([html, input, result]) => window.startCard(html, input, result)", [html.text, arguments, result]
                )
                card = page.frame_locator("#card")
                # markup in an argument is shown as text, never parsed
                await expect(card.locator("#summary")).to_contain_text("Erase 'Quarterly <b>report</b><img src=x")
                assert await card.locator("#summary b, #summary img").count() == 0
                await expect(card.locator("#summary")).to_contain_text("Tool: demo.erase (high risk)")
                await expect(card.locator("#status")).to_contain_text("Nothing runs until you choose")

                # a click made by script is not the person's: nothing is decided
                await card.locator("#approve").evaluate("button => button.click()")
                await expect(card.locator("#status")).to_contain_text("Nothing runs until you choose")
                assert failure(await client.call_tool("demo_erase", arguments))["kind"] == "approval_required"

                await card.locator("#approve").click()
                await expect(card.locator("#status")).to_contain_text("Approved.")
                await expect(card.locator("#status")).to_contain_text("again with the same arguments")
                await expect(card.locator("#title")).to_have_text("Approved")
                await expect(card.locator("#approve")).to_be_hidden()
                ARTIFACTS.mkdir(exist_ok=True)
                await page.screenshot(path=str(ARTIFACTS / "approval-card.png"))
            finally:
                await browser.close()

        ran = ok(await client.call_tool("demo_erase", arguments))
        assert ran["erased"] == arguments["target"]

    assert all(url.startswith(HOST_ORIGIN) for url in requests), requests  # the card loads and connects nowhere
    assert ticket not in json.dumps(requests)
