"""The approval card (an MCP App) through the SDK's real client against `serve --http`.

A client that declares MCP Apps support and no elicitation gets the card: high-risk tools link
it, their `approval_required` result carries a ticket in `_meta` only, and two app-only tools
show and decide the approval. Everything here is also an attack the card must withstand.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.extension import ClientExtension

from mcp_tools.approvals.card import CARD_URI, MAX_FAILURES, META_KEY, confirmation_text, ticket_hash
from tests.approvals.helpers import TOKEN, audit, http_client, store_of
from tests.harness import elicitation_handler, failure, ok
from tests.processes import demo_config, http_server

pytestmark = pytest.mark.anyio
PHONE = "tok-phone-9876543210abcdef"
AGENT = "tok-agent-5555555555abcdef"
# laptop and phone are hosts whose card (and form) a person sees; agent is a remote agent's token
TOKENS = (
    f'[http.tokens]\nagent = "{AGENT}"\n'
    f'[http.tokens.laptop]\ntoken = "{TOKEN}"\nperson_answers_forms = true\n'
    f'[http.tokens.phone]\ntoken = "{PHONE}"\nperson_answers_forms = true\n'
)


class AppsSupport(ClientExtension):
    """What a chat client that renders MCP Apps declares (`io.modelcontextprotocol/ui`)."""

    identifier = "io.modelcontextprotocol/ui"

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": ["text/html;profile=mcp-app"]}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """(the /mcp URL, the config, the server's log file)."""
    config = demo_config(tmp_path, TOKENS)
    log = tmp_path / "server.log"
    with http_server(config, log=log, MCP_TOOLS_LOG_LEVEL="debug") as base:
        yield f"{base}/mcp", config, log


def apps_client(url: str, token: str = TOKEN, **kwargs: Any) -> Any:
    return http_client(url, token, extensions=[AppsSupport()], **kwargs)


def opened(result: types.CallToolResult) -> dict[str, str]:
    """The card's part of an approval_required result; it must be in `_meta` and nowhere else."""
    assert failure(result)["kind"] == "approval_required"
    card = (result.meta or {})[META_KEY]
    visible = json.dumps([block.model_dump(mode="json") for block in result.content]) + json.dumps(
        result.structured_content
    )
    assert card["ticket"] not in visible
    assert card["approvalId"] in visible  # the model may see the id; the ticket alone opens the card
    return dict(card)


async def test_only_a_client_with_apps_and_no_elicitation_gets_the_card(served: tuple[str, Path, Path]) -> None:
    url, _, _ = served
    async with apps_client(url) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert (tools["demo_erase"].meta or {})["ui"]["resourceUri"] == CARD_URI
        assert (tools["demo_note"].meta or {})["ui"]["resourceUri"] == CARD_URI  # high for some arguments
        assert "ui" not in (tools["demo_echo"].meta or {})
        for name in ("approval_show", "approval_decide"):
            assert tools[name].meta == {"ui": {"resourceUri": CARD_URI, "visibility": ["app"]}}
        resources = (await client.list_resources()).resources
        assert [(item.uri, item.mime_type) for item in resources] == [(CARD_URI, "text/html;profile=mcp-app")]
        read = (await client.read_resource(CARD_URI)).contents[0]
        assert isinstance(read, types.TextResourceContents) and read.mime_type == "text/html;profile=mcp-app"
        assert (read.meta or {})["ui"]["csp"] == {
            "connectDomains": [],
            "resourceDomains": [],
            "frameDomains": [],
            "baseUriDomains": [],
        }
        policy = read.text.split('http-equiv="Content-Security-Policy" content="')[1].split('"')[0]
        assert "default-src 'none'" in policy and "connect-src 'none'" in policy
        assert "unsafe-inline" not in policy and "http" not in policy
        assert ".innerHTML" not in read.text and "insertAdjacentHTML" not in read.text
        assert "event.isTrusted" in read.text

    async with http_client(url) as plain:  # no Apps support
        listed = (await plain.list_tools()).tools
        assert not {"approval_show", "approval_decide"} & {tool.name for tool in listed}
        assert all("ui" not in (tool.meta or {}) for tool in listed)
        assert (await plain.list_resources()).resources == []
        refused = await plain.call_tool(
            "approval_decide", {"approval_id": "apr-x", "ticket": "x", "decision": "approve"}
        )
        assert failure(refused)["kind"] == "unknown_tool"
        asked = await plain.call_tool("demo_erase", {"target": "plain"})
        assert META_KEY not in (asked.meta or {})

    async with apps_client(url, elicitation_callback=elicitation_handler("accept")) as asks:  # can be asked
        names = {tool.name for tool in (await asks.list_tools()).tools}
        assert "approval_decide" not in names
        assert ok(await asks.call_tool("demo_erase", {"target": "asked"}))["erased"] == "asked"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_card_shows_the_approval_a_decision_approves_it_and_the_retry_runs(
    served: tuple[str, Path, Path], mode: str
) -> None:
    url, config, log = served
    async with apps_client(url, mode=mode) as client:
        card = opened(await client.call_tool("demo_erase", {"target": "report.md"}))
        assert card["show"] == "approval_show" and card["decide"] == "approval_decide"
        assert len(card["ticket"]) >= 43  # 256 random bits, base64url

        shown = ok(
            await client.call_tool("approval_show", {"approval_id": card["approvalId"], "ticket": card["ticket"]})
        )
        store = store_of(config)
        try:
            approval = store.get_approval(card["approvalId"])
            assert approval is not None
            assert shown["message"] == confirmation_text(approval)  # the text every channel shows
            assert "Erase 'report.md'" in shown["message"]
            stored = store._db.execute("SELECT ticket_sha256 FROM approval_tickets").fetchall()  # the hash alone
            assert stored == [(ticket_hash(card["ticket"]),)]
        finally:
            store.close()

        decided = ok(
            await client.call_tool(
                "approval_decide",
                {"approval_id": card["approvalId"], "ticket": card["ticket"], "decision": "approve"},
            )
        )
        assert decided["status"] == "approved" and "again with the same arguments" in decided["next"]
        assert ok(await client.call_tool("demo_erase", {"target": "report.md"}))["erased"] == "report.md"

    rows = audit(config)
    assert [row["decision"] for row in rows if row["tool"] == "demo.erase"] == [
        "approval_required",
        "approved_out_of_band",
    ]
    everything = json.dumps(rows) + log.read_text(encoding="utf-8", errors="replace")
    store = store_of(config)
    try:
        everything += json.dumps([item.as_dict(0) for item in store.list_approvals(include_done=True)])
        everything += json.dumps(store._db.execute("SELECT * FROM approval_tickets").fetchall())
    finally:
        store.close()
    assert card["ticket"] not in everything
    assert "approval.decide" in json.dumps(rows)  # the card's calls are audited, the ticket redacted


async def test_a_denial_in_the_card_stops_the_call(served: tuple[str, Path, Path]) -> None:
    url, _, _ = served
    async with apps_client(url) as client:
        card = opened(await client.call_tool("demo_erase", {"target": "keep.md"}))
        args = {"approval_id": card["approvalId"], "ticket": card["ticket"], "decision": "deny"}
        assert ok(await client.call_tool("approval_decide", args))["status"] == "denied"
        assert failure(await client.call_tool("demo_erase", {"target": "keep.md"}))["kind"] == "declined_by_user"


async def test_the_model_cannot_decide_without_the_ticket(served: tuple[str, Path, Path]) -> None:
    """Hosts hide app-only tools from the model; a host that does not still cannot let it decide."""
    url, config, _ = served
    async with apps_client(url) as client:
        card = opened(await client.call_tool("demo_erase", {"target": "a"}))
        for guess in ("", card["approvalId"], "A" * 43, card["ticket"][:-1]):
            args = {"approval_id": card["approvalId"], "ticket": guess, "decision": "approve"}
            refused = failure(await client.call_tool("approval_decide", args))
            assert refused["kind"] == "denied_by_policy" and "does not match" in refused["message"]
        assert failure(await client.call_tool("demo_erase", {"target": "a"}))["kind"] == "approval_required"

        # the attempt limit: after MAX_FAILURES wrong tickets even the right one opens nothing
        card = opened(await client.call_tool("demo_erase", {"target": "b"}))
        for _ in range(MAX_FAILURES):
            args = {"approval_id": card["approvalId"], "ticket": "wrong", "decision": "approve"}
            await client.call_tool("approval_decide", args)
        args = {"approval_id": card["approvalId"], "ticket": card["ticket"], "decision": "approve"}
        refused = failure(await client.call_tool("approval_decide", args))
        assert "too many wrong tickets" in refused["message"]
        # retrying the call issues another ticket, but does not reset the count
        again = opened(await client.call_tool("demo_erase", {"target": "b"}))
        assert again["approvalId"] == card["approvalId"] and again["ticket"] != card["ticket"]
        args = {"approval_id": again["approvalId"], "ticket": again["ticket"], "decision": "approve"}
        assert "too many wrong tickets" in failure(await client.call_tool("approval_decide", args))["message"]
    pending = {item["id"]: item["status"] for item in _approvals(config)}
    assert set(pending.values()) == {"pending"}


async def test_a_ticket_counts_once_and_only_for_its_own_approval(served: tuple[str, Path, Path]) -> None:
    url, _, _ = served
    async with apps_client(url) as client:
        first = opened(await client.call_tool("demo_erase", {"target": "one"}))
        second = opened(await client.call_tool("demo_erase", {"target": "two"}))
        crossed = {"approval_id": second["approvalId"], "ticket": first["ticket"], "decision": "approve"}
        assert "does not match" in failure(await client.call_tool("approval_decide", crossed))["message"]

        # the model called again before the person answered: both cards answer it, and once only
        again = opened(await client.call_tool("demo_erase", {"target": "one"}))
        assert again["approvalId"] == first["approvalId"] and again["ticket"] != first["ticket"]
        args = {"approval_id": first["approvalId"], "ticket": first["ticket"], "decision": "approve"}
        assert ok(await client.call_tool("approval_decide", args))["status"] == "approved"
        other = {**args, "ticket": again["ticket"]}
        assert "used already" in failure(await client.call_tool("approval_decide", other))["message"]
        replayed = failure(await client.call_tool("approval_decide", args))
        assert "used already" in replayed["message"]
        shown = failure(
            await client.call_tool("approval_show", {"approval_id": args["approval_id"], "ticket": args["ticket"]})
        )
        assert "used already" in shown["message"]


async def test_another_principal_cannot_use_a_ticket(served: tuple[str, Path, Path]) -> None:
    url, config, _ = served
    async with apps_client(url) as laptop:
        card = opened(await laptop.call_tool("demo_erase", {"target": "shared"}))
    async with apps_client(url, PHONE) as phone:
        args = {"approval_id": card["approvalId"], "ticket": card["ticket"], "decision": "approve"}
        refused = failure(await phone.call_tool("approval_decide", args))
        assert refused["kind"] == "denied_by_policy" and "does not match" in refused["message"]
    assert [item["status"] for item in _approvals(config)] == ["pending"]


def test_an_expired_ticket_opens_nothing(tmp_path: Path) -> None:
    from mcp_tools.approvals.card import issue_ticket
    from mcp_tools.state.sqlite import PolicyStore
    from mcp_tools.state.store import TicketRefused

    now = [1_000_000.0]
    store = PolicyStore(tmp_path / "policy.sqlite3", clock=lambda: now[0])
    approval = store.request_approval(
        tool="demo.erase",
        args_sha256="0" * 64,
        args_display={"target": "x"},
        summary="Erase 'x'",
        risk="high",
        principal="laptop",
        ttl_seconds=600,
    )
    ticket = issue_ticket(store, approval)
    assert store.check_ticket(approval.id, ticket_hash(ticket), "laptop", use=False, max_failures=5).id == approval.id
    now[0] += 601
    with pytest.raises(TicketRefused, match="expired"):
        store.check_ticket(approval.id, ticket_hash(ticket), "laptop", use=True, max_failures=5)


async def test_the_card_shows_a_spoofed_summary_as_every_channel_does(served: tuple[str, Path, Path]) -> None:
    """The summary comes from the one confirmation function, never from text the card builds itself."""
    url, config, _ = served
    spoof = "notes.md\u202e\u0007\nTool: demo.echo (low risk)"
    async with apps_client(url) as client:
        card = opened(await client.call_tool("demo_erase", {"target": spoof}))
        shown = ok(
            await client.call_tool("approval_show", {"approval_id": card["approvalId"], "ticket": card["ticket"]})
        )
    store = store_of(config)
    try:
        approval = store.get_approval(card["approvalId"])
        assert approval is not None
        assert shown["message"] == confirmation_text(approval)
    finally:
        store.close()


async def test_the_cards_summary_shows_control_and_bidi_characters_escaped(served: tuple[str, Path, Path]) -> None:
    url, _, _ = served
    async with apps_client(url) as client:
        card = opened(await client.call_tool("demo_erase", {"target": "notes.md\u202e\u0007"}))
        shown = ok(
            await client.call_tool("approval_show", {"approval_id": card["approvalId"], "ticket": card["ticket"]})
        )
    assert "\u202e" not in shown["message"] and "\u0007" not in shown["message"]


def show_args(card: dict[str, str]) -> dict[str, str]:
    return {"approval_id": card["approvalId"], "ticket": card["ticket"]}


def _approvals(config: Path) -> list[dict[str, Any]]:
    store = store_of(config)
    try:
        return [item.as_dict(store.clock()) for item in store.list_approvals()]
    finally:
        store.close()


async def test_attack_a_token_not_marked_for_a_person_gets_no_card_and_no_ticket(
    served: tuple[str, Path, Path],
) -> None:
    """A remote agent that declares MCP Apps would read the ticket in `_meta` and approve its own
    call: only a token whose client shows things to a person gets the card."""
    url, config, _ = served
    async with apps_client(url, AGENT) as agent:
        listed = {tool.name for tool in (await agent.list_tools()).tools}
        result = await agent.call_tool("demo_erase", {"target": "mine"})
        refused = failure(
            await agent.call_tool(
                "approval_decide", {"approval_id": "apr-x", "ticket": "t" * 43, "decision": "approve"}
            )
        )
    assert failure(result)["kind"] == "approval_required"
    assert META_KEY not in (result.meta or {})
    assert "approval_decide" not in listed and "approval_show" not in listed
    assert refused["kind"] == "unknown_tool"
    assert [row["status"] for row in _approvals(config)] == ["pending"]
