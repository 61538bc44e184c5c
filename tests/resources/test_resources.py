"""The files store and the notes vaults as MCP resources, through the SDK's real client.

Listing pages, templates, reads of text, bytes and notes, and that a read is a call of the read
tool: the policy hides it with the tool, a high risk asks, and the audit log has its row.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from mcp_tools.composition.app import build_app
from tests.harness import connect, make_config

pytestmark = pytest.mark.anyio
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def settings(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    vault = tmp_path / "vault"
    (vault / "Projects").mkdir(parents=True, exist_ok=True)
    (vault / "Home.md").write_text("# Home\n\nSee [[Projects/Plan]].\n", encoding="utf-8")
    (vault / "Projects" / "Plan.md").write_text("# Plan\n\nShip it.\n", encoding="utf-8")
    files = tmp_path / "data" / "files"
    (files / "docs").mkdir(parents=True, exist_ok=True)
    (files / "docs" / "readme.txt").write_text("hello resources\n", encoding="utf-8")
    (files / "pixel.png").write_bytes(PNG)
    (files / "blob.bin").write_bytes(bytes(range(256)))
    return {
        "server": {"servers": ["files", "notes"]},
        "notes": {"vault": str(vault), "watch": False},
        **extra,
    }


async def listed(client: Any) -> list[types.Resource]:
    resources: list[types.Resource] = []
    cursor = None
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        resources += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return resources


async def test_the_store_and_the_vault_are_listed_and_read(tmp_path: Path) -> None:
    async with connect(tmp_path, settings(tmp_path)) as client:
        resources = {resource.uri: resource for resource in await listed(client)}
        templates = (await client.list_resource_templates()).resource_templates
        text = await client.read_resource("files:///docs/readme.txt")
        image = await client.read_resource("files:///pixel.png")
        binary = await client.read_resource("files:///blob.bin")
        note = await client.read_resource("notes:///Projects/Plan.md")
    assert set(resources) == {
        "files:///blob.bin",
        "files:///docs/readme.txt",
        "files:///pixel.png",
        "notes:///Home.md",
        "notes:///Projects/Plan.md",
    }
    readme = resources["files:///docs/readme.txt"]
    assert (readme.name, readme.size, readme.mime_type) == ("readme.txt", 16, "text/plain")
    assert resources["notes:///Projects/Plan.md"].mime_type == "text/markdown"
    assert {template.uri_template for template in templates} == {"files:///{+path}", "notes:///{+path}"}
    [content] = text.contents
    assert isinstance(content, types.TextResourceContents) and content.text == "hello resources\n"
    assert content.uri == "files:///docs/readme.txt" and content.mime_type == "text/plain"
    [pixel] = image.contents
    assert isinstance(pixel, types.BlobResourceContents) and base64.b64decode(pixel.blob) == PNG
    assert pixel.mime_type == "image/png"
    [raw] = binary.contents
    assert isinstance(raw, types.BlobResourceContents) and base64.b64decode(raw.blob) == bytes(range(256))
    [plan] = note.contents
    assert isinstance(plan, types.TextResourceContents) and plan.text == "# Plan\n\nShip it.\n"


async def test_a_long_listing_comes_in_pages_that_resume_where_they_ended(tmp_path: Path) -> None:
    config = settings(tmp_path)
    folder = tmp_path / "data" / "files" / "many"
    folder.mkdir(parents=True)
    for number in range(230):
        (folder / f"f{number:03}.txt").write_text(str(number), encoding="utf-8")
    async with connect(tmp_path, config) as client:
        first = await client.list_resources(cache_mode="bypass")
        everything = await listed(client)
        with pytest.raises(MCPError) as bad:
            await client.list_resources(cursor="not-a-cursor", cache_mode="bypass")
    assert len(first.resources) == 100 and first.next_cursor is not None
    uris = [resource.uri for resource in everything]
    assert len(uris) == len(set(uris)) == 230 + 3 + 2
    assert uris.index("files:///many/f000.txt") < uris.index("files:///many/f229.txt") < uris.index("notes:///Home.md")
    assert bad.value.error.code == -32602 and "cursor" in bad.value.error.message


async def test_notes_of_every_vault_have_their_own_address(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "Meeting.md").write_text("# Meeting\n", encoding="utf-8")
    config = settings(tmp_path)
    config["notes"]["vaults"] = {"work": {"path": str(work)}}
    async with connect(tmp_path, config) as client:
        uris = {resource.uri for resource in await listed(client)}
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        meeting = await client.read_resource("notes://work/Meeting.md")
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("notes://play/Meeting.md")
    assert {"notes://work/Meeting.md", "notes:///Home.md"} <= uris
    assert "notes://{vault}/{+path}" in templates
    [content] = meeting.contents
    assert isinstance(content, types.TextResourceContents) and content.text == "# Meeting\n"
    assert unknown.value.error.code == -32002 and "play" in unknown.value.error.message


async def test_a_read_is_the_read_tool_under_the_policy(tmp_path: Path) -> None:
    app = build_app(make_config(tmp_path, settings(tmp_path)))
    async with connect(tmp_path, app=app) as client:
        await client.read_resource("files:///docs/readme.txt")
        with pytest.raises(MCPError) as missing:
            await client.read_resource("files:///docs/nothing.txt")
    rows = [(row.tool, row.args.get("path"), row.outcome) for row in app.store.tail(2)]
    assert rows == [("files.read", "docs/readme.txt", "ok"), ("files.read", "docs/nothing.txt", "not_found")]
    assert missing.value.error.code == -32002 and "not_found" in missing.value.error.message

    hidden = settings(tmp_path, policy={"disabled": ["files.read"]})
    async with connect(tmp_path, hidden) as client:
        uris = {resource.uri for resource in await listed(client)}
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        with pytest.raises(MCPError) as refused:
            await client.read_resource("files:///docs/readme.txt")
    assert uris == {"notes:///Home.md", "notes:///Projects/Plan.md"} and templates == {"notes:///{+path}"}
    assert refused.value.error.code == -32602  # as unknown as a scheme this server never serves

    asking = settings(tmp_path, policy={"rules": [{"match": "notes.read", "risk": "high"}]})
    app = build_app(make_config(tmp_path, asking))
    async with connect(tmp_path, app=app) as client:
        with pytest.raises(MCPError) as asked:
            await client.read_resource("notes:///Home.md")
        approval_id = asked.value.error.data["approval_id"]
        app.out_of_band.decisions.decide(approval_id, True, "test")
        approved = await client.read_resource("notes:///Home.md")
    assert "approval_required" in asked.value.error.message and "notes_read" in asked.value.error.message
    assert approved.contents[0].text.startswith("# Home")  # type: ignore[union-attr]
    rows = [(row.tool, row.decision) for row in app.store.tail(2)]
    assert rows == [("notes.read", "approval_required"), ("notes.read", "approved_out_of_band")]
