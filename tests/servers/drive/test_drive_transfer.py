"""Large Drive transfers over the real MCP client: a download saved to the files store in ranged
chunks and an upload through a resumable session, each reporting bytes done out of the total;
the fake Drive checks every range and chunk (one that does not follow on fails the test)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from mcp_tools.servers.drive.transfer import CHUNK_BYTES
from tests.harness import connect, failure, ok
from tests.servers.drive.fixtures import drive_settings
from tests.servers.fake_google import FakeDrive, FakeGoogle

pytestmark = pytest.mark.anyio
SIZE = 3 * CHUNK_BYTES + 12_345  # four chunks, the last one short


def payload(size: int = SIZE) -> bytes:
    """Bytes that differ at every offset, so a chunk out of place shows."""
    block = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(size // 32 + 1))
    return block[:size]


async def test_a_large_download_saved_to_the_store_comes_in_chunks_with_progress(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
) -> None:
    data = payload()
    item = drive.add("film.bin", data, "application/octet-stream")
    steps: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append((done, total))

    settings = drive_settings(tmp_path, google, drive={"max_read_bytes": 4096})
    async with connect(tmp_path, settings) as client:
        saved = ok(await client.call_tool("drive_read", {"id": item.id, "save_to": "in/film.bin"}, None, progress))
    assert saved["encoding"] == "saved"
    assert (tmp_path / "data" / "files" / "in" / "film.bin").read_bytes() == data
    ends = [end for _, end in drive.ranges]
    assert [start for start, _ in drive.ranges] == [0, CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES]
    assert ends[-1] == SIZE - 1
    assert steps[0] == (0, SIZE) and steps[-1] == (SIZE, SIZE)
    assert [done for done, _ in steps] == [0, CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES, SIZE]


async def test_a_small_download_is_one_request_as_before(tmp_path: Path, google: FakeGoogle, drive: FakeDrive) -> None:
    item = drive.add("small.bin", b"\x01" * 5000, "application/octet-stream")
    settings = drive_settings(tmp_path, google, drive={"max_read_bytes": 4096})
    async with connect(tmp_path, settings) as client:
        ok(await client.call_tool("drive_read", {"id": item.id, "save_to": "small.bin"}))
    assert drive.ranges == [] and (tmp_path / "data" / "files" / "small.bin").stat().st_size == 5000


async def test_a_large_upload_goes_through_a_resumable_session_with_progress(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
) -> None:
    data = payload()
    steps: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        steps.append((done, total))

    encoded = base64.b64encode(data).decode()
    async with connect(tmp_path, drive_settings(tmp_path, google)) as client:
        created = ok(
            await client.call_tool("drive_create", {"name": "film.bin", "content_base64": encoded}, None, progress)
        )
        replaced = ok(
            await client.call_tool(
                "drive_update",
                {"id": created["file"]["id"], "content_base64": encoded[::-1][: len(encoded) // 4 * 4]},
                None,
            )
        )
    item = drive.files[created["file"]["id"]]
    assert created["file"]["size"] == SIZE and created["link"].endswith(item.id)
    assert google.resumable.chunks == [CHUNK_BYTES] * 3 + [12_345] + google.resumable.chunks[4:]
    assert google.resumable.finished == ["drive.files.create", "drive.files.update"]
    assert google.resumable.sessions == {}
    assert item.content == base64.b64decode(encoded[::-1][: len(encoded) // 4 * 4])
    assert replaced["file"]["version"] != created["file"]["version"]
    assert [done for done, _ in steps] == [0, CHUNK_BYTES, 2 * CHUNK_BYTES, 3 * CHUNK_BYTES, SIZE]
    assert {total for _, total in steps} == {SIZE}


async def test_a_file_of_the_files_store_uploads_to_drive_with_from_path(
    tmp_path: Path, google: FakeGoogle, drive: FakeDrive
) -> None:
    data = payload(2 * CHUNK_BYTES + 99)
    store = tmp_path / "data" / "files" / "out"
    store.mkdir(parents=True)
    (store / "film.bin").write_bytes(data)
    (store / "notes.md").write_text("# Notes\n", encoding="utf-8")
    async with connect(tmp_path, drive_settings(tmp_path, google)) as client:
        created = ok(await client.call_tool("drive_create", {"name": "film.bin", "from_path": "out/film.bin"}))
        small = ok(await client.call_tool("drive_create", {"name": "Notes", "from_path": "out/notes.md"}))
        replaced = ok(await client.call_tool("drive_update", {"id": small["file"]["id"], "from_path": "out/film.bin"}))
        missing = failure(await client.call_tool("drive_create", {"name": "x", "from_path": "out/none.bin"}))
        both = failure(await client.call_tool("drive_create", {"name": "x", "content": "a", "from_path": "out/a"}))
    assert drive.files[created["file"]["id"]].content == data and created["file"]["size"] == len(data)
    assert google.resumable.chunks[:3] == [CHUNK_BYTES, CHUNK_BYTES, 99]
    assert drive.files[replaced["file"]["id"]].content == data  # through a resumable session too
    assert google.resumable.finished == ["drive.files.create", "drive.files.update"]
    assert [upload["media_type"] for upload in drive.uploads if "file" not in upload][-1] == "text/markdown"
    assert missing["kind"] == "not_found" and "out/none.bin" in missing["message"]
    assert both["kind"] == "invalid_arguments" and "from_path" in both["message"]
