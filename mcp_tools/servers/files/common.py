"""What the files tools share: paths under the store's name rule, the preconditions, text sniffing."""

from __future__ import annotations

import hashlib
import mimetypes

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.files.backend import StoredEntry, check_expected
from mcp_tools.servers.files.models import Entry
from mcp_tools.servers.files.service import FilesService, _fits_unicode
from mcp_tools.util.sandbox import check_key

TEXT_SNIFF_BYTES = 8192


# `key_arg(service, value, field="path", *, allow_empty=False)`: a path argument under the store's name rule
key_arg = FilesService.check_path


def source_and_destination(
    service: FilesService, source_path: str, destination_path: str, verb: str
) -> tuple[str, str]:
    """Source and destination keys of a move or a copy (`verb`) that can make sense at all."""
    source = key_arg(service, source_path, "source")
    destination = key_arg(service, destination_path, "destination")
    if source == destination:
        raise ToolFailure("invalid_arguments", "source and destination are the same path")
    if destination.startswith(source + "/"):
        raise ToolFailure("invalid_arguments", f"cannot {verb} a folder into itself")
    return source, destination


def names_note(service: FilesService, entries: list[StoredEntry]) -> str | None:
    """What to do about listed names that cannot be passed back as paths under the store's rule."""
    unusable = fixable = 0
    for entry in entries:
        try:
            check_key(entry.key, service.names)
        except ToolFailure:
            unusable += 1
            fixable += service.names == "strict" and _fits_unicode(entry.key)
    if not unusable:
        return None
    if fixable == unusable:
        return (
            f"{unusable} of these names have characters outside A-Z a-z 0-9 _ - . / (spaces, accents, other "
            "scripts), so they cannot be read, moved or deleted here; the person can allow them with "
            'names = "unicode" in the [files] section of the config'
        )
    return (
        f"{unusable} of these names hold control, bidi or invisible characters (or a look-alike of '/' or '.'), "
        "so they cannot be read, moved or deleted here; the person can rename them outside this tool"
        + ('; names = "unicode" in [files] would allow the others' if fixable else "")
    )


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def as_entry(stored: StoredEntry) -> Entry:
    return Entry(path=stored.key, type=stored.type, size=stored.size, modified=stored.modified)


# -- preconditions: checked before the person is asked, so nobody approves a call bound to fail


async def existing_entry(service: FilesService, key: str, field: str = "path") -> StoredEntry:
    target = await service.run(service.store.stat, key)
    if target is None:
        raise ToolFailure("not_found", f"{key} does not exist", f"check {field} with files.list")
    return target


async def check_unchanged(
    service: FilesService, key: str, expected_sha256: str | None, target: StoredEntry | None
) -> None:
    """expected_sha256 (a version or a sha256) against the file now; what is no file the store refuses."""
    if expected_sha256 is None and (target is None or target.type == "file"):
        return
    current = None if target is None else await service.version_now(key, expected_sha256 or "")
    check_expected(key, current, expected_sha256)


def refuse_folder(key: str, target: StoredEntry | None) -> None:
    """A write or an import onto a folder could never run: nobody is asked to replace one."""
    if target is not None and target.type == "folder":
        raise ToolFailure(
            "conflict",
            f"{key} is a folder; it cannot be replaced by a file",
            "give a file path, e.g. 'folder/name.txt'",
        )


def decode_text(window: bytes, truncated: bool) -> str | None:
    """UTF-8 text, or None for binary; a window may end inside a character when truncated."""
    if b"\x00" in window[:TEXT_SNIFF_BYTES]:
        return None
    for trim in range(4 if truncated else 1):
        try:
            return window[: len(window) - trim].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def mime_type_of(key: str, is_text: bool) -> str:
    guessed = mimetypes.guess_type(key, strict=False)[0]
    if guessed:
        return guessed
    return "text/plain" if is_text else "application/octet-stream"
