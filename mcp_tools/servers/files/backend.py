"""What a files backend provides, plus the pure helpers both backends share."""

from __future__ import annotations

import base64
import binascii
import fnmatch
import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol

from mcp_tools.core.tooling import ToolFailure

StoredType = Literal["file", "folder", "link", "other"]
Progress = Callable[[int, int], None]
MAX_LISTED = 100_000
MAX_COPIED = 10_000  # entries one folder copy takes


@dataclass(frozen=True)
class StoredEntry:
    key: str
    type: StoredType
    size: int | None = None
    mtime: float | None = None
    tag: str | None = None  # what the backend says changes with the content (an S3 ETag, an inode and time)

    @property
    def sort_key(self) -> str:
        """Listing order and cursors: a folder sorts as 'name/', as S3 lists it, on both backends."""
        return self.key + "/" if self.type == "folder" else self.key

    @property
    def version(self) -> str:
        """What changes when the entry does (size and modification time): an approval binds to it."""
        return f"{self.type}:{self.size}:{self.mtime!r}:{self.tag}"

    @property
    def modified(self) -> str | None:
        if self.mtime is None:
            return None
        return datetime.fromtimestamp(self.mtime, UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Window:
    size: int
    sha256: str | None  # of the whole file, where it cost nothing that grows with the file, or was asked for
    data: bytes
    version: str = ""  # what expected_sha256 is checked against: the sha256, or the file's identity

    def __post_init__(self) -> None:
        if not self.version:
            assert self.sha256 is not None, "a window without a sha256 needs a version"
            object.__setattr__(self, "version", self.sha256)


READ_CHUNK = 1 << 20


def read_window_from(chunks: Iterable[bytes], offset: int, limit: int) -> Window:
    """One pass over a file's chunks: the sha256 of the whole file and the bytes of one window."""
    digest = hashlib.sha256()
    window = bytearray()
    position = 0
    for chunk in chunks:
        digest.update(chunk)
        start = max(offset - position, 0)
        end = min(offset + limit - position, len(chunk))
        if start < end:
            window += chunk[start:end]
        position += len(chunk)
    return Window(position, digest.hexdigest(), bytes(window))


class Backend(Protocol):
    """A backend: synchronous, called from a worker thread when `blocking` is true."""

    blocking: bool

    def stat(self, key: str) -> StoredEntry | None: ...

    def read_window(self, key: str, offset: int, limit: int, *, sha256: bool = False) -> Window:
        """`limit` bytes from `offset` with the file's version; its whole sha256 too when `sha256`
        (a backend may give it unasked where it costs nothing more)."""
        ...

    def current_version(self, key: str, expected: str) -> str | None:
        """The file's version in the form of `expected` (a version a read gave, or a sha256), None
        when there is no such file: `expected` itself exactly when the file is unchanged."""
        ...

    def read_all(self, key: str, max_bytes: int) -> bytes: ...

    def read_head(self, key: str, max_bytes: int) -> bytes:
        """The first `max_bytes` bytes of a file (all of a smaller one), reading no more than that."""
        ...

    def write(self, key: str, data: bytes, *, create_parents: bool, expected_sha256: str | None) -> bool:
        """Write atomically; returns True when the file was created. Checks expected_sha256 first."""
        ...

    def entries(self, folder: str, *, recursive: bool, after: str | None) -> Iterator[StoredEntry]:
        """Entries below `folder` ordered by `sort_key`, only those after the cursor `after`."""
        ...

    def mkdir(self, key: str, *, parents: bool) -> bool: ...

    def move(self, source: str, destination: str, *, overwrite: bool, create_parents: bool) -> bool: ...

    def copy(self, source: str, destination: str, *, overwrite: bool, create_parents: bool, max_bytes: int) -> int:
        """Copy a file (replacing a file only with overwrite) or a whole folder to a new path; each
        file is written atomically, and a local folder appears at once. Returns the files copied."""
        ...

    def delete(self, key: str, *, recursive: bool, progress: Progress | None = None) -> int:
        """Remove a file, or a folder when recursive; `progress(done, total)` may be called from a worker thread."""
        ...

    def survey_below(self, key: str, cap: int) -> tuple[int, str]:
        """How many entries a folder holds (at most `cap`) and a digest of their names and versions:
        an approval to delete the folder covers these contents only."""
        ...


def check_expected(key: str, current_sha256: str | None, expected_sha256: str | None) -> None:
    """The optimistic-concurrency rule shared by write and edit."""
    if expected_sha256 is None:
        return
    if current_sha256 is None:
        raise ToolFailure(
            "conflict",
            f"{key} does not exist, so it cannot match expected_sha256",
            "omit expected_sha256 to create it",
        )
    if current_sha256.lower() != expected_sha256.lower():
        raise ToolFailure(
            "conflict",
            f"{key} changed since you read it (sha256 is {current_sha256}); nothing was written",
            "read it again and redo your change",
        )


def check_copy_target(destination: str, target: StoredEntry | None, overwrite: bool) -> None:
    """What a copy may land on: a new path, or a file that overwrite may replace; never a folder."""
    if target is None:
        return
    if target.type == "folder":
        raise ToolFailure("conflict", f"{destination} is a folder", "give the full new path, e.g. 'folder/name.txt'")
    if not overwrite:
        raise ToolFailure("conflict", f"{destination} already exists", "pass overwrite: true to replace it")


def encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> str:
    try:
        key = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError):
        key = ""
    if not key or encode_cursor(key) != cursor:
        raise ToolFailure(
            "invalid_arguments", "cursor is not one this tool returned", "pass next_cursor unchanged, or omit it"
        )
    return key


@functools.lru_cache(maxsize=64)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """'*' and '?' stay inside a segment, '**/' spans folders; without '/', match the name only."""
    if "/" not in pattern:
        return re.compile(r"(?:.*/)?" + fnmatch.translate(pattern).replace(".*", "[^/]*"))
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        elif pattern[index] == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                parts.append(re.escape("["))
                index += 1
            else:
                body = pattern[index + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                parts.append(f"[{body}]")
                index = end + 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(parts) + r"\Z")


def matches(pattern: re.Pattern[str] | None, relative_key: str) -> bool:
    return pattern is None or pattern.match(relative_key) is not None


def join_key(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name
