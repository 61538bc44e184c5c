"""Fences and tags in prose: ```json and ```tool_call fences, `<tool_call>` and `<function_call>` tags.

A fence of another language is prose to its close; a ```json fence that holds shell output or words
is prose too. A call fence or a tag ends at its first closing line or tag outside a JSON string,
and a JSON body with its closing line already in the text is read by the decoder in one pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from mcp_tools.textcalls.calls import ParseProblem
from mcp_tools.textcalls.prose_core import STRING_REST, NeedMore, Scan, ScannerCore
from mcp_tools.textcalls.shapes import DECODER, strip_fence

CALL_LABELS = frozenset({"tool_call", "tool", "function_call"})  # fences that can only mean a call
DATA_LABELS = frozenset({"json", ""})  # fences that may hold a call or just example data
TAGS = ("<tool_call>", "<function_call>")
_FENCE_LINE = re.compile(r"[ \t]*(?P<marker>`{3,}|~{3,})(?P<info>[^\n]*)")
_FENCE_PREFIX = re.compile(r"[ \t]*(?:`+|~+)?")
_STRING_STOPS = re.compile(r"[\"\\\n]")
_TAG_STOPS = re.compile(r"[\"<]")
_NEWLINE = re.compile(r"\n")


class BlockReader(ScannerCore):
    """Reads fences and tags, each to its end, resuming where the last piece stopped."""

    def _whole_line(self, start: int, final: bool, could_matter: Callable[[], bool]) -> tuple[int, int] | None:
        """(end of content, end with newline) of the line at start; NeedMore while its end could matter."""
        newline = self.text.find("\n", start)
        if newline >= 0:
            return newline, newline + 1
        if final:
            return len(self.text), len(self.text)
        if could_matter():
            raise NeedMore
        return None

    def _fence_opening(self, final: bool) -> bool:
        """At a line start: a fence opening is read whole; True when one was."""
        start = self.position
        prefix = _FENCE_PREFIX.match(self.text, start)
        assert prefix is not None
        match = _FENCE_LINE.match(self.text, start)
        if not final and self.text.find("\n", start) < 0:
            if prefix.end() == len(self.text):
                raise NeedMore  # "``" may yet become a fence
            if match is not None and not (match.group("marker")[0] == "`" and "`" in match.group("info")):
                raise NeedMore  # a fence opening whose label is still coming
        if match is None or (match.group("marker")[0] == "`" and "`" in match.group("info")):
            return False  # not a fence; ```x``` is inline code
        line_end, after = self._whole_line(start, final, lambda: True) or (len(self.text), len(self.text))
        marker = match.group("marker")
        info = self.text[match.start("info") : line_end].strip()
        self.span, self.quoted, self.quotes, self.curly = None, False, 0, 0
        label = info.split()[0].lower() if info else ""
        if self.markdown or (label not in CALL_LABELS and label not in DATA_LABELS):
            self._prose(start, after)
            self.fence = (marker[0], len(marker))
            self.position = after
            self.at_line_start = True
            return True
        self.scan = Scan("fence", start, after, body_start=after, marker=marker, strict=label in CALL_LABELS)
        self.scan.line = self.line_at(start)
        self._fence_scan(final)
        return True

    def _closing(self, start: int, marker: str, final: bool) -> tuple[int, int] | None:
        """The closing line of a fence at start as (start, after), None if the line is not one."""
        line = self._whole_line(start, final, lambda: self._could_close(start, marker))
        if line is None:
            return None
        content = self.text[start : line[0]].strip(" \t\r")
        if len(content) >= len(marker) and content == marker[0] * len(content):
            return start, line[1]
        return None

    def _could_close(self, start: int, marker: str) -> bool:
        rest = self.text[start:].strip(" \t\r")
        return rest == marker[0] * len(rest)

    def _prose_fence_line(self, final: bool) -> None:
        char, length = self.fence or ("`", 3)
        closing = self._closing(self.position, char * length, final)
        if closing is not None:
            self._prose(self.position, closing[1])
            self.position = closing[1]
            self.fence = None
            self.at_line_start = True
            self.blank = True
            return
        self.at_line_start = False

    def _fence_scan(self, final: bool) -> None:
        """Finds a call fence's end: its first closing line outside a JSON string."""
        scan = self.scan
        assert scan is not None
        text = self.text
        while True:
            if scan.at_line_start and not scan.in_string:
                if scan.position >= len(text):
                    if final:
                        self._fence_done(len(text), len(text))
                        return
                    raise NeedMore
                closing = self._closing(scan.position, scan.marker, final)
                if closing is not None:
                    self._fence_done(closing[0], closing[1])
                    return
                if scan.json_body is None:  # the body's first character decides how it is read
                    line_end = text.find("\n", scan.position)
                    line = text[scan.position : len(text) if line_end < 0 else line_end].strip()
                    if line:
                        scan.json_body = line.startswith(("{", "["))
                        if not scan.json_body and not scan.strict:
                            self._fence_is_prose()
                            return
                        if scan.json_body and not self._held and self._fence_decoded(final):
                            return
                    elif line_end < 0 and not final:
                        raise NeedMore
            scan.at_line_start = False
            if scan.in_string:  # the rest of the string in one step, escapes and line breaks included
                if self._string_end(final):
                    continue
                if final:
                    self._fence_done(len(text), len(text))
                    return
                raise NeedMore
            stops = _STRING_STOPS if scan.json_body else _NEWLINE
            match = stops.search(text, scan.position)
            if match is None:
                scan.position = len(text)
                if final:
                    self._fence_done(len(text), len(text))
                    return
                raise NeedMore
            char = match.group()
            if char == "\n":
                scan.position = match.end()
                scan.at_line_start = True
            elif char == '"':
                scan.in_string = not scan.in_string
                scan.position = match.end()
            else:  # a backslash: inside a string it escapes the next character
                if match.end() >= len(text) and not final:
                    scan.position = match.start()
                    raise NeedMore
                scan.position = match.end() + (1 if scan.in_string else 0)

    def _fence_decoded(self, final: bool) -> bool:
        """A whole JSON body followed by the closing line, read by the decoder in one pass; False to scan instead.

        Valid JSON holds no closing line outside its strings, so this ends the fence where the scan would.
        """
        scan = self.scan
        assert scan is not None
        text = self.text
        if scan.decoded or text.find(scan.marker, scan.position) < 0:
            scan.decoded = True
            return False
        scan.decoded = True
        values: list[Any] = []
        position = scan.position
        try:
            while True:
                while position < len(text) and text[position] in " \t\r\n":
                    position += 1
                if position >= len(text) or text[position] not in "{[":
                    break
                value, position = DECODER.raw_decode(text, position)
                values.append(value)
        except (json.JSONDecodeError, RecursionError):
            return False
        line_start = text.rfind("\n", scan.position, position) + 1
        if not values or line_start <= scan.position or text[line_start:position].strip(" \t\r"):
            return False
        try:
            closing = self._closing(line_start, scan.marker, final)
        except NeedMore:
            scan.decoded = False  # the closing line is still coming: try again with it
            raise
        if closing is None:
            return False
        self._fence_done(closing[0], closing[1], values)
        return True

    def _string_end(self, final: bool) -> bool:
        """Moves the scan past the closing quote of the string it is in; False when the text ends first."""
        scan = self.scan
        assert scan is not None
        text = self.text
        match = STRING_REST.match(text, scan.position)
        assert match is not None
        end = match.end()
        if end < len(text) and text[end] == '"':
            scan.position, scan.in_string = end + 1, False
            return True
        scan.position = len(text) if final else end  # a last backslash waits for what it escapes
        return False

    def _fence_is_prose(self) -> None:
        """A ```json fence of shell output or prose: streamed as prose from here to its close."""
        scan = self.scan
        assert scan is not None
        self._prose(scan.start, scan.position)
        self.fence = (scan.marker[0], len(scan.marker))
        self.position = scan.position
        self.at_line_start = True
        self.scan = None

    def _fence_done(self, body_end: int, after: int, decoded: list[Any] | None = None) -> None:
        scan = self.scan
        assert scan is not None
        self.scan = None
        body = self._slice(scan.body_start, body_end)
        line = scan.line
        if not self._values(body, strict=scan.strict, line=line, source="fence", decoded=decoded):
            self._prose(scan.start, after)
        self.position = after
        self.at_line_start, self.blank = True, True

    # -- tags -------------------------------------------------------------------------------------

    def _tag(self, final: bool) -> None:
        rest = self.text[self.position : self.position + 16]
        if rest.startswith("<!--"):
            self.comment, self.blank = True, False
            self._prose(self.position, self.position + 4)
            self.position += 4
            return
        tag = next((tag for tag in TAGS if rest.startswith(tag)), None)
        if tag is not None and self._quoted(self.position):
            tag = None  # a quoted tag is text
        if tag is None:
            if not final and any(tag.startswith(rest) for tag in (*TAGS, "<!--")) and len(rest) < 16:
                raise NeedMore
            self.blank = False
            self._prose(self.position, self.position + 1)
            self.position += 1
            return
        self.blank = False
        self.scan = Scan("tag", self.position, self.position + len(tag), marker=tag[1:-1])
        self.scan.line = self.line_at(self.position)
        self._tag_scan(final)

    def _tag_scan(self, final: bool) -> None:
        """The closing tag outside any JSON string ends the block."""
        scan = self.scan
        assert scan is not None
        text = self.text
        end_tag = f"</{scan.marker}>"
        while True:
            if scan.in_string:
                if self._string_end(final):
                    continue
                break
            match = _TAG_STOPS.search(text, scan.position)
            if match is None:
                scan.position = len(text)
                break
            char = match.group()
            if char == '"':
                scan.in_string = not scan.in_string
                scan.position = match.end()
            elif char == "\\":
                if match.end() >= len(text) and not final:
                    scan.position = match.start()
                    raise NeedMore
                scan.position = match.end() + 1
            elif char == "\n":
                scan.position = match.end()
            elif text.startswith(end_tag, match.start()):
                self.scan = None
                line = scan.line
                body = strip_fence(self._slice(scan.start + len(scan.marker) + 2, match.start()))
                self._values(body, strict=True, line=line, source="tag")
                self.position = match.start() + len(end_tag)
                return
            elif not final and len(text) - match.start() < len(end_tag) and end_tag.startswith(text[match.start() :]):
                scan.position = match.start()
                raise NeedMore
            else:
                scan.position = match.end()
        if not final:
            raise NeedMore
        self.scan = None
        self.blocks += 1
        self._emit(
            ParseProblem(
                f"block {self.blocks}: <{scan.marker}> is never closed with {end_tag}",
                self.blocks,
                line=scan.line,
                hint="Send the whole call again, closed.",
            )
        )
        self.position = len(text)
