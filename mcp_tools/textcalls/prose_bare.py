"""Bare JSON objects in prose: a call only when it names a known tool, read within its paragraph.

A quoted object is read past as a whole; one that fails to parse but names a known tool consumes its
paragraph and says what is wrong; anything else is prose. The scans of all bare objects together
look at a bounded number of characters, so unbalanced text cannot make the reply quadratic.
"""

from __future__ import annotations

import json
import re

from mcp_tools.textcalls.attempts import bare_shapes
from mcp_tools.textcalls.calls import CALL_HINT, ParseProblem
from mcp_tools.textcalls.prose_core import PARAGRAPH_END, NeedMore, Scan, ScannerCore
from mcp_tools.textcalls.scissors import scissors_shaped
from mcp_tools.textcalls.shapes import DECODER, NAME_KEYS

_BARE_START = re.compile(r"\{\s*\"")
_ONLY_SPACE = re.compile(r"[ \t\r]*")
_LEADING_CALL_KEY = re.compile(r"\{\s*\"(?:tool|tool_name|name|function)\"\s*:")
_KEY_PREFIX = re.compile(r"\{\s*\"(?P<key>\w*)(?P<quote>\")?(?P<space>\s*)(?P<colon>:)?")
_IN_STRING = re.compile(r"[\"\\\n]")
_NAME_VALUE = re.compile(r'\{\s*"(?:tool|tool_name|name|function)"\s*:\s*"([^"\\\n]{1,200})"')
_NAME_SO_FAR = re.compile(r'\{\s*"(?:tool|tool_name|name|function)"\s*:\s*(?:"[^"\\\n]{0,200})?')
_BARE_STOPS = re.compile(r"[{}\"\\\n]")
_OPEN_BRACE = re.compile(r"\{\s*")


class BareReader(ScannerCore):
    """Reads a bare object in prose to its closing brace, or to the end of its paragraph when it fails."""

    def _bare(self, final: bool) -> None:
        start = self.position
        self.blank = False
        brace = _OPEN_BRACE.match(self.text, start)
        assert brace is not None
        if self.bare_stopped_at is None and brace.end() == len(self.text) and not final:
            raise NeedMore
        if self.bare_stopped_at is not None or _BARE_START.match(self.text, start) is None:
            self._prose(start, start + 1)
            self.position = start + 1
            return
        quoted = self._quoted(start)
        call_key = not quoted and self._leading_call_key(start, final)
        self.scan = Scan("bare", start, start, strict=call_key, quoted=quoted)
        self._bare_scan(final)

    def _leading_call_key(self, start: int, final: bool) -> bool:
        """Whether the object at start opens with a name key (`{"tool":`); NeedMore until the text says."""
        match = _KEY_PREFIX.match(self.text, start)
        assert match is not None
        key, closed, colon = match.group("key"), match.group("quote"), match.group("colon")
        if closed and colon:
            return key in NAME_KEYS
        if final or match.end() < len(self.text):
            return False
        if not closed:
            if any(name.startswith(key) for name in NAME_KEYS):
                raise NeedMore
            return False
        if key in NAME_KEYS:
            raise NeedMore  # the colon may yet come
        return False

    def _bare_scan(self, final: bool) -> None:
        """The balanced object at scan.start, respecting strings and escapes, within its paragraph."""
        scan = self.scan
        assert scan is not None
        text = self.text
        while True:
            match = (_IN_STRING if scan.in_string else _BARE_STOPS).search(text, scan.position)
            index = match.start() if match else len(text)
            if index - scan.start > 10_000 + 4 * (self.base + index) - self.spent:
                self._bare_failed(index, None, final)
                self.bare_stopped_at = self.line_at(scan.start)
                return
            if match is None:
                scan.position = len(text)
                if not final:
                    raise NeedMore
                self._bare_failed(len(text), "it is never closed", final)
                return
            char = match.group()
            if scan.in_string:
                if char == "\\":
                    if match.end() >= len(text) and not final:
                        scan.position = index
                        raise NeedMore
                    scan.position = index + 2
                    continue
                if char == "\n":
                    self._bare_failed(
                        index,
                        r"a string holds a raw line break (write it as \n, or put the call in a ```json fence)",
                        final,
                    )
                    return
                scan.in_string = False
            elif char == '"':
                scan.in_string = True
            elif char == "{":
                scan.depth += 1
            elif char == "}":
                scan.depth -= 1
                if scan.depth == 0:
                    self.spent += index - scan.start
                    self.scan = None
                    self._bare_done(scan.start, index + 1, scan.quoted)
                    return
            elif char == "\n":
                following = _ONLY_SPACE.match(text, index + 1)
                assert following is not None
                if following.end() == len(text) and not final:
                    scan.position = index
                    raise NeedMore
                if following.end() == len(text) or text[following.end()] == "\n":
                    self._bare_failed(index, "it is never closed", final)
                    return
            else:
                self._bare_failed(index, "a backslash outside a string", final)
                return
            scan.position = index + 1

    def _bare_failed(self, index: int, reason: str | None, final: bool) -> None:
        """A call-looking object that failed consumes its paragraph; anything else was prose."""
        scan = self.scan
        assert scan is not None
        known = reason is not None and scan.strict and self._names_known(scan.start, final)
        self.spent += index - scan.start
        self.scan = None
        start = scan.start
        if not known:
            self._prose(start, start + 1)
            self.position = start + 1
            return
        self.blocks += 1
        problem = ParseProblem(
            f"block {self.blocks}: this looks like a tool call but is not valid JSON: {reason}",
            self.blocks,
            line=self.line_at(start),
            hint=CALL_HINT,
        )
        self.scan = Scan("paragraph", start, index, problem=problem)
        self._paragraph_scan(final)

    def _paragraph_scan(self, final: bool) -> None:
        scan = self.scan
        assert scan is not None and scan.problem is not None
        end = PARAGRAPH_END.search(self.text, scan.position)
        if end is None and not final:
            scan.position = max(self.text.rfind("\n"), scan.position)
            raise NeedMore
        self.scan = None
        self._emit(scan.problem)
        self.position = end.start() + 1 if end else len(self.text)
        self.at_line_start, self.blank = True, True

    def _names_known(self, start: int, final: bool) -> bool:
        """Whether a broken bare object opens with the name of a known tool (`{"tool": "write_file", ...`)."""
        match = _NAME_VALUE.match(self.text, start)
        if match is None and not final and _NAME_SO_FAR.fullmatch(self.text, start):
            raise NeedMore  # the name is still coming
        return match is not None and self.known(match.group(1).strip())

    def _bare_done(self, start: int, end: int, quoted: bool = False) -> None:
        if quoted:
            self._prose(start, end)  # quoted: read past as a whole, never a call
            self.position = end
            return
        candidate = self.text[start:end]
        line = self.line_at(start)
        try:
            value = DECODER.decode(candidate)
        except (json.JSONDecodeError, RecursionError):
            if (
                _LEADING_CALL_KEY.match(candidate)
                and self._names_known(start, True)
                and self._values(candidate, strict=False, line=line, source="text")
            ):
                self.position = end
                return
            self._prose(start, start + 1)
            self.position = start + 1
            return
        shapes = bare_shapes(value, self.known)  # a call names a tool we know or is shaped as one; else data
        if not shapes:
            if scissors_shaped(value) and self.scissors_line is None:
                self.scissors_line = line
            self._prose(start, end)  # objects inside a non-call object are not top level
        else:
            self._emit_shapes(shapes, line, "text")
        self.position = end
