"""Attempts to leave the files root. Every one must be refused and leave the outside untouched."""

from __future__ import annotations

import hashlib
import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.util.sandbox import Sandbox
from tests.harness import connect, failure, ok
from tests.servers.files import fixtures as files_fixtures
from tests.servers.files.fixtures import FilesBackend

pytestmark = pytest.mark.anyio
backend = files_fixtures.backend
moto_endpoint = files_fixtures.moto_endpoint

SECRET = b"top secret, outside the root\n"


def snapshot(folder: Path) -> dict[str, str]:
    """Every path under `folder` with a hash of its content (links by their target)."""
    state: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            if path.is_symlink():
                state[str(path)] = "link:" + os.readlink(path)
            elif path.is_file():
                state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                state[str(path)] = "folder"
    return state


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Any]:
    """/data/files (the root, reached through a symlink) next to /data/files-evil and /data/outside."""
    data = tmp_path / "data"
    root = data / "files"
    sibling = data / "files-evil"
    outside = data / "outside"
    for folder in (root, sibling, outside):
        folder.mkdir(parents=True)
    (sibling / "secret.txt").write_bytes(SECRET)
    (outside / "secret.txt").write_bytes(SECRET)
    (root / "inside.txt").write_bytes(b"inside\n")
    (root / "sub").mkdir()
    (root / "sub" / "ok.txt").write_bytes(b"ok\n")
    root_link = tmp_path / "root-link"
    root_link.symlink_to(root)
    # Symlinks planted inside the root by someone with shell access.
    (root / "link-out").symlink_to(outside)  # a folder out
    (root / "file-out").symlink_to(outside / "secret.txt")  # a file out
    (root / "evil").symlink_to("../files-evil")  # the prefix sibling, relatively
    (root / "dangling-out").symlink_to(outside / "not-yet.txt")  # a file that does not exist yet
    (root / "sub" / "up").symlink_to("../..")  # back up to data/
    (root / "inner-link").symlink_to("sub/ok.txt")  # stays inside: allowed
    settings = {"server": {"servers": ["files"]}, "files": {"root": str(root_link)}}
    return {"settings": settings, "root": root, "data": data, "outside": outside, "sibling": sibling}


BAD_KEYS = [
    "../files-evil/secret.txt",
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "./../outside/secret.txt",
    "sub/./ok.txt",
    "..",
    ".",
    "/etc/passwd",
    "//etc/passwd",
    "sub//ok.txt",
    "sub/",
    "",
    "..\\outside\\secret.txt",
    "sub\\ok.txt",
    "inside.txt\x00.png",
    "\x00",
    "%2e%2e/outside/secret.txt",
    "..%2foutside%2fsecret.txt",
    "%2E%2E%2F",
    "\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
    "\u2025/outside/secret.txt",  # two dot leader
    "\u2024\u2024/outside/secret.txt",  # one dot leaders
    "sub\u2215..\u2215..\u2215outside",  # division slash
    "caf\u00e9.txt",
    unicodedata.normalize("NFD", "caf\u00e9.txt"),
    "~/secret.txt",
    "C:/Windows/win.ini",
    "file:///etc/passwd",
    "a" * 5000,
    "/".join(["a"] * 600),
    "x" * 300,
    "line\nbreak.txt",
    "tab\t.txt",
    " inside.txt",
]


def _calls(key: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("files_read", {"path": key}),
        ("files_write", {"path": key, "content": "pwned"}),
        ("files_edit", {"path": key, "edits": [{"old_string": "top", "new_string": "pwned"}]}),
        ("files_delete", {"path": key, "recursive": True}),
        ("files_mkdir", {"path": key}),
        ("files_move", {"source": key, "destination": "moved.txt"}),
        ("files_move", {"source": "inside.txt", "destination": key}),
    ]


async def test_bad_keys_are_refused_everywhere(tmp_path: Path, layout: dict[str, Any]) -> None:
    before = snapshot(layout["data"])
    async with connect(tmp_path, layout["settings"]) as client:
        for key in BAD_KEYS:
            listing = await client.call_tool("files_list", {"path": key})
            if key != "":  # '' lists the root itself
                assert failure(listing)["kind"] == "invalid_arguments", key
            for tool, arguments in _calls(key):
                error = failure(await client.call_tool(tool, arguments))
                assert error["kind"] == "invalid_arguments", (tool, key, error)
                assert "top secret" not in str(error)
    assert snapshot(layout["data"]) == before


async def test_errors_state_the_rule(tmp_path: Path, layout: dict[str, Any]) -> None:
    async with connect(tmp_path, layout["settings"]) as client:
        cases = {
            "../x": "'..' segment",
            "/etc/passwd": "leading '/'",
            "a\\b": "backslash",
            "a\x00b": "NUL",
            "caf\u00e9": "characters outside [A-Za-z0-9_-/.]",
            "a" * 1100: "at most 1024 characters",
            "a//b": "empty segment",
        }
        for key, rule in cases.items():
            error = failure(await client.call_tool("files_read", {"path": key}))
            assert rule in error["message"], (key, error)
            assert error["message"].startswith("path")


# With [files] names = "unicode": the structure rules stand, and what looks like a separator,
# a dot segment or nothing at all is refused too.
UNICODE_BAD_KEYS = [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "./../outside/secret.txt",
    "..",
    ".",
    "/etc/passwd",
    "//etc/passwd",
    "sub//ok.txt",
    "sub/",
    "",
    "..\\outside\\secret.txt",
    "sub\\ok.txt",
    "inside.txt\x00.png",
    "\uff0e\uff0e/outside/secret.txt",  # fullwidth full stops
    "\uff0e/inside.txt",
    "\u2025/outside/secret.txt",  # two dot leader
    "\u2024\u2024/outside/secret.txt",  # one dot leaders
    ".\uff0e/outside/secret.txt",
    "\ufe52\ufe52/outside/secret.txt",  # small full stops
    "sub\u2215..\u2215..\u2215outside",  # division slash
    "sub\uff0f..\uff0f..\uff0foutside",  # fullwidth solidus
    "..\u2044outside\u2044secret.txt",  # fraction slash
    "..\uff3coutside\uff3csecret.txt",  # fullwidth reverse solidus
    "..\ufe68outside",  # small reverse solidus
    "file:///etc/passwd",
    "line\nbreak.txt",
    "tab\t.txt",
    "del\x7f.txt",
    "next\u0085line.txt",
    "line\u2028sep.txt",
    " inside.txt",
    "inside.txt ",
    "inside.txt\u00a0",
    "\u3000inside.txt",
    "sub/ok.txt\u2003",
    "in\u202eside.txt",  # right-to-left override
    "inside\u2066.txt",  # left-to-right isolate
    "\u200finside.txt",  # right-to-left mark
    "\u061cinside.txt",  # Arabic letter mark
    "\u200binside.txt",  # zero width space
    "\u2060inside.txt",  # word joiner
    "\ufeffinside.txt",  # byte order mark
    "in\u00adside.txt",  # soft hyphen
    "\u200dinside.txt",  # a joiner with nothing to join
    "inside.txt\u200c",
    "\ufe0finside.txt",  # a variation selector with nothing to select
    "\u3164.txt",  # Hangul filler
    "\u2800",  # braille blank
    "\U000e0041inside.txt",  # tag character
    "\ue000inside.txt",  # private use
    "\U000e01ef",
    "a" * 5000,
    "x" * 300,
    "\u00e9" * 128,
]


async def test_bad_keys_are_refused_in_unicode_mode_too(tmp_path: Path, layout: dict[str, Any]) -> None:
    before = snapshot(layout["data"])
    async with connect(tmp_path, with_names(layout, "unicode")) as client:
        for key in UNICODE_BAD_KEYS:
            listing = await client.call_tool("files_list", {"path": key})
            if key != "":
                assert failure(listing)["kind"] == "invalid_arguments", key
            for tool, arguments in _calls(key):
                error = failure(await client.call_tool(tool, arguments))
                assert error["kind"] == "invalid_arguments", (tool, key, error)
                assert "top secret" not in str(error)
    assert snapshot(layout["data"]) == before


async def test_unicode_mode_errors_name_the_character(tmp_path: Path, layout: dict[str, Any]) -> None:
    async with connect(tmp_path, with_names(layout, "unicode")) as client:
        cases = {
            "in\u202eside.txt": "U+202E",
            "a\u2215b": "look-alikes of '/'",
            "\uff0e\uff0e/x": "'.' or '..'",
            " inside.txt": "starts or ends with a space",
            "a\\b": "backslash",
        }
        for key, rule in cases.items():
            error = failure(await client.call_tool("files_read", {"path": key}))
            assert rule in error["message"], (key, error)


# Names that only look like a way out: in unicode mode each is a literal name inside the root.
LITERAL_NAMES = [
    "%2e%2e/outside/secret.txt",
    "~/secret.txt",
    "C:/Windows/win.ini",
    ".../secret.txt",
    "sub/...",
    "\u2026",
]


async def test_look_alike_names_that_are_allowed_stay_inside(tmp_path: Path, layout: dict[str, Any]) -> None:
    before = snapshot(layout["outside"]), snapshot(layout["sibling"])
    async with connect(tmp_path, with_names(layout, "unicode")) as client:
        for key in LITERAL_NAMES:
            ok(await client.call_tool("files_write", {"path": key, "content": "inside"}))
            assert ok(await client.call_tool("files_read", {"path": key}))["content"] == "inside"
    for key in LITERAL_NAMES:
        assert (layout["root"] / key).read_text() == "inside"
    assert (snapshot(layout["outside"]), snapshot(layout["sibling"])) == before


async def test_unicode_named_symlinks_out_are_refused(tmp_path: Path, layout: dict[str, Any]) -> None:
    root: Path = layout["root"]
    (root / "Lien vers l\u2019ext\u00e9rieur").symlink_to(layout["outside"])
    (root / "sub" / "\u4e0a\u4e00\u7ea7").symlink_to("../..")
    (root / "R\u00e9sum\u00e9.pdf").symlink_to(layout["outside"] / "secret.txt")
    before = snapshot(layout["data"])
    async with connect(tmp_path, with_names(layout, "unicode")) as client:
        for key in [
            "Lien vers l\u2019ext\u00e9rieur/secret.txt",
            "sub/\u4e0a\u4e00\u7ea7/outside/secret.txt",
            "R\u00e9sum\u00e9.pdf",
        ]:
            for tool, arguments in _calls(key)[:3]:
                error = failure(await client.call_tool(tool, arguments))
                assert error["kind"] == "invalid_arguments" and "outside the root" in error["message"], (tool, key)
        new = failure(
            await client.call_tool("files_write", {"path": "Lien vers l\u2019ext\u00e9rieur/n.txt", "content": "x"})
        )
        assert new["kind"] == "invalid_arguments"
    assert snapshot(layout["data"]) == before


SYMLINK_ESCAPES = ["link-out/secret.txt", "file-out", "evil/secret.txt", "sub/up/outside/secret.txt", "dangling-out"]


def with_names(layout: dict[str, Any], names: str) -> dict[str, Any]:
    settings = layout["settings"]
    return {**settings, "files": {**settings["files"], "names": names}}


@pytest.mark.parametrize("names", ["strict", "unicode"])
async def test_symlinks_that_lead_out_are_refused(tmp_path: Path, layout: dict[str, Any], names: str) -> None:
    before = snapshot(layout["data"])
    async with connect(tmp_path, with_names(layout, names)) as client:
        for key in SYMLINK_ESCAPES:
            for tool, arguments in [
                ("files_read", {"path": key}),
                ("files_write", {"path": key, "content": "pwned"}),
                ("files_edit", {"path": key, "edits": [{"old_string": "top", "new_string": "pwned"}]}),
            ]:
                error = failure(await client.call_tool(tool, arguments))
                assert error["kind"] == "invalid_arguments", (tool, key, error)
                assert "outside the root" in error["message"]
        for key in ["link-out/new.txt", "evil/new.txt", "link-out/deep/new.txt"]:
            error = failure(await client.call_tool("files_write", {"path": key, "content": "x"}))
            assert error["kind"] == "invalid_arguments", key
            mkdir = failure(await client.call_tool("files_mkdir", {"path": key}))
            assert mkdir["kind"] == "invalid_arguments", key
        listing = failure(await client.call_tool("files_list", {"path": "link-out"}))
        assert listing["kind"] == "invalid_arguments"
        moved_out = failure(await client.call_tool("files_move", {"source": "inside.txt", "destination": "evil/x"}))
        assert moved_out["kind"] == "invalid_arguments"
        moved_in = failure(await client.call_tool("files_move", {"source": "link-out/secret.txt", "destination": "x"}))
        assert moved_in["kind"] == "invalid_arguments"
        deep_delete = failure(await client.call_tool("files_delete", {"path": "link-out/secret.txt"}))
        assert deep_delete["kind"] == "invalid_arguments"
    assert snapshot(layout["data"]) == before
    assert not (layout["outside"] / "not-yet.txt").exists()


async def test_recursive_listing_and_delete_do_not_follow_links(tmp_path: Path, layout: dict[str, Any]) -> None:
    async with connect(tmp_path, layout["settings"]) as client:
        listing = ok(await client.call_tool("files_list", {"recursive": True}))
        types = {entry["path"]: entry["type"] for entry in listing["entries"]}
        assert types["link-out"] == "link" and types["sub/up"] == "link"
        assert not any("secret" in path for path in types)
        ok(await client.call_tool("files_delete", {"path": "sub", "recursive": True}))
        ok(await client.call_tool("files_delete", {"path": "link-out"}))  # removes the link, not its target
    assert (layout["outside"] / "secret.txt").read_bytes() == SECRET
    assert (layout["sibling"] / "secret.txt").read_bytes() == SECRET
    assert not (layout["root"] / "link-out").exists() and not (layout["root"] / "sub").exists()


async def test_links_that_stay_inside_work(tmp_path: Path, layout: dict[str, Any]) -> None:
    async with connect(tmp_path, layout["settings"]) as client:
        read = ok(await client.call_tool("files_read", {"path": "inner-link"}))
        ok(await client.call_tool("files_write", {"path": "sub/new.txt", "content": "fine"}))
    assert read["content"] == "ok\n"
    assert (layout["root"] / "sub" / "new.txt").read_text() == "fine"


async def test_target_swapped_to_a_symlink_between_check_and_write(
    tmp_path: Path, layout: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check passes on a regular file; then an attacker swaps in a symlink out."""
    root: Path = layout["root"]
    target = root / "victim.txt"
    target.write_bytes(b"original\n")
    outside_secret: Path = layout["outside"] / "secret.txt"
    original_real_segments = Sandbox._real_segments

    def swap_after_check(self: Sandbox, key: str, field: str, allow_empty: bool = False) -> tuple[str, ...]:
        segments = original_real_segments(self, key, field, allow_empty)
        if key == "victim.txt" and target.exists() and not target.is_symlink():
            target.unlink()
            target.symlink_to(outside_secret)
        return segments

    monkeypatch.setattr(Sandbox, "_real_segments", swap_after_check)
    async with connect(tmp_path, layout["settings"]) as client:
        read = failure(await client.call_tool("files_read", {"path": "victim.txt"}))
        assert read["kind"] == "invalid_arguments" and "symbolic link" in read["message"]
        target.unlink()
        target.write_bytes(b"original\n")
        ok(await client.call_tool("files_write", {"path": "victim.txt", "content": "new", "create_parents": False}))
    assert outside_secret.read_bytes() == SECRET
    assert not target.is_symlink() and target.read_bytes() == b"new"  # the link was replaced, not followed


async def test_parent_swapped_to_a_symlink_between_check_and_write(
    tmp_path: Path, layout: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    root: Path = layout["root"]
    folder = root / "work"
    folder.mkdir()
    original_real_segments = Sandbox._real_segments

    def swap_after_check(self: Sandbox, key: str, field: str, allow_empty: bool = False) -> tuple[str, ...]:
        segments = original_real_segments(self, key, field, allow_empty)
        if key == "work/report.txt" and not folder.is_symlink():
            folder.rmdir()
            folder.symlink_to(layout["outside"])
        return segments

    monkeypatch.setattr(Sandbox, "_real_segments", swap_after_check)
    before = snapshot(layout["outside"])
    async with connect(tmp_path, layout["settings"]) as client:
        error = failure(await client.call_tool("files_write", {"path": "work/report.txt", "content": "pwned"}))
    assert error["kind"] in ("invalid_arguments", "conflict")
    assert snapshot(layout["outside"]) == before
    assert not (layout["outside"] / "report.txt").exists()


async def test_fifo_and_devices_are_not_read(tmp_path: Path, layout: dict[str, Any]) -> None:
    os.mkfifo(layout["root"] / "pipe")
    async with connect(tmp_path, layout["settings"]) as client:
        error = failure(await client.call_tool("files_read", {"path": "pipe"}))
        edit = failure(
            await client.call_tool("files_edit", {"path": "pipe", "edits": [{"old_string": "a", "new_string": "b"}]})
        )
    assert error["kind"] == "invalid_arguments" and "not a regular file" in error["message"]
    assert edit["kind"] == "invalid_arguments"


async def test_error_messages_do_not_reveal_host_paths(tmp_path: Path, layout: dict[str, Any]) -> None:
    async with connect(tmp_path, layout["settings"]) as client:
        errors = [
            failure(await client.call_tool("files_read", {"path": "file-out"})),
            failure(await client.call_tool("files_read", {"path": "missing/deep.txt"})),
            failure(await client.call_tool("files_write", {"path": "inside.txt/x", "content": "x"})),
        ]
    for error in errors:
        assert str(tmp_path) not in str(error)


async def test_keys_are_checked_on_s3_too(tmp_path: Path, backend: FilesBackend) -> None:
    async with connect(tmp_path, backend.settings) as client:
        for key in ["../escape.txt", "/abs.txt", "a\\b", "%2e%2e/x", "\uff0e\uff0e/x", "a/./b"]:
            error = failure(await client.call_tool("files_write", {"path": key, "content": "x"}))
            assert error["kind"] == "invalid_arguments", key
        listing = ok(await client.call_tool("files_list", {"recursive": True}))
    assert listing["entries"] == []


async def test_keys_are_checked_on_s3_in_unicode_mode(tmp_path: Path, backend: FilesBackend) -> None:
    async with connect(tmp_path, backend.with_files(names="unicode")) as client:
        for key in UNICODE_BAD_KEYS:
            error = failure(await client.call_tool("files_write", {"path": key, "content": "x"}))
            assert error["kind"] == "invalid_arguments", key
        listing = ok(await client.call_tool("files_list", {"recursive": True}))
    assert listing["entries"] == []
