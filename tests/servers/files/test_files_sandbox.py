"""The shared containment module on its own: key policies, containment, atomic no-follow I/O."""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path

import pytest

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.util.sandbox import MAX_KEY_CHARS, TEMP_SUFFIX, Sandbox, atomic_write, check_key


def refused(key: str, policy: str = "strict") -> str:
    with pytest.raises(ToolFailure) as caught:
        check_key(key, policy)  # type: ignore[arg-type]
    assert caught.value.kind == "invalid_arguments"
    return caught.value.message


@pytest.mark.parametrize(
    "key",
    ["", "/a", "a/", "a//b", "./a", "a/..", "..", "a\\b", "a\x00b", "a\x1fb", "a\nb", "x" * (MAX_KEY_CHARS + 1)],
)
@pytest.mark.parametrize("policy", ["strict", "unicode"])
def test_structural_rules_hold_under_both_policies(key: str, policy: str) -> None:
    refused(key, policy)


def test_strict_policy_is_a_whitelist() -> None:
    assert check_key("docs/v1.2/read-me_now.md") == ("docs", "v1.2", "read-me_now.md")
    for key in ["a b", "a:b", "a%2e", "é", "\uff0e\uff0e", "a*b", "~", "a;b"]:
        assert "outside [A-Za-z0-9_-/.]" in refused(key)


def test_unicode_policy_accepts_real_note_names() -> None:
    for key in ["Réunion 2024/Notes (draft) #1.md", "日本語/メモ.md", "a b/c?d!.md", "emoji 🙂.md", "...", ".hidden"]:
        assert "/".join(check_key(key, "unicode")) == key
    assert "U+2028" in refused("line\u2028sep", "unicode")
    assert "U+007F" in refused("del\x7f", "unicode")


def test_segments_are_bounded_in_bytes() -> None:
    assert "longer than 255 bytes" in refused("é" * 128, "unicode")
    check_key("é" * 127, "unicode")


def test_nfc_and_nfd_names_round_trip_exactly(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path / "notes", policy="unicode")
    composed = unicodedata.normalize("NFC", "Café.md")
    decomposed = unicodedata.normalize("NFD", "Café.md")
    assert composed != decomposed
    sandbox.write_bytes(composed, b"nfc")
    sandbox.write_bytes(decomposed, b"nfd")
    assert sandbox.read_bytes(composed) == b"nfc" and sandbox.read_bytes(decomposed) == b"nfd"
    assert sorted(os.listdir(sandbox.root)) == sorted([composed, decomposed])


def test_prefix_sibling_is_outside(tmp_path: Path) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files-evil").mkdir()
    (tmp_path / "files-evil" / "x").write_text("evil")
    (tmp_path / "files" / "door").symlink_to(tmp_path / "files-evil")
    sandbox = Sandbox(tmp_path / "files")
    with pytest.raises(ToolFailure, match="outside the root"):
        sandbox.resolve("door/x")
    with pytest.raises(ToolFailure, match="outside the root"):
        sandbox.write_bytes("door/new", b"x")
    assert not (tmp_path / "files-evil" / "new").exists()


def test_root_taken_once_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    sandbox = Sandbox(link)
    assert sandbox.root == real
    sandbox.write_bytes("a/b.txt", b"x", create_parents=True)
    assert (real / "a" / "b.txt").read_bytes() == b"x"
    assert sandbox.resolve("a/b.txt") == real / "a" / "b.txt"
    assert sandbox.key_of(real / "a" / "b.txt") == "a/b.txt"


def test_missing_path_checks_its_deepest_existing_parent(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "out").symlink_to(outside)
    sandbox = Sandbox(root)
    with pytest.raises(ToolFailure, match="outside the root"):
        sandbox.resolve("out/not/yet/there.txt")
    assert sandbox.resolve("in/not/yet.txt") == root / "in" / "not" / "yet.txt"


def test_atomic_write_keeps_mode_and_leaves_no_temp_file(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path)
    target = tmp_path / "script.sh"
    target.write_text("old")
    target.chmod(0o750)
    sandbox.write_bytes("script.sh", b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert [name for name in os.listdir(tmp_path) if name.endswith(TEMP_SUFFIX)] == []


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    sandbox = Sandbox(tmp_path)
    with pytest.raises(ToolFailure) as caught:
        sandbox.write_bytes("folder", b"x")
    assert caught.value.kind == "conflict"
    descriptor = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(TypeError):
            atomic_write(descriptor, "x.txt", "not bytes")  # type: ignore[arg-type]
    finally:
        os.close(descriptor)
    assert sorted(os.listdir(tmp_path)) == ["folder"]


def test_write_into_missing_folder_needs_create_parents(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path)
    with pytest.raises(ToolFailure) as caught:
        sandbox.write_bytes("a/b/c.txt", b"x")
    assert caught.value.kind == "not_found" and "create_parents" in (caught.value.hint or "")
    sandbox.write_bytes("a/b/c.txt", b"x", create_parents=True)
    assert sandbox.read_bytes("a/b/c.txt") == b"x"


def test_read_limit_and_kinds(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path)
    sandbox.write_bytes("big", b"x" * 100)
    with pytest.raises(ToolFailure) as caught:
        sandbox.read_bytes("big", max_bytes=99)
    assert caught.value.kind == "too_large"
    assert sandbox.read_bytes("big", max_bytes=100) == b"x" * 100
    with pytest.raises(ToolFailure) as caught:
        sandbox.read_bytes("nope")
    assert caught.value.kind == "not_found"


def test_operations_on_links_act_on_the_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(outside)
    sandbox = Sandbox(root)
    info = sandbox.stat("link")
    assert info is not None and stat.S_ISLNK(info.st_mode)
    sandbox.rename("link", "renamed")
    sandbox.unlink("renamed")
    assert outside.read_text() == "keep" and os.listdir(root) == []


def test_rename_refuses_overwrite_unless_asked(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path)
    sandbox.write_bytes("a", b"A")
    sandbox.write_bytes("b", b"B")
    with pytest.raises(ToolFailure) as caught:
        sandbox.rename("a", "b")
    assert caught.value.kind == "conflict"
    sandbox.rename("a", "b", overwrite=True)
    assert sandbox.read_bytes("b") == b"A" and not sandbox.exists("a")


def test_rmtree_does_not_follow_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    root = tmp_path / "root"
    (root / "tree").mkdir(parents=True)
    (root / "tree" / "out").symlink_to(outside)
    sandbox = Sandbox(root)
    sandbox.rmtree("tree")
    assert (outside / "keep.txt").read_text() == "keep" and not (root / "tree").exists()


def test_long_unicode_names_write_atomically(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, policy="unicode")
    name = "ü" * 127  # 254 bytes: the temporary name must still fit in 255
    sandbox.write_bytes(name, b"x")
    sandbox.write_bytes(name, b"y")
    assert sandbox.read_bytes(name) == b"y" and os.listdir(tmp_path) == [name]
