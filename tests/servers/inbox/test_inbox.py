"""The inbox tools over a real MCP client, with the policy layer in front."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_tools.composition.app import App, build_app
from mcp_tools.servers.inbox.service import InboxService
from tests.harness import annotation, connect, failure, make_config, ok, text_of
from tests.servers.inbox import fixtures as mail

pytestmark = pytest.mark.anyio
SETTINGS: dict[str, Any] = {"server": {"servers": ["inbox"]}, "inbox": {"addresses": [mail.INBOX_ADDRESS]}}


def inbox_app(tmp_path: Path) -> App:
    return build_app(make_config(tmp_path, SETTINGS))


@pytest.fixture(params=["legacy", "2026-07-28"])
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Client, InboxService]]:
    app = inbox_app(tmp_path)
    service: InboxService = app.services["inbox"]
    for raw in mail.corpus().values():
        await service.ingest(raw, via="test")
    async with connect(tmp_path, app=app, elicit=None, mode=request.param) as connected:
        yield connected, service


async def test_tools_are_listed_read_only_with_small_schemas(tmp_path: Path) -> None:
    async with connect(tmp_path, SETTINGS, elicit=None) as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools if tool.name.startswith("inbox_")}
    assert set(tools) == {"inbox_search", "inbox_read", "inbox_attachment"}
    for tool in tools.values():
        assert tool.annotations is not None
        assert annotation(tool, "read_only_hint") is True
        assert annotation(tool, "destructive_hint") is False
        assert tool.output_schema is not None
        assert len(tool.model_dump_json(by_alias=True)) < 3000
    assert tools["inbox_search"].input_schema["additionalProperties"] is False


async def test_inbox_is_on_without_any_inbox_config(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, {}))
    assert "inbox" in app.namespaces


async def test_search_and_page_through_everything(client: tuple[Client, InboxService]) -> None:
    connected, service = client
    seen: list[str] = []
    arguments: dict[str, Any] = {"limit": 3}
    while True:
        page = ok(await connected.call_tool("inbox_search", arguments))
        assert len(page["messages"]) <= 3
        seen += [item["id"] for item in page["messages"]]
        if not page["next_cursor"]:
            break
        arguments = {"limit": 3, "cursor": page["next_cursor"]}
    assert len(seen) == len(set(seen)) == service.store.count() == len(mail.corpus())


async def test_search_filters_and_keywords(client: tuple[Client, InboxService]) -> None:
    connected, _ = client
    found = ok(await connected.call_tool("inbox_search", {"query": "議事録"}))
    assert [item["sender"] for item in found["messages"]] == ["山田 <yamada@example.jp>"]
    found = ok(
        await connected.call_tool(
            "inbox_search", {"query": "invoice", "has_attachment": True, "since": "2026-11-05", "until": "2026-11-05"}
        )
    )
    assert {item["subject"] for item in found["messages"]} == {"Invoice and data"}
    assert all(item["summary"] for item in found["messages"])
    for sender in ("me@home", "landlord@rent"):  # the forwarder, or the sender of the mail forwarded
        by_sender = ok(await connected.call_tool("inbox_search", {"sender": sender}))
        assert [item["subject"] for item in by_sender["messages"]] == ["Fwd: Fwd: Lease renewal"]
    assert by_sender["messages"][0]["forwarded_from"] == [
        "Partner <partner@home.example>",
        "Landlord <landlord@rent.example>",
    ]
    by_name = ok(await connected.call_tool("inbox_search", {"query": "landlord", "sender": "Landlord"}))
    assert len(by_name["messages"]) == 1


async def test_search_text_block_marks_mail_as_untrusted(client: tuple[Client, InboxService]) -> None:
    connected, _ = client
    result = await connected.call_tool("inbox_search", {"query": "lease"})
    assert "untrusted email listing" in text_of(result)


async def test_read_and_attachment(client: tuple[Client, InboxService]) -> None:
    connected, service = client
    message_id = service.store.find_by_key("mid:att-1@example.net")
    hit = ok(await connected.call_tool("inbox_search", {"query": "invoice", "has_attachment": True}))
    assert message_id in [item["id"] for item in hit["messages"]]
    result = await connected.call_tool("inbox_read", {"id": message_id})
    read = ok(result)
    assert read["body"] == "Invoice attached, plus the customer list."
    assert [item["filename"] for item in read["attachments"]] == ["invoice.pdf", "kunden übersicht.csv", "evil.sh"]
    assert "untrusted email" in text_of(result)
    pdf = ok(await connected.call_tool("inbox_attachment", {"id": message_id, "index": 0}))
    assert pdf["encoding"] == "base64" and base64.b64decode(pdf["content"]) == mail.PDF_BYTES
    script = await connected.call_tool("inbox_attachment", {"id": message_id, "index": 2})
    assert ok(script)["encoding"] == "text" and "untrusted attachment" in text_of(script)


async def test_read_pages_a_long_body(tmp_path: Path) -> None:
    app = inbox_app(tmp_path)
    body = "".join(f"Paragraph {number}: lorem ipsum dolor sit amet.\n\n" for number in range(600))
    stored = await app.services["inbox"].ingest(mail.simple(body=body), via="test")
    async with connect(tmp_path, app=app, elicit=None) as connected:
        first = ok(await connected.call_tool("inbox_read", {"id": stored.id, "max_chars": 1000}))
        assert len(first["body"]) == 1000 and first["next_offset"] == 1000
        last = ok(await connected.call_tool("inbox_read", {"id": stored.id, "offset": first["body_chars"] - 10}))
        assert last["next_offset"] is None and len(last["body"]) == 10


async def test_errors_tell_the_model_what_to_fix(client: tuple[Client, InboxService]) -> None:
    connected, _ = client
    assert failure(await connected.call_tool("inbox_read", {"id": "ffffffffffffffff"}))["kind"] == "not_found"
    bad_cursor = failure(await connected.call_tool("inbox_search", {"cursor": "garbage"}))
    assert bad_cursor["kind"] == "invalid_arguments" and "cursor" in bad_cursor["message"]
    no_words = failure(await connected.call_tool("inbox_search", {"query": '"*"'}))
    assert no_words["kind"] == "invalid_arguments"
    typo = failure(await connected.call_tool("inbox_search", {"querry": "x"}))
    assert typo["kind"] == "invalid_arguments"
    too_many = failure(await connected.call_tool("inbox_search", {"limit": 500}))
    assert too_many["kind"] == "invalid_arguments"


async def test_an_argument_named_by_its_usual_meaning_suggests_the_real_one(
    client: tuple[Client, InboxService],
) -> None:
    connected, _ = client
    for given, meant in (
        ("after", "since"),
        ("before", "until"),
        ("max_results", "limit"),
        ("maxResults", "limit"),
        ("q", "query"),
        ("from", "sender"),
    ):
        error = failure(await connected.call_tool("inbox_search", {given: "2026-01-01"}))
        assert error["kind"] == "invalid_arguments"
        assert error["message"].startswith(f"inbox.search does not take {given}; did you mean {meant} ("), error
        assert "It takes query, sender, since, until" in error["message"]
