"""files.copy through a real MCP client, on the local folder and on S3 (moto on loopback)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from tests.harness import connect, failure, ok
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import FilesBackend

backend = files_fixtures.backend
local = files_fixtures.local
moto_endpoint = files_fixtures.moto_endpoint

pytestmark = pytest.mark.anyio


async def test_copies_a_file_and_leaves_the_source(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("docs/a.md", b"alpha\n")
    async with connect(tmp_path, backend.settings) as client:
        copied = ok(await client.call_tool("files_copy", {"source": "docs/a.md", "destination": "backup/a.md"}))
        again = failure(await client.call_tool("files_copy", {"source": "docs/a.md", "destination": "backup/a.md"}))
        folder = failure(await client.call_tool("files_copy", {"source": "docs", "destination": "elsewhere"}))
        missing = failure(await client.call_tool("files_copy", {"source": "nope.md", "destination": "x.md"}))
        same = failure(await client.call_tool("files_copy", {"source": "docs/a.md", "destination": "docs/a.md"}))
    assert copied == {"source": "docs/a.md", "destination": "backup/a.md", "copied": 1, "replaced": False}
    assert backend.get("backup/a.md") == b"alpha\n" and backend.get("docs/a.md") == b"alpha\n"
    assert again["kind"] == "conflict" and "overwrite" in again["hint"]
    assert folder["kind"] == "invalid_arguments" and "recursive" in folder["hint"]
    assert missing["kind"] == "not_found" and same["kind"] == "invalid_arguments"


async def test_replacing_a_file_asks_first(tmp_path: Path, backend: FilesBackend) -> None:
    backend.put("a.txt", b"new")
    backend.put("b.txt", b"old contents")
    seen: list[types.ElicitRequestParams] = []
    async with connect(tmp_path, backend.settings, elicit="decline", seen=seen) as client:
        declined = await client.call_tool("files_copy", {"source": "a.txt", "destination": "b.txt", "overwrite": True})
    assert declined.is_error and backend.get("b.txt") == b"old contents"
    assert len(seen) == 1 and "replacing the existing b.txt (12 B)" in seen[0].message
    seen.clear()
    async with connect(tmp_path, backend.settings, elicit="accept", seen=seen) as client:
        done = ok(await client.call_tool("files_copy", {"source": "a.txt", "destination": "b.txt", "overwrite": True}))
        fresh = ok(await client.call_tool("files_copy", {"source": "a.txt", "destination": "c.txt"}))
    assert done["replaced"] is True and backend.get("b.txt") == b"new"
    assert fresh["replaced"] is False and len(seen) == 1  # a copy to a new path is not an overwrite


async def test_copies_a_folder_whole(tmp_path: Path, backend: FilesBackend) -> None:
    for key in ("src/a.txt", "src/deep/b.txt", "src/deep/deeper/c.txt"):
        backend.put(key, key.encode())
    async with connect(tmp_path, backend.settings) as client:
        copied = ok(await client.call_tool("files_copy", {"source": "src", "destination": "dst", "recursive": True}))
        listed = ok(await client.call_tool("files_list", {"path": "dst", "recursive": True}))
        onto = failure(await client.call_tool("files_copy", {"source": "src", "destination": "dst", "recursive": True}))
        inside = failure(
            await client.call_tool("files_copy", {"source": "src", "destination": "src/again", "recursive": True})
        )
    assert copied["copied"] == 3
    files = {entry["path"] for entry in listed["entries"] if entry["type"] == "file"}
    assert files == {"dst/a.txt", "dst/deep/b.txt", "dst/deep/deeper/c.txt"}
    assert backend.get("dst/deep/deeper/c.txt") == b"src/deep/deeper/c.txt"
    assert onto["kind"] == "conflict" and inside["kind"] == "invalid_arguments"


async def test_a_local_folder_copy_leaves_nothing_half_done(tmp_path: Path, local: FilesBackend) -> None:
    assert local.root is not None
    local.put("src/ok.txt", b"fine")
    local.put("src/big.bin", b"x" * 5000)
    settings = local.with_files(max_write_bytes=1024)
    async with connect(tmp_path, settings) as client:
        refused = failure(
            await client.call_tool("files_copy", {"source": "src", "destination": "dst", "recursive": True})
        )
    assert refused["kind"] == "too_large"
    assert sorted(path.name for path in local.root.iterdir()) == ["src"]  # no dst, no temp folder left


async def test_links_and_escapes_are_refused(tmp_path: Path, local: FilesBackend) -> None:
    assert local.root is not None
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    (local.root / "link.txt").symlink_to(outside)
    local.put("a.txt", b"a")
    async with connect(tmp_path, local.settings) as client:
        through_link = failure(await client.call_tool("files_copy", {"source": "link.txt", "destination": "b.txt"}))
        out = failure(await client.call_tool("files_copy", {"source": "a.txt", "destination": "../escape.txt"}))
        nul = failure(await client.call_tool("files_copy", {"source": "a.txt", "destination": "b\x00.txt"}))
    assert through_link["kind"] in ("invalid_arguments", "denied_by_policy", "not_found")
    assert not (local.root / "b.txt").exists() and not (tmp_path / "escape.txt").exists()
    assert out["kind"] == "invalid_arguments" and nul["kind"] == "invalid_arguments"
