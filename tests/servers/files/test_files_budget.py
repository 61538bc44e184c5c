"""files on big data, with the largest arguments the schemas take: every result fits the budget
and says how to get the rest."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from tests.budgets import assert_fits, says_more, structured, text
from tests.harness import connect
from tests.servers.files.fixtures import local_backend

pytestmark = pytest.mark.anyio


async def test_every_files_reader_fits_the_budget_on_big_files(tmp_path: Path) -> None:
    backend = local_backend(tmp_path)
    log = "".join(f"2026-01-01T00:00:{i % 60:02d} INFO request {i} served in {i % 97} ms\n" for i in range(120_000))
    backend.put("logs/big.log", log.encode())  # ~6 MB
    blob = os.urandom(2 * 1024 * 1024)
    backend.put("data/blob.bin", blob)
    for i in range(1_000):
        backend.put(f"tree/{i // 100}/a file with a rather long name number {i:04}.txt", b"x")
    settings = backend.with_files(max_read_bytes=64 * 1024 * 1024, max_write_bytes=64 * 1024 * 1024)
    async with connect(tmp_path, settings) as client:
        default = await client.call_tool("files_read", {"path": "logs/big.log"})
        largest = await client.call_tool("files_read", {"path": "logs/big.log", "max_chars": 30_000})
        binary = await client.call_tool("files_read", {"path": "data/blob.bin", "max_chars": 30_000})
        listing = await client.call_tool("files_list", {"path": "tree", "recursive": True, "limit": 200})
        edited = await client.call_tool(
            "files_edit",
            {
                "path": "logs/big.log",
                "edits": [{"old_string": "INFO", "new_string": "DEBUG", "replace_all": True}],
                "dry_run": True,
            },
        )
    for result in (default, largest, binary, listing, edited):
        assert_fits(result)
    assert len(structured(default)["content"]) == 20_000  # a window in characters, not 1 MiB of bytes
    says_more(default, "offset=20000")
    says_more(largest, "offset=30000")
    page = structured(binary)
    assert page["encoding"] == "base64" and base64.b64decode(page["content"]) == blob[: page["next_offset"]]
    says_more(binary, f"offset={page['next_offset']}")
    assert structured(listing)["next_cursor"] and len(structured(listing)["entries"]) == 200
    assert "more); files_read shows the file" in text(edited)


async def test_paging_a_big_text_file_gives_it_whole(tmp_path: Path) -> None:
    backend = local_backend(tmp_path)
    body = "".join(f"línea {i}: ünïcödé text\n" for i in range(8_000))
    backend.put("notes.txt", body.encode())
    pieces, offset = [], 0
    async with connect(tmp_path, backend.settings) as client:
        while offset is not None:
            page = structured(await client.call_tool("files_read", {"path": "notes.txt", "offset": offset}))
            pieces.append(page["content"])
            offset = page.get("next_offset")
    assert "".join(pieces) == body and len(pieces) == -(-len(body) // 20_000)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_small_image_is_image_content_on_both_protocol_eras(tmp_path: Path, mode: str) -> None:
    import mcp_types as types

    backend = local_backend(tmp_path)
    png = b"\x89PNG\r\n\x1a\n" + os.urandom(40_000)
    backend.put("chart.png", png)
    backend.put("photo.png", b"\x89PNG\r\n\x1a\n" + os.urandom(60_000))  # above 48 KB: base64 pages
    async with connect(tmp_path, backend.settings, mode=mode) as client:
        shown = await client.call_tool("files_read", {"path": "chart.png"})
        paged = await client.call_tool("files_read", {"path": "photo.png", "max_chars": 30_000})
    images = [block for block in shown.content if isinstance(block, types.ImageContent)]
    assert [(base64.b64decode(image.data), image.mime_type) for image in images] == [(png, "image/png")]
    assert structured(shown)["encoding"] == "image" and assert_fits(shown) < 20_000
    assert structured(paged)["encoding"] == "base64"
    says_more(paged, "offset=22500")
