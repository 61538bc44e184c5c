"""The local store keeps a file's sha256 while the file is unchanged, and never a stale one."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files import local, versions
from mcp_tools.servers.files.local import LocalBackend

HOUR_NS = 3600 * 1_000_000_000


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def aged(path: Path) -> int:
    """Set the file's mtime an hour back, as for a file nobody touched lately; returns it."""
    mtime_ns = time.time_ns() - HOUR_NS
    os.utime(path, ns=(mtime_ns, mtime_ns))
    return mtime_ns


@pytest.fixture
def full_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the passes over a whole file the store makes (hashing it)."""
    passes: list[int] = []
    whole_file_pass = local.read_window_from

    def counted(chunks, offset, limit):  # type: ignore[no-untyped-def]
        passes.append(offset)
        return whole_file_pass(chunks, offset, limit)

    monkeypatch.setattr(local, "read_window_from", counted)
    return passes


@pytest.fixture
def an_hour_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store hashes an hour after the files were last changed (their ctime is now, and cannot be set back)."""
    monkeypatch.setattr(versions, "now_ns", lambda: time.time_ns() + HOUR_NS)


@pytest.mark.usefixtures("an_hour_later")
def test_a_window_of_an_unchanged_file_is_read_without_hashing_it(tmp_path: Path, full_passes: list[int]) -> None:
    data = bytes(range(256)) * 12_000  # 3 MB, several read chunks, more than is hashed with any read
    (tmp_path / "big.bin").write_bytes(data)
    store = LocalBackend(tmp_path)
    first = store.read_window("big.bin", 1_000_000, 20_000)
    second = store.read_window("big.bin", 2_500_000, 20_000)
    past_end = store.read_window("big.bin", len(data) + 5, 10)
    assert full_passes == [] and first.sha256 is None
    assert first.version == second.version == past_end.version and len(first.version) == 64
    assert second.data == data[2_500_000:2_520_000] and second.size == len(data)
    assert past_end.data == b"" and past_end.size == len(data)
    asked = store.read_window("big.bin", 0, 10, sha256=True)
    assert asked.sha256 == sha(data) and asked.version == first.version and full_passes == [0]
    assert store.read_window("big.bin", 5, 10).sha256 == sha(data) and full_passes == [0]  # kept


def test_an_in_place_change_that_keeps_size_and_mtime_is_seen(tmp_path: Path) -> None:
    """Attack: rewrite the bytes in place and put the modification time back; the old sha256 must not pass."""
    path = tmp_path / "ledger.txt"
    path.write_bytes(b"pay alice 100\n")
    mtime_ns = aged(path)
    store = LocalBackend(tmp_path)
    old = store.read_window("ledger.txt", 0, 100).sha256
    with path.open("r+b") as handle:
        handle.write(b"pay mallo 900\n")
    os.utime(path, ns=(mtime_ns, mtime_ns))
    assert path.stat().st_mtime_ns == mtime_ns and path.stat().st_size == 14
    assert store.read_window("ledger.txt", 0, 100).sha256 == sha(b"pay mallo 900\n")
    with pytest.raises(ToolFailure) as caught:
        store.write("ledger.txt", b"pay alice 200\n", create_parents=False, expected_sha256=old)
    assert caught.value.kind == "conflict" and path.read_bytes() == b"pay mallo 900\n"


@pytest.mark.usefixtures("an_hour_later")
def test_a_kept_digest_is_dropped_when_a_peer_replaces_the_file(tmp_path: Path, full_passes: list[int]) -> None:
    """An atomic replace by another writer makes a new inode: the kept digest no longer applies."""
    path = tmp_path / "a.txt"
    path.write_bytes(b"one")
    mtime_ns = aged(path)
    store = LocalBackend(tmp_path)
    read = store.read_window("a.txt", 0, 10).sha256
    assert store.read_window("a.txt", 0, 10).sha256 == read and len(full_passes) == 1
    peer = LocalBackend(tmp_path)  # another writer: atomic replace, a new inode
    peer.write("a.txt", b"two", create_parents=False, expected_sha256=None)
    os.utime(path, ns=(mtime_ns, mtime_ns))
    with pytest.raises(ToolFailure) as caught:
        store.write("a.txt", b"three", create_parents=False, expected_sha256=read)
    assert caught.value.kind == "conflict"
    assert store.write("a.txt", b"three", create_parents=False, expected_sha256=sha(b"two")) is False
    assert store.read_window("a.txt", 0, 10).data == b"three"


def test_a_file_modified_just_now_is_hashed_on_every_read(tmp_path: Path, full_passes: list[int]) -> None:
    """A write in the same timestamp tick could keep size and times: a fresh file's digest is not kept."""
    (tmp_path / "fresh.txt").write_bytes(b"x" * 5000)
    store = LocalBackend(tmp_path)
    store.read_window("fresh.txt", 0, 10)
    store.read_window("fresh.txt", 0, 10)
    assert len(full_passes) == 2
