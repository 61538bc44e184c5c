"""Exact search-and-replace edits: unique matches, literal text, line endings preserved."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_tools.core.tooling import ToolFailure

MAX_DIFF_CHARS = 30_000  # a diff is in the text and the structured content: both fit the result budget
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
_PROBE = 4096


def _shift_header(line: str, offset: int) -> str:
    match = _HUNK_HEADER.match(line)
    if match is None or offset == 0:
        return line
    old_start, old_length, new_start, new_length = match.groups()
    return f"@@ -{int(old_start) + offset}{old_length} +{int(new_start) + offset}{new_length} @@\n"


def _display_lines(text: str) -> list[str]:
    """Lines split on '\n' only, shown without '\r'; a missing final newline is marked as diff does."""
    parts = text.split("\n")
    lines = [part.removesuffix("\r") + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1].removesuffix("\r") + "\n\\ No newline at end of file\n")
    return lines


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    start = 0
    while start < limit and a[start : start + _PROBE] == b[start : start + _PROBE]:
        start += _PROBE
    if start >= limit:
        return limit
    low, high = start, min(start + _PROBE, limit)
    while low < high:  # a[start:low] is common; find the first difference by bisection
        middle = (low + high + 1) // 2
        if a[start:middle] == b[start:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    size = 0
    while size < limit:
        step = min(_PROBE, limit - size)
        if a[len(a) - size - step : len(a) - size] != b[len(b) - size - step : len(b) - size]:
            break
        size += step
    else:
        return limit
    low, high = size, size + step
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle :] == b[len(b) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low


def _changed_window(before: str, after: str) -> tuple[int, int, int]:
    """Start offset (a line start) and the two end offsets of the changed span plus context."""
    prefix = _common_prefix(before, after)
    suffix = _common_suffix(before, after, min(len(before), len(after)) - prefix)
    start = before.rfind("\n", 0, prefix) + 1
    for _ in range(DIFF_CONTEXT):
        if start == 0:
            break
        start = before.rfind("\n", 0, start - 1) + 1
    end = len(before) - suffix
    for _ in range(DIFF_CONTEXT + 1):
        if end >= len(before):
            break
        newline = before.find("\n", end)
        end = len(before) if newline < 0 else newline + 1
    return start, end, end + len(after) - len(before)


def unified_diff(before: str, after: str, path: str) -> str:
    """A unified diff for people and models: line endings shown as plain newlines, size capped.

    Only the changed span and its context are compared, so a one-line edit in a large file
    costs little.
    """
    start, before_end, after_end = _changed_window(before, after)
    offset = before.count("\n", 0, start)
    old_window = _display_lines(before[start:before_end])
    new_window = _display_lines(after[start:after_end])
    pieces = difflib.unified_diff(old_window, new_window, f"a/{path}", f"b/{path}", n=DIFF_CONTEXT)
    diff = "".join(_shift_header(line, offset) if line.startswith("@@") else line for line in pieces)
    if len(diff) > MAX_DIFF_CHARS:
        rest = len(diff) - MAX_DIFF_CHARS
        diff = (
            diff[:MAX_DIFF_CHARS]
            + f"\n... diff cut at {MAX_DIFF_CHARS:,} characters ({rest:,} more); files_read shows the file\n"
        )
    return diff
