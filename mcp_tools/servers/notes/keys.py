"""What the notes service and renaming share: a note's key from a path, whether a link's
`#heading` or `#^block` exists in its target, and the diff a dry run shows."""

from __future__ import annotations

import difflib
import posixpath
import re
from typing import Protocol

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.notes.links import NOTE_SUFFIX
from mcp_tools.servers.notes.markdown import ParsedNote, name_key, parse_note, plain_title

__all__ = ["MAX_DIFF_CHARS", "NOTE_SUFFIX", "FragmentChecker", "heading_key", "note_key", "unified_diff"]

MAX_DIFF_CHARS = 20_000


class ReadsNotes(Protocol):
    def read_text(self, key: str) -> tuple[str, str]: ...


def note_key(path: str) -> str:
    """A note path as given, with `.md` added when missing; folders starting with '.' are not notes."""
    key = path
    if any(part in (".", "..") for part in path.split("/")):
        raise ToolFailure(
            "invalid_arguments", f"path {path!r} has a '.' or '..' segment; give the path from the vault's root"
        )
    if any(part != part.rstrip() for part in path.split("/")):
        # `x.md ` would be written as `x.md .md`, and stripping it would write another note than
        # the one named; a name ending in a space also cannot be synced to Windows or shown plainly
        raise ToolFailure(
            "invalid_arguments",
            f"path {path!r} has a name ending in a space; give the name without spaces at its end",
        )
    if not key.lower().endswith(NOTE_SUFFIX):
        key += NOTE_SUFFIX
    if any(part.startswith(".") for part in key.split("/")[:-1]) or key.split("/")[-1].startswith("."):
        raise ToolFailure(
            "invalid_arguments",
            f"path {path!r} is inside a hidden folder or is a hidden file; notes live outside '.' folders",
        )
    return key


class FragmentChecker:
    """Whether the `#heading` or `#^block` a link names exists in its target; parses each target once."""

    def __init__(self, service: ReadsNotes, known: dict[str, ParsedNote] | None = None) -> None:
        self.service = service
        self.parsed: dict[str, ParsedNote | None] = dict(known or {})

    def problem(self, resolved: str | None, fragment: str) -> str | None:
        if resolved is None or not fragment.startswith("#") or len(fragment) < 2:
            return None
        parsed = self._parse(resolved)
        if parsed is None:
            return None
        if fragment.startswith("#^"):
            block = fragment[2:]
            return None if block in parsed.block_ids else f"{resolved} has no block ^{block}"
        wanted = heading_key(fragment[1:].split("#")[-1])
        if any(heading_key(h.text) == wanted for h in parsed.headings):
            return None
        return f"{resolved} has no heading {fragment[1:]!r}"

    def _parse(self, key: str) -> ParsedNote | None:
        if key not in self.parsed:
            try:
                text, _ = self.service.read_text(key)
            except ToolFailure:
                self.parsed[key] = None
            else:
                self.parsed[key] = parse_note(text, posixpath.basename(key)[: -len(NOTE_SUFFIX)])
        return self.parsed[key]


def heading_key(text: str) -> str:
    """Headings as links name them: Obsidian drops the characters a link cannot hold."""
    return name_key(" ".join(re.sub(r"[#|^:%\[\]]", " ", plain_title(text)).split()))


def unified_diff(path: str, before: str, after: str) -> str:
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )
    return diff if len(diff) <= MAX_DIFF_CHARS else diff[:MAX_DIFF_CHARS] + "\n… (diff truncated)\n"
