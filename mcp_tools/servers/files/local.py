"""The local-folder backend: every path goes through `mcp_tools.util.sandbox`."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import secrets
import stat as stat_module
import threading
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files import versions
from mcp_tools.servers.files.backend import (
    MAX_COPIED,
    MAX_LISTED,
    READ_CHUNK,
    Progress,
    StoredEntry,
    StoredType,
    Window,
    check_copy_target,
    check_expected,
    join_key,
    read_window_from,
)
from mcp_tools.servers.files.versions import HASHED_FREELY, FileDigests, identity, settled, state
from mcp_tools.util.sandbox import TEMP_SUFFIX, KeyPolicy, Sandbox, escape_name, stat_version, sweep_temp_files


def _type_of(mode: int) -> StoredType:
    if stat_module.S_ISREG(mode):
        return "file"
    if stat_module.S_ISDIR(mode):
        return "folder"
    if stat_module.S_ISLNK(mode):
        return "link"
    return "other"


def _entry(key: str, info: os.stat_result) -> StoredEntry:
    kind = _type_of(info.st_mode)
    return StoredEntry(key, kind, info.st_size if kind == "file" else None, info.st_mtime, stat_version(info))


def _is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


class LocalBackend:
    """Files under one root folder; symlinks that lead out are refused, inside ones are listed as links."""

    blocking = False

    def __init__(self, root: Path, *, names: KeyPolicy = "strict") -> None:
        self.sandbox = Sandbox(root, policy=names, create=True)
        self._lock = threading.Lock()
        self._digests = FileDigests()

    def sweep_temp_files(self) -> int:
        """Temp files of writes a crash left behind (older than a few minutes)."""
        return sweep_temp_files(self.sandbox.root)

    def stat(self, key: str) -> StoredEntry | None:
        info = self.sandbox.stat(key)
        return None if info is None else _entry(key, info)

    def read_window(self, key: str, offset: int, limit: int, *, sha256: bool = False) -> Window:
        """The window and the file's version (`versions`): its identity once settled, else its sha256.

        The whole file is read only to hash it: when asked (`sha256`), when the file changed in
        the last seconds, or when the window is all of it or it is at most `HASHED_FREELY` bytes
        and no digest is kept.
        """
        with self.sandbox.open_file(key) as file:
            taken_at = versions.now_ns()
            before = os.fstat(file.fileno())
            digest = self._digests.get(before)
            whole = offset == 0 and limit >= before.st_size  # hashing it costs no more than reading it
            hash_now = digest is None and (sha256 or whole or before.st_size <= HASHED_FREELY)
            if settled(before, taken_at) and not hash_now:
                data = os.pread(file.fileno(), limit, offset) if limit and offset < before.st_size else b""
                if state(os.fstat(file.fileno())) == state(before):
                    return Window(before.st_size, digest, data, identity(before))
            window = read_window_from(iter(lambda: file.read(READ_CHUNK), b""), offset, limit)
            after = os.fstat(file.fileno())
            if state(after) == state(before) and after.st_size == window.size:
                self._digests.keep(after, window.version, taken_at)
                if settled(after, taken_at):
                    return Window(window.size, window.sha256, window.data, identity(after))
            return window

    def read_all(self, key: str, max_bytes: int) -> bytes:
        return self.sandbox.read_bytes(key, max_bytes=max_bytes)

    def read_head(self, key: str, max_bytes: int) -> bytes:
        with self.sandbox.open_file(key) as file:
            return file.read(max_bytes)

    def current_version(self, key: str, expected: str) -> str | None:
        """`expected` when it is this file's identity; otherwise its sha256 (a pass over it unless kept)."""
        try:
            with self.sandbox.open_file(key) as file:
                info = os.fstat(file.fileno())
                if identity(info) == expected.lower():
                    return expected
        except ToolFailure as failure:
            if failure.kind == "not_found":
                return None
            raise
        try:
            return self.read_window(key, 0, 0, sha256=True).sha256
        except ToolFailure as failure:
            if failure.kind == "not_found":
                return None
            raise

    def write(self, key: str, data: bytes, *, create_parents: bool, expected_sha256: str | None) -> bool:
        with self._lock:
            if expected_sha256 is not None:
                check_expected(key, self.current_version(key, expected_sha256), expected_sha256)
            existed = self.sandbox.stat(key) is not None
            self.sandbox.write_bytes(key, data, create_parents=create_parents)
            return not existed

    def entries(self, folder: str, *, recursive: bool, after: str | None) -> Iterator[StoredEntry]:
        found: list[StoredEntry] = []
        with self.sandbox.open_dir(folder) as dir_fd:
            if not recursive:
                with os.scandir(dir_fd) as scan:
                    for item in scan:
                        if not _is_temp(item.name):
                            found.append(
                                _entry(join_key(folder, escape_name(item.name)), item.stat(follow_symlinks=False))
                            )
            else:
                for relative, folders, files, walk_fd in os.fwalk(dir_fd=dir_fd, follow_symlinks=False):
                    base = folder if relative == "." else join_key(folder, escape_name(relative.removeprefix("./")))
                    for name in folders + files:
                        if _is_temp(name):
                            continue
                        try:
                            info = os.stat(name, dir_fd=walk_fd, follow_symlinks=False)
                        except FileNotFoundError:
                            continue
                        found.append(_entry(join_key(base, escape_name(name)), info))
                    if len(found) > MAX_LISTED:
                        raise ToolFailure(
                            "too_large",
                            f"{folder or 'the root'} holds more than {MAX_LISTED} entries",
                            "list a smaller folder, or without recursive",
                        )
        found.sort(key=attrgetter("sort_key"))
        return iter(found if after is None else [entry for entry in found if entry.sort_key > after])

    def mkdir(self, key: str, *, parents: bool) -> bool:
        return self.sandbox.mkdir(key, parents=parents)

    def move(self, source: str, destination: str, *, overwrite: bool, create_parents: bool) -> bool:
        with self._lock:
            if self.sandbox.stat(source) is None:
                raise ToolFailure("not_found", f"{source} does not exist")
            target = self.sandbox.stat(destination)
            if target is not None and stat_module.S_ISDIR(target.st_mode):
                raise ToolFailure(
                    "conflict",
                    f"{destination} is a folder",
                    "give the full new path, e.g. destination: 'folder/name.txt'",
                )
            parent = destination.rpartition("/")[0]
            if create_parents and parent:
                self.sandbox.mkdir(parent, parents=True)
            self.sandbox.rename(source, destination, overwrite=overwrite)
            return target is not None

    def copy(self, source: str, destination: str, *, overwrite: bool, create_parents: bool, max_bytes: int) -> int:
        with self._lock:
            info = self.sandbox.stat(source)
            if info is None:
                raise ToolFailure("not_found", f"{source} does not exist")
            target = self.sandbox.stat(destination)
            check_copy_target(destination, None if target is None else _entry(destination, target), overwrite)
            parent, _, name = destination.rpartition("/")
            if create_parents and parent:
                self.sandbox.mkdir(parent, parents=True)
            if stat_module.S_ISREG(info.st_mode):
                data = self.sandbox.read_bytes(source, max_bytes=max_bytes)
                self.sandbox.write_bytes(destination, data, field="destination")
                return 1
            if not stat_module.S_ISDIR(info.st_mode):
                raise ToolFailure("invalid_arguments", f"{source} is not a file or a folder")
            if target is not None:
                raise ToolFailure("conflict", f"{destination} already exists", "copy the folder to a new path")
            stem = name.encode("utf-8", "surrogatepass")[:100].decode("utf-8", "ignore")
            temp = join_key(parent, f".{stem}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
            try:
                copied = self._copy_tree(source, temp, max_bytes)
                self.sandbox.rename(temp, destination)
            except BaseException:
                with contextlib.suppress(ToolFailure, OSError):
                    self.sandbox.rmtree(temp)
                raise
            return copied

    def _copy_tree(self, source: str, temp: str, max_bytes: int) -> int:
        """The folder's files and folders into `temp`, a hidden folder only renamed into place when complete."""
        listed = list(itertools.islice(self.entries(source, recursive=True, after=None), MAX_COPIED + 1))
        if len(listed) > MAX_COPIED:
            raise ToolFailure("too_large", f"{source} holds more than {MAX_COPIED} entries", "copy smaller folders")
        self.sandbox.mkdir(temp)
        copied = 0
        for entry in listed:  # in key order: a folder comes before what it holds
            inside = join_key(temp, entry.key[len(source) + 1 :])
            if entry.type == "folder":
                self.sandbox.mkdir(inside)
            elif entry.type == "file":
                self.sandbox.write_bytes(inside, self.sandbox.read_bytes(entry.key, max_bytes=max_bytes))
                copied += 1
        return copied

    def _count_below(self, key: str, cap: int) -> int:
        count = 0
        with self.sandbox.open_dir(key) as dir_fd:
            for _, folders, files, _ in os.fwalk(dir_fd=dir_fd, follow_symlinks=False):
                count += len(folders) + len(files)
                if count >= cap:
                    return cap
        return count

    def survey_below(self, key: str, cap: int) -> tuple[int, str]:
        digest, count = hashlib.sha256(), 0
        with self.sandbox.open_dir(key) as dir_fd:
            for root, folders, files, root_fd in os.fwalk(dir_fd=dir_fd, follow_symlinks=False):
                folders.sort()  # a walk in the same order each time, so the digest is the contents'
                for name in sorted(folders + files):
                    if count >= cap:
                        return cap, digest.hexdigest()
                    info = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
                    digest.update(f"{root}/{name}\0{stat_version(info)}\n".encode())
                    count += 1
        return count, digest.hexdigest()

    def delete(self, key: str, *, recursive: bool, progress: Progress | None = None) -> int:
        with self._lock:
            info = self.sandbox.stat(key)
            if info is None:
                raise ToolFailure("not_found", f"{key} does not exist")
            if not stat_module.S_ISDIR(info.st_mode):
                self.sandbox.unlink(key)
                return 1
            if not recursive:
                raise ToolFailure(
                    "invalid_arguments",
                    f"{key} is a folder",
                    "pass recursive: true to delete it and everything in it",
                )
            removed = self._count_below(key, MAX_LISTED) + 1
            self.sandbox.rmtree(key)
            return removed
