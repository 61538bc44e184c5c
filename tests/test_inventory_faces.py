"""Every face asks the inventory's chain the same question and gives the same reason for a refusal:
MCP `tools/list` and `tools/call`, a call that reaches the gate, a call written as text, the
resources of the tool's namespace and `mcp-tools tools --explain`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_tools.cli.tools import print_explained
from mcp_tools.composition.app import App, build_app
from mcp_tools.inventory.chain import CALLING, Audience, call_refusal
from mcp_tools.oauth.guard import Reach
from mcp_tools.oauth.settings import OAuthSettings
from mcp_tools.policy.gate import Caller
from mcp_tools.resources.face import Documents
from mcp_tools.transports.mcp_server import build_server
from tests.harness import failure, make_config
from tests.textcalls.conftest import run

pytestmark = pytest.mark.anyio
OAUTH = {
    "issuer": "https://auth.example.org",
    "resource": "https://mcp.example.org/mcp",
    "scopes": {"notes": ["notes"], "files": ["files"]},
}


def faces_app(tmp_path: Path, tools: list[str] | None = None, **policy: Any) -> App:
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    (vault / "Home.md").write_text("# Home\n", encoding="utf-8")
    (tmp_path / "data" / "files").mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "files" / "a.txt").write_text("a\n", encoding="utf-8")
    settings = {
        "server": {"servers": ["files", "notes"], "tools": tools or ["*"]},
        "notes": {"vault": str(vault), "watch": False},
        "policy": policy,
        "http": {"oauth": OAUTH},
    }
    return build_app(make_config(tmp_path, settings))


def explained_by_the_cli(app: App, capsys: pytest.CaptureFixture[str], scopes: str | None) -> dict[str, Any]:
    capsys.readouterr()
    assert print_explained(app, argparse.Namespace(scopes=scopes, all=True, json=True), None) == 0
    return {row["name"]: row for row in json.loads(capsys.readouterr().out)}


async def test_a_tool_outside_the_scopes_is_refused_for_the_same_reason_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = faces_app(tmp_path)
    reach = Reach(OAuthSettings(**OAUTH), frozenset({"notes"}))
    read = app.find_tool("files.read")
    refusal = app.catalog.refusal(read.spec, Audience(reaches=reach))
    assert refusal is not None and refusal.filter == "reach"
    reason = refusal.reason
    assert reason == "outside the scopes this sign-in was granted; scope files reaches it"

    # tools/list leaves it out; tools/call (as the MCP server resolves the name) says why
    assert read.spec.name not in [tool.spec.name for tool in app.catalog.listed(reaches=reach)]
    found = app.catalog.resolve(read.wire_name, {"path": "a.txt"}, "http", reaches=reach)
    assert (
        found.failure is not None
        and found.failure.message == f"{read.wire_name} is not served to this client ({reason})"
    )
    # `mcp-tools tools --explain --scopes notes`
    assert explained_by_the_cli(app, capsys, "notes")[read.spec.name]["why"] == reason
    async with app.running():
        # a call that reaches the gate anyway (a name resolved before, another tool's ctx.call_tool)
        outcome = await app.gate.call(read, read.wire_name, {"path": "a.txt"}, caller=Caller(reaches=reach))
        assert outcome.error is not None and outcome.error["kind"] == "denied_by_policy"
        assert outcome.error["message"] == f"files.read is {reason}" == refusal.denial
        # a call written as text
        report = await run(app, '{"name": "files.read", "arguments": {"path": "a.txt"}}', caller=Caller(reaches=reach))
        assert f"({reason})" in report.results[0].error_message()
        # the files store's documents are read through files.read: not offered, not readable
        documents = Documents(app)
        assert [source.namespace for source in documents.offered(reach)] == ["notes"]
        with pytest.raises(MCPError, match="there is no resource"):
            await documents.read("files:///a.txt", Caller(reaches=reach), modern=True)
        assert (await documents.read("notes:///Home.md", Caller(reaches=reach), modern=True)).contents
    rows = [(row.tool, row.outcome) for row in app.store.tail(10)]
    assert ("files.read", "ok") not in rows and ("notes.read", "ok") in rows


async def test_a_tool_the_policy_hides_is_refused_for_the_same_reason_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = faces_app(tmp_path, disabled=["files.read"])
    read = app.find_tool("files.read")
    refusal = app.catalog.refusal(read.spec)
    assert refusal is not None and refusal.filter == "policy"
    hidden = "files.read is disabled by the policy config (disabled = 'files.read')"
    assert (refusal.reason, refusal.denial) == (f"hidden: {hidden}", hidden)
    assert explained_by_the_cli(app, capsys, None)[read.spec.name]["why"] == refusal.reason
    async with app.running(), Client(build_server(app, "test"), mode="legacy") as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert read.wire_name not in listed and app.find_tool("files.list").wire_name in listed
        error = failure(await client.call_tool(read.wire_name, {"path": "a.txt"}))
        assert (error["kind"], error["message"]) == ("denied_by_policy", hidden)
        report = await run(app, '{"name": "files.read", "arguments": {"path": "a.txt"}}')
        assert report.results[0].error_message().startswith(hidden)
        assert [source.namespace for source in Documents(app).offered(None)] == ["notes"]
        templates = (await client.list_resource_templates()).resource_templates
        assert {template.uri_template for template in templates} == {"notes:///{+path}"}
    # another namespace's tool an argument acts through is refused in the same words
    assert app.gate.unreachable(read.spec.name) is not None
    assert app.gate.unreachable(read.spec.name).message == hidden  # type: ignore[union-attr]


def test_a_call_answers_only_to_the_filters_that_say_who_may_call(tmp_path: Path) -> None:
    """Left out of the selection, or of another endpoint, a tool is still callable through another
    tool (`ctx.call_tool`): the gate asks the chain's policy, reach and account filters only."""
    app = faces_app(tmp_path, ["notes"])
    app.store.close()
    write = app.find_tool("files.write").spec
    assert CALLING == ("policy", "reach", "account")
    assert call_refusal(app.rules, write) is None
    assert app.catalog.refusal(write, Audience(namespace="notes")) is not None  # the endpoint filter
    reach = Reach(OAuthSettings(**OAUTH), frozenset({"notes"}))
    stopped = call_refusal(app.rules, write, reach)
    assert stopped is not None and stopped.filter == "reach"
    listed = {step.filter: step for step in app.catalog.explain(write, Audience(reaches=reach)).steps}
    assert (listed["selection"].passed, listed["reach"].reason) == (False, stopped.reason)


@pytest.mark.parametrize(("tools", "offered"), [(["notes"], True), (["notes", "-files.read"], False)])
def test_documents_are_offered_unless_the_selection_excludes_their_read_tool(
    tmp_path: Path, tools: list[str], offered: bool
) -> None:
    app = faces_app(tmp_path, tools)
    app.store.close()
    read = app.find_tool("files.read").spec
    assert app.catalog.refusal(read) is not None  # tools/list leaves it out either way
    assert (app.catalog.refusal(read, Audience(documents=True)) is None) is offered
    assert ("files" in [source.namespace for source in Documents(app).offered(None)]) is offered
