"""Names on disk that are not valid UTF-8: listed in an escaped form, and reachable by it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.util.sandbox import check_key, escape_name, unescape_name
from tests.harness import connect, failure, ok
from tests.servers.notes.fixtures import wait_indexed

pytestmark = pytest.mark.anyio
LATIN1 = os.fsdecode(b"caf\xe9.txt")  # what os.listdir gives for the bytes 'caf\xe9.txt'


def settings(tmp_path: Path) -> dict:
    return {"server": {"servers": ["files"]}, "files": {"root": str(tmp_path / "root")}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / os.fsdecode(b"d\xff")).mkdir(parents=True)
    (folder / LATIN1).write_bytes(b"one")
    (folder / os.fsdecode(b"d\xff") / "inner.txt").write_bytes(b"two")
    (folder / "back\\slash.txt").write_bytes(b"three")
    return folder


@pytest.mark.parametrize(
    "name", [LATIN1, "back\\slash", "plain.txt", "\\x80 literally", os.fsdecode(b"\x80\\x80\\"), "Café ✓"]
)
def test_the_escape_round_trips(name: str) -> None:
    escaped = escape_name(name)
    escaped.encode("utf-8")  # always valid UTF-8
    assert unescape_name(escaped) == name


def test_only_the_two_escapes_may_use_a_backslash() -> None:
    assert check_key("caf\\xe9.txt") == ("caf\\xe9.txt",)
    assert check_key("a\\\\b") == ("a\\\\b",)
    for bad in ("a\\b", "a\\x41", "a\\xE9", "a\\", "a\\x7f"):
        with pytest.raises(ToolFailure, match="backslash"):
            check_key(bad)


async def test_listing_escapes_undecodable_bytes_and_backslashes(tmp_path: Path, root: Path) -> None:
    async with connect(tmp_path, settings(tmp_path)) as client:
        listed = ok(await client.call_tool("files_list", {"recursive": True}))
        result = await client.call_tool("files_list", {})
    paths = [entry["path"] for entry in listed["entries"]]
    assert paths == ["back\\\\slash.txt", "caf\\xe9.txt", "d\\xff", "d\\xff/inner.txt"]
    assert "not valid UTF-8" in result.content[0].text


async def test_escaped_names_can_be_read_moved_and_deleted(tmp_path: Path, root: Path) -> None:
    async with connect(tmp_path, settings(tmp_path)) as client:
        assert ok(await client.call_tool("files_read", {"path": "d\\xff/inner.txt"}))["content"] == "two"
        assert ok(await client.call_tool("files_read", {"path": "back\\\\slash.txt"}))["content"] == "three"
        ok(await client.call_tool("files_move", {"source": "caf\\xe9.txt", "destination": "cafe.txt"}))
        ok(await client.call_tool("files_delete", {"path": "d\\xff", "recursive": True}))
        missing = failure(await client.call_tool("files_read", {"path": "caf\\xe8.txt"}))
    assert missing["kind"] == "not_found"
    assert sorted(os.listdir(root)) == ["back\\slash.txt", "cafe.txt"]
    assert (root / "cafe.txt").read_bytes() == b"one"


async def test_the_gate_keeps_results_valid_even_when_a_namespace_forgets_to_escape(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mcp_tools.servers.files.local as local

    monkeypatch.setattr(local, "escape_name", lambda name: name)  # a namespace that lists raw OS names
    async with connect(tmp_path, settings(tmp_path)) as client:
        listed = ok(await client.call_tool("files_list", {}))
    assert "caf\\xe9.txt" in [entry["path"] for entry in listed["entries"]]


async def test_notes_with_names_that_are_not_utf8_are_found_and_read(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / os.fsdecode(b"R\xe9sum\xe9.md")).write_bytes(b"# Resume\n\nglacier radar notes\n")
    config = {"server": {"servers": ["notes"]}, "notes": {"vault": str(vault), "watch": False}}
    async with connect(tmp_path, config) as client:
        await wait_indexed(client)
        found = ok(await client.call_tool("notes_search", {"query": "glacier"}))
        assert [hit["path"] for hit in found["results"]] == ["R\\xe9sum\\xe9.md"]
        read = ok(await client.call_tool("notes_read", {"path": "R\\xe9sum\\xe9.md"}))
        ok(await client.call_tool("notes_rename", {"path": "R\\xe9sum\\xe9.md", "new_path": "Resume.md"}))
        ok(await client.call_tool("notes_delete", {"path": "Resume.md", "permanent": True}))
        (vault / os.fsdecode(b"gone\xff.md")).write_bytes(b"# Gone\n")
        ok(await client.call_tool("notes_delete", {"path": "gone\\xff.md", "permanent": True}))
    assert "glacier radar" in read["content"]
    assert os.listdir(vault) == []
