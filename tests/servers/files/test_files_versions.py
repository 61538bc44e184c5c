"""A file's version costs nothing that grows with the file, and a write with an old version still conflicts."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files import local, versions
from mcp_tools.servers.files.local import LocalBackend

HOUR_NS = 3600 * 1_000_000_000
BIG = versions.HASHED_FREELY + 4096  # more than a read hashes unasked


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def full_passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    passes: list[int] = []
    whole_file_pass = local.read_window_from

    def counted(chunks, offset, limit):  # type: ignore[no-untyped-def]
        passes.append(offset)
        return whole_file_pass(chunks, offset, limit)

    monkeypatch.setattr(local, "read_window_from", counted)
    return passes


@pytest.fixture
def an_hour_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Versions are taken an hour after the files were last changed: their identity stands."""
    monkeypatch.setattr(versions, "now_ns", lambda: time.time_ns() + HOUR_NS)


def refused(store: LocalBackend, key: str, data: bytes, expected: str) -> ToolFailure:
    with pytest.raises(ToolFailure) as caught:
        store.write(key, data, create_parents=False, expected_sha256=expected)
    assert caught.value.kind == "conflict"
    return caught.value


def next_tick(path: Path, ctime_ns: int, rewrite: bytes) -> None:
    """Rewrite in place until the change time moves on (a same-tick rewrite is the case below)."""
    while path.stat().st_ctime_ns == ctime_ns:
        with path.open("r+b") as handle:
            handle.write(rewrite)


@pytest.mark.usefixtures("an_hour_later")
def test_a_settled_large_file_is_versioned_by_its_identity_without_a_pass(
    tmp_path: Path, full_passes: list[int]
) -> None:
    data = b"a" * BIG
    (tmp_path / "big.bin").write_bytes(data)
    store = LocalBackend(tmp_path)
    window = store.read_window("big.bin", BIG // 2, 100)
    assert full_passes == [] and window.sha256 is None and window.version != sha(data)
    whole = store.read_window("big.bin", 0, BIG)
    assert whole.sha256 == sha(data) and whole.version == window.version and full_passes == [0]
    assert store.write("big.bin", b"new", create_parents=False, expected_sha256=window.version) is False
    assert (tmp_path / "big.bin").read_bytes() == b"new" and full_passes == [0]


@pytest.mark.usefixtures("an_hour_later")
def test_an_in_place_rewrite_of_the_same_size_with_the_mtime_put_back_conflicts(tmp_path: Path) -> None:
    path = tmp_path / "ledger.bin"
    path.write_bytes(b"pay alice 100\n" + b"." * BIG)
    before = path.stat()
    store = LocalBackend(tmp_path)
    version = store.read_window("ledger.bin", 0, 14).version
    next_tick(path, before.st_ctime_ns, b"pay mallo 900\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    refused(store, "ledger.bin", b"pay alice 200\n", version)
    assert path.read_bytes().startswith(b"pay mallo 900\n")


def test_a_file_changed_within_the_margin_is_versioned_by_its_content(tmp_path: Path) -> None:
    """A rewrite in the same timestamp tick could keep every field: such a file's version is its sha256."""
    path = tmp_path / "fresh.bin"
    path.write_bytes(b"one" + b"." * BIG)
    store = LocalBackend(tmp_path)
    window = store.read_window("fresh.bin", 0, 3)
    assert window.version == window.sha256 == sha(path.read_bytes())
    info = path.stat()
    with path.open("r+b") as handle:  # the same size, and likely the same tick: only the content tells
        handle.write(b"two")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    refused(store, "fresh.bin", b"three", window.version)


@pytest.mark.usefixtures("an_hour_later")
def test_an_atomic_replace_conflicts_even_when_the_inode_is_reused(tmp_path: Path) -> None:
    path = tmp_path / "a.bin"
    path.write_bytes(b"one" + b"." * BIG)
    before = path.stat()
    store = LocalBackend(tmp_path)
    version = store.read_window("a.bin", 0, 3).version
    for _ in range(20):  # unlink and create: file systems commonly hand the freed inode out again
        path.unlink()
        path.write_bytes(b"two" + b"." * BIG)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        if path.stat().st_ino == before.st_ino and path.stat().st_ctime_ns != before.st_ctime_ns:
            break
    refused(store, "a.bin", b"three", version)
    peer = LocalBackend(tmp_path)
    peer.write("a.bin", b"four" + b"." * BIG, create_parents=False, expected_sha256=None)  # temp file and rename
    refused(store, "a.bin", b"five", version)


def test_identities_differ_in_every_field() -> None:
    base = {"st_dev": 1, "st_ino": 2, "st_size": 3, "st_mtime_ns": 4, "st_ctime_ns": 5}
    seen = {versions.identity(SimpleNamespace(**base))}  # type: ignore[arg-type]
    for name in base:
        seen.add(versions.identity(SimpleNamespace(**{**base, name: base[name] + 1})))  # type: ignore[arg-type]
    assert len(seen) == len(base) + 1


@pytest.mark.usefixtures("an_hour_later")
def test_a_sha256_still_checks_the_content_and_a_missing_file_conflicts(tmp_path: Path) -> None:
    path = tmp_path / "b.bin"
    data = b"b" * BIG
    path.write_bytes(data)
    store = LocalBackend(tmp_path)
    assert store.current_version("b.bin", sha(data)) == sha(data)
    assert store.write("b.bin", b"new", create_parents=False, expected_sha256=sha(data).upper()) is False
    refused(store, "b.bin", b"newer", sha(data))
    failure = refused(store, "gone.bin", b"x", sha(data))
    assert "does not exist" in failure.message
