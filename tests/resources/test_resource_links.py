"""A tool result that saved a file into the files store carries a `resource_link` to it, never its
bytes; the link reads back through resources/read, and the result still matches its schema (the
autouse check in conftest.py validates every result)."""

from __future__ import annotations

import base64
from pathlib import Path

import mcp_types as types
import pytest

from tests.harness import connect, ok
from tests.servers.drive.fixtures import drive_settings
from tests.servers.fake_google import FakeDrive, FakeGmail, FakeGoogle
from tests.servers.gmail.fixtures import PNG, nested_with_attachments, sign_in

pytestmark = pytest.mark.anyio


def links(result: types.CallToolResult) -> list[types.ResourceLink]:
    return [block for block in result.content if isinstance(block, types.ResourceLink)]


async def test_a_saved_attachment_is_a_link_that_reads_back(tmp_path: Path, google: FakeGoogle, gmail: FakeGmail):
    message = gmail.add(nested_with_attachments())
    async with connect(tmp_path, sign_in(tmp_path, google), elicit=None) as client:
        listed = ok(await client.call_tool("gmail_read", {"id": message.id}))["messages"][0]["attachments"]
        index = next(item["index"] for item in listed if item["filename"] == "chart.png")
        result = await client.call_tool("gmail_attachment", {"message_id": message.id, "index": index, "save": True})
        plain = await client.call_tool("gmail_attachment", {"message_id": message.id, "index": index})
        [link] = links(result)
        read = await client.read_resource(link.uri)
    saved = ok(result)["saved_path"]
    assert link.uri == f"files:///{saved}" and link.name == saved.rsplit("/", 1)[-1]
    assert link.mime_type == "image/png"
    assert not any(isinstance(block, types.ImageContent) for block in result.content)  # no bytes beside it
    assert links(plain) == []  # a result that saved nothing links nothing
    [contents] = read.contents
    assert isinstance(contents, types.BlobResourceContents) and base64.b64decode(contents.blob) == PNG


async def test_a_drive_download_saved_to_the_store_is_linked(tmp_path: Path, google: FakeGoogle, drive: FakeDrive):
    clip = drive.add("clip.mp4", b"\x00a clip", "video/mp4")
    async with connect(tmp_path, drive_settings(tmp_path, google)) as client:
        result = await client.call_tool("drive_read", {"id": clip.id, "save_to": "videos/clip.mp4"})
    assert ok(result)["encoding"] == "saved"
    [link] = links(result)
    assert (link.uri, link.name, link.mime_type) == ("files:///videos/clip.mp4", "clip.mp4", "video/mp4")


async def test_no_link_where_the_store_cannot_be_read(tmp_path: Path, google: FakeGoogle, drive: FakeDrive):
    clip = drive.add("clip.mp4", b"\x00a clip", "video/mp4")
    settings = {**drive_settings(tmp_path, google), "policy": {"disabled": ["files.read"]}}
    async with connect(tmp_path, settings) as client:
        result = await client.call_tool("drive_read", {"id": clip.id, "save_to": "videos/clip.mp4"})
    assert ok(result)["encoding"] == "saved" and links(result) == []
