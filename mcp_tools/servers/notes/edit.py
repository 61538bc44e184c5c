"""notes.edit: change a note in place without resending it.

The change is spliced into the note's text, so the front matter, the line endings (a CRLF note
stays CRLF) and every byte outside the change stay as they were. Headings are found as
`notes.read` finds them (ATX, closed ATX and setext; never inside fenced code), by their text or
by a path "Parent > Child" when the text alone is ambiguous. `NotesService` takes the methods of
`Editing`; what they use of the service is the `EditHost` protocol.
"""

from __future__ import annotations

import posixpath
import threading
from typing import Protocol

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.keys import NOTE_SUFFIX, unified_diff
from mcp_tools.servers.notes.markdown import Heading, name_key, parse_note, split_frontmatter

MAX_DIFF_CHARS = 6000


class EditHost(Protocol):
    """What editing uses of the notes service."""

    @property
    def write_lock(self) -> threading.RLock: ...

    def existing_key(self, path: str) -> str: ...
    def read_text(self, key: str) -> tuple[str, str]: ...
    def _check_expected(self, key: str, expected: str | None, current: str | None) -> None: ...
    def _write(self, key: str, text: str) -> str: ...


def line_ending(text: str) -> str:
    """The note's own line ending: that of its first line ("\\n" for a note of one line)."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def as_block(content: str, eol: str) -> str:
    """`content` as whole lines in the note's line ending."""
    normal = content.replace("\r\n", "\n").replace("\r", "\n")
    if not normal.endswith("\n"):
        normal += "\n"
    return normal.replace("\n", eol)


def _line_after(text: str, offset: int) -> int:
    """The start of the line after the one holding `offset` (the end of the text if there is none)."""
    newline = text.find("\n", offset)
    return len(text) if newline < 0 else newline + 1


def _section(text: str, headings: list[Heading], wanted: str) -> tuple[Heading, int, int]:
    """The heading `wanted` names (text, or a path 'A > B'), where its own text ends (its first
    subheading) and where its section ends (the next heading of the same or a higher level)."""
    parts = [name_key(part.strip().lstrip("#").strip()) for part in wanted.split(">")]
    matches: list[int] = []
    for index, heading in enumerate(headings):
        if name_key(heading.text) != parts[-1]:
            continue
        ancestors: list[str] = []
        level = heading.level
        for earlier in reversed(headings[:index]):
            if earlier.level < level:
                ancestors.insert(0, name_key(earlier.text))
                level = earlier.level
        if len(parts) == 1 or ancestors[-(len(parts) - 1) :] == parts[:-1]:
            matches.append(index)
    if not matches:
        known = ", ".join(repr(h.text) for h in headings[:20]) or "none"
        raise ToolFailure("not_found", f"the note has no heading {wanted!r}", f"its headings: {known}")
    if len(matches) > 1:
        raise ToolFailure(
            "conflict",
            f"{len(matches)} headings are called {wanted!r}; nothing was changed",
            "name it with its parents, e.g. 'Project > Tasks'",
        )
    heading = headings[matches[0]]
    later = headings[matches[0] + 1 :]
    own_end = later[0].start if later else len(text)
    end = next((after.start for after in later if after.level <= heading.level), len(text))
    return heading, own_end, end


def _content_end(text: str, start: int, end: int) -> int:
    """The end of the last line in text[start:end] that is not blank (blank lines before the next
    heading stay where they are)."""
    stripped = text[start:end].rstrip(" \t\r\n")
    if not stripped:
        return start
    return min(_line_after(text, start + len(stripped)), end)


def apply_edit(text: str, stem: str, args: m.EditArgs) -> str:
    """The note's new text; raises ToolFailure when the edit cannot apply as asked."""
    eol = line_ending(text)
    block = as_block(args.content, eol)
    _, body_start = split_frontmatter(text)
    if args.action == "append":
        joint = "" if not text or text.endswith("\n") else eol
        return text + joint + block
    if args.action == "prepend":
        if body_start and not text[:body_start].endswith("\n"):  # front matter with no line after it
            return text + eol + block
        rest = text[body_start:]
        gap = eol if rest.strip(" \t") and not rest.startswith(("\n", "\r\n")) else ""  # its own paragraph
        return text[:body_start] + block + gap + rest
    if args.action == "replace":
        return _replace_passage(text, body_start, args.old or "", args.content, eol)
    if not args.heading:
        raise ToolFailure("invalid_arguments", f"{args.action} needs heading", "e.g. heading: 'Tasks'")
    heading, own_end, end = _section(text, parse_note(text, stem).headings, args.heading)
    below = _line_after(text, heading.line_end)
    if args.action == "insert":  # after the heading's own text, before its first subheading
        at = max(_content_end(text, below, own_end), below)
        joint = "" if at == 0 or text[at - 1] == "\n" else eol
        return text[:at] + joint + block + text[at:]
    # replace_section: the heading line stays, its body (subsections too) becomes `content`
    trailing = text[_content_end(text, below, end) : end]  # blank lines before the next heading stay
    joint = "" if text[below - 1 : below] == "\n" else eol
    return text[:below] + joint + block + trailing + text[end:]


def _replace_passage(text: str, body_start: int, old: str, new: str, eol: str) -> str:
    if not old:
        raise ToolFailure("invalid_arguments", "replace needs old: the exact passage to change")
    candidates = [old]
    if eol == "\r\n" and "\n" in old and "\r\n" not in old:
        candidates.append(old.replace("\n", "\r\n"))  # written with \n, as the note reads
    for passage in candidates:
        count = text.count(passage)
        if count > 1:
            raise ToolFailure(
                "conflict",
                f"old occurs {count} times in the note; nothing was changed",
                "include more of the text around it so that it occurs once",
            )
        if count == 1:
            at = text.index(passage)
            if at < body_start:
                raise ToolFailure(
                    "invalid_arguments",
                    "old is in the front matter",
                    "change front matter with notes.update_frontmatter",
                )
            replacement = new.replace("\r\n", "\n").replace("\n", eol) if passage is not old else new
            return text[:at] + replacement + text[at + len(passage) :]
    raise ToolFailure("not_found", "old does not occur in the note", "read the note and copy the passage exactly")


class Editing:
    """The notes.edit methods of `NotesService`."""

    def _planned_edit(self: EditHost, args: m.EditArgs) -> tuple[str, str, str, str]:
        key = self.existing_key(args.path)
        text, digest = self.read_text(key)
        self._check_expected(key, args.expected_sha256, digest)
        stem = posixpath.basename(key)[: -len(NOTE_SUFFIX)]
        return key, text, digest, apply_edit(text, stem, args)

    def precheck_edit(self, args: m.EditArgs) -> None:
        """The note exists, is as it was read, and the edit applies: checked before anyone is asked."""
        Editing._planned_edit(self, args)  # type: ignore[arg-type]

    def edit(self, args: m.EditArgs) -> m.EditOutput:
        host: EditHost = self  # type: ignore[assignment]
        with host.write_lock:
            key, text, digest, new_text = Editing._planned_edit(host, args)
            new_digest = host._write(key, new_text) if new_text != text else digest
        diff = unified_diff(key, text, new_text)
        if len(diff) > MAX_DIFF_CHARS:
            diff = diff[:MAX_DIFF_CHARS] + f"\n[diff cut: {len(diff) - MAX_DIFF_CHARS:,} more characters]\n"
        return m.EditOutput(path=key, sha256=new_digest, changed=new_text != text, diff=diff)
