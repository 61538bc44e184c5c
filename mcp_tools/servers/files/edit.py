"""Exact search-and-replace edits: unique matches, literal text, line endings preserved."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_tools.tooling import ToolFailure

MAX_DIFF_CHARS = 64 * 1024
MAX_LOCATIONS_SHOWN = 10


@dataclass(frozen=True)
class EditRequest:
    old_string: str
    new_string: str
    replace_all: bool = False


def _to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _line_numbers(text: str, needle: str) -> list[int]:
    """1-based line numbers where `needle` starts (non-overlapping, like str.replace)."""
    lines: list[int] = []
    start = 0
    line = 1
    scanned = 0
    while len(lines) < MAX_LOCATIONS_SHOWN:
        found = text.find(needle, start)
        if found < 0:
            break
        line += text.count("\n", scanned, found)
        scanned = found
        lines.append(line)
        start = found + max(len(needle), 1)
    return lines


def _lines_phrase(lines: list[int], total: int) -> str:
    distinct = list(dict.fromkeys(lines))
    shown = ", ".join(str(number) for number in distinct)
    more = " and further" if total > len(lines) else ""
    return f"line{'s' if len(distinct) > 1 else ''} {shown}{more}"


def _match_for_file(text: str, old: str, new: str) -> tuple[str, str]:
    """Adapt LF-written strings to a CRLF file, so a model never has to type '\\r'."""
    if old in text or "\r\n" not in text or "\n" not in old:
        return old, new
    crlf_old = _to_crlf(old)
    if crlf_old in text:
        return crlf_old, _to_crlf(new)
    return old, new


def _not_found_hint(text: str, old: str) -> str:
    stripped = old.strip()
    if stripped and stripped != old and stripped in text:
        line = _line_numbers(text, stripped)[0]
        return f"the text appears at line {line} with different leading/trailing whitespace; read the file again"
    first_line = next((part.strip() for part in old.splitlines() if part.strip()), "")
    if first_line and first_line in text:
        line = _line_numbers(text, first_line)[0]
        return f"its first line appears at line {line}, but the rest differs; read again and copy exactly"
    return "read the file again and copy the text exactly, including indentation"


def apply_edits(text: str, edits: Sequence[EditRequest]) -> tuple[str, int]:
    """Apply edits in order; returns the new text and the number of replacements.

    Every failure names the edit (`edits[i].old_string`) and, for several matches, where.
    Replacement is literal: `$1`, `\\1` and backslashes are inserted as written.
    """
    replacements = 0
    for index, edit in enumerate(edits):
        field = f"edits[{index}]"
        if edit.old_string == "":
            raise ToolFailure(
                "invalid_arguments",
                f"{field}.old_string must not be empty",
                "to create or replace a whole file, use files.write",
            )
        if edit.old_string == edit.new_string:
            raise ToolFailure("invalid_arguments", f"{field}: old_string and new_string are identical")
        old, new = _match_for_file(text, edit.old_string, edit.new_string)
        count = text.count(old)
        if count == 0:
            earlier = " (after the earlier edits were applied)" if index else ""
            raise ToolFailure(
                "not_found",
                f"{field}.old_string was not found in the file{earlier}",
                _not_found_hint(text, old),
            )
        if count > 1 and not edit.replace_all:
            where = _lines_phrase(_line_numbers(text, old), count)
            raise ToolFailure(
                "invalid_arguments",
                f"{field}.old_string matches {count} times ({where}); it must match exactly once",
                f"add surrounding lines to {field}.old_string to make it unique, or set {field}.replace_all: true",
            )
        text = text.replace(old, new)
        replacements += count
    return text, replacements


_HUNK_HEADER = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@")
DIFF_CONTEXT = 3


def _shift_header(line: str, offset: int) -> str:
    match = _HUNK_HEADER.match(line)
    if match is None or offset == 0:
        return line
    old_start, old_length, new_start, new_length = match.groups()
    return f"@@ -{int(old_start) + offset}{old_length} +{int(new_start) + offset}{new_length} @@\n"


def _display_lines(text: str) -> list[str]:
    lines = [line.rstrip("\r\n") + "\n" for line in text.splitlines(keepends=True)]
    if text and not text.endswith(("\n", "\r")):
        lines[-1] += "\\ No newline at end of file\n"
    return lines


def unified_diff(before: str, after: str, path: str) -> str:
    """A unified diff for people and models: line endings shown as plain newlines, size capped.

    Only the span between the first and last changed line is compared, so a one-line edit in
    a large file costs little.
    """
    old_lines, new_lines = _display_lines(before), _display_lines(after)
    prefix = 0
    for old_line, new_line in zip(old_lines, new_lines, strict=False):
        if old_line != new_line:
            break
        prefix += 1
    suffix = 0
    limit = min(len(old_lines), len(new_lines)) - prefix
    while suffix < limit and old_lines[-1 - suffix] == new_lines[-1 - suffix]:
        suffix += 1
    start = max(prefix - DIFF_CONTEXT, 0)
    keep = max(suffix - DIFF_CONTEXT, 0)
    old_window = old_lines[start : len(old_lines) - keep]
    new_window = new_lines[start : len(new_lines) - keep]
    pieces = difflib.unified_diff(old_window, new_window, f"a/{path}", f"b/{path}", n=DIFF_CONTEXT)
    diff = "".join(_shift_header(line, start) if line.startswith("@@") else line for line in pieces)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + f"\n... diff truncated at {MAX_DIFF_CHARS} characters\n"
    return diff
