"""Finding calls in a reply, in its two shapes.

The prose shape holds JSON calls in ```json / ```tool_call fences, `<tool_call>` tags, or bare in
the prose (the JSON-in-prose and code-block formats). `ProseScanner` reads it a piece at a time:
each construct is decided as soon as the text decides it, and the scanner says when it needs
more, so a reply split anywhere reads exactly as the whole. Calls inside inline code spans and
fences of other languages are prose; a block that fails consumes its whole extent.

The scissors-cat shape is a JSON array of calls, the delimiter ✂️🐱, then markdown:
`scissors_calls` validates its tool section. Both are pure and bounded; broken calls come back
as ParseProblems the model can act on, never as exceptions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_tools.textcalls.calls import (
    CALL_HINT,
    DELIMITER,
    JSON_HINT,
    MAX_CALLS,
    Event,
    ParsedCall,
    ParseProblem,
    Prose,
    json_type,
    label_of,
)
from mcp_tools.textcalls.names import ALIASES, is_known

NAME_KEYS = ("tool", "tool_name", "name", "function")  # first present wins: in flat calls "name" may be an argument
ARGUMENT_KEYS = ("arguments", "args", "parameters", "input")
ENVELOPE_KEYS = frozenset({"id", "call_id", "type"})  # wrapper fields some formats add; carry no arguments
WRAPPER_KEYS = frozenset({"tool_calls", "role", "content", "id", "type"})  # the legacy {"tool_calls": [...]}
CALL_LABELS = frozenset({"tool_call", "tool", "function_call"})  # fences that can only mean a call
DATA_LABELS = frozenset({"json", ""})  # fences that may hold a call or just example data
TAGS = ("<tool_call>", "<function_call>")
SCISSORS_KEYS = ("id", "type", "operation", "parameters", "priority")
SCISSORS_HINT = (
    'Start the reply with [{"id": "1", "type": "files_read", "operation": "read a file", '
    f'"parameters": {{"path": "a.md"}}}}], then {DELIMITER}, then the message.'
)

_FENCE_LINE = re.compile(r"[ \t]*(?P<marker>`{3,}|~{3,})(?P<info>[^\n]*)")
_FENCE_PREFIX = re.compile(r"[ \t]*(?:`+|~+)?")
_INLINE = re.compile(r"[`{<\n]")
_IN_SPAN = re.compile(r"[`\n]")
_BACKTICKS = re.compile(r"`+")
_BARE_START = re.compile(r"\{\s*\"")
_ONLY_SPACE = re.compile(r"[ \t\r]*")
_PARAGRAPH_END = re.compile(r"\n[ \t\r]*\n")
_CALL_KEY = re.compile(r"[\"'](?:tool|tool_name|name|function)[\"']\s*:")
_LEADING_CALL_KEY = re.compile(r"\{\s*\"(?:tool|tool_name|name|function)\"\s*:")
_KEY_PREFIX = re.compile(r"\{\s*\"(?P<key>\w*)(?P<quote>\")?(?P<space>\s*)(?P<colon>:)?")
_NAMESPACED = re.compile(r"[A-Za-z][A-Za-z0-9]*[._][A-Za-z0-9_.-]+")
_IN_STRING = re.compile(r"[\"\\\n]")
_BARE_STOPS = re.compile(r"[{}\"\\\n]")
_STRING_STOPS = re.compile(r"[\"\\\n]")
_TAG_STOPS = re.compile(r"[\"<]")
_NEWLINE = re.compile(r"\n")
_OPEN_BRACE = re.compile(r"\{\s*")
_PLAIN_WORDS = frozenset({"search"})  # aliases that are also ordinary words: only a call under "tool"
_HOLD_AFTER = 65_536  # characters of a held fence or tag kept in the working text
_DECODER = json.JSONDecoder(strict=False)  # fenced calls often carry raw line breaks inside file content


class NeedMore(Exception):
    """The text so far cannot decide the construct at hand; wait for the next piece."""


class _CallLimit(Exception):
    """MAX_CALLS items are out: the rest of the reply is prose, reported, never read for calls."""


@dataclass
class _Scan:
    """Where an interrupted scan of one construct resumes: nothing is read twice."""

    kind: str  # bare, fence, tag, paragraph
    start: int
    position: int
    depth: int = 0
    in_string: bool = False
    body_start: int = 0
    marker: str = ""
    strict: bool = False
    json_body: bool | None = None  # a fence body that starts with { or [ is scanned string-aware
    at_line_start: bool = True
    problem: ParseProblem | None = None
    line: int = 1


class ProseScanner:
    """Calls and prose from the prose shape, fed in pieces; `finish` decides what is left."""

    def __init__(self) -> None:
        self.text = ""  # the undecided text
        self.base = 0  # absolute offset of text[0]
        self.position = 0  # where reading continues in text
        self.events: list[Event] = []
        self.blocks = 0
        self.count = 0
        self.at_line_start = True
        self.blank = True  # the current line holds only whitespace so far
        self.span: int | None = None  # backticks that opened an inline code span
        self.fence: tuple[str, int] | None = None  # an open fence whose body is prose
        self.scan: _Scan | None = None
        self.stopped_line: int | None = None  # MAX_CALLS reached at this line
        self.spent = 0  # characters the bare-object scans have looked at
        self.bare_stopped_at: int | None = None
        self._prose_range: tuple[int, int] | None = None
        self._held: list[str] = []  # the front of a long fence or tag, already scanned
        self._counted, self._line = 0, 1

    # -- driving -------------------------------------------------------------------------------

    def feed(self, text: str) -> list[Event]:
        self.text += text
        return self._run(final=False)

    def finish(self) -> list[Event]:
        events = self._run(final=True)
        if self.bare_stopped_at is not None:
            line = self.bare_stopped_at
            events.append(
                ParseProblem(
                    f"stopped looking for calls outside fences at line {line}: too much unbalanced JSON-like text",
                    None,
                    line=line,
                    hint=CALL_HINT,
                )
            )
        if self.stopped_line is not None:
            events.append(
                ParseProblem(
                    f"only the first {MAX_CALLS} tool calls were read; the rest of the reply, from line "
                    f"{self.stopped_line}, was not run",
                    None,
                    line=self.stopped_line,
                    hint="Send fewer calls at a time.",
                )
            )
        return events

    def line_at(self, index: int) -> int:
        """The line of text[index]; counted on from the last answer, so the scan stays linear."""
        if index < self._counted:
            self._line -= self.text.count("\n", index, self._counted)
        else:
            self._line += self.text.count("\n", self._counted, index)
        self._counted = index
        return self._line

    def _run(self, final: bool) -> list[Event]:
        try:
            while self.stopped_line is None and (
                self.position < len(self.text) or (final and self.scan is not None)  # a held block ends here
            ):
                self._step(final)
        except NeedMore:
            pass
        except _CallLimit:
            self.scan = None
            self.stopped_line = self.line_at(max(self.position, 0))
        if self.stopped_line is not None and self.position < len(self.text):
            self._prose(self.position, len(self.text))
            self.position = len(self.text)
        self._close_prose()
        self._trim()
        self._hold()
        if self.scan is None:
            self._held = []
        events, self.events = self.events, []
        return events

    def _trim(self) -> None:
        if self.position <= 0:
            return  # nothing read, or inside a held block
        self.line_at(self.position)
        cut = self.position
        self.text = self.text[cut:]
        self.base += cut
        self.position = 0
        self._counted -= cut
        self._shift(cut)

    def _shift(self, cut: int) -> None:
        """Positions after dropping `cut` characters from the front of the text."""
        if self.scan is not None:
            for name in ("start", "position", "body_start"):
                setattr(self.scan, name, getattr(self.scan, name) - cut)

    def _hold(self) -> None:
        """A long fence or tag is read once: its scanned text moves aside, so each piece costs its own size."""
        scan = self.scan
        if scan is None or scan.kind not in ("fence", "tag") or scan.position < _HOLD_AFTER:
            return
        cut = scan.position
        self.line_at(cut)
        self._held.append(self.text[:cut])
        self.text = self.text[cut:]
        self.base += cut
        self._counted -= cut
        self._shift(cut)

    def _prose(self, start: int, end: int) -> None:
        """Marks text as prose; neighbouring pieces become one event."""
        if end <= start:
            return
        if self._prose_range is not None and self._prose_range[1] == start:
            self._prose_range = (self._prose_range[0], end)
            return
        self._close_prose()
        self._prose_range = (start, end)

    def _close_prose(self) -> None:
        if self._prose_range is not None:
            start, end = self._prose_range
            self.events.append(Prose(self._slice(start, end)))
            self._prose_range = None

    def _slice(self, start: int, end: int) -> str:
        """Text from start to end, where a negative start reaches back into a long held block."""
        if start >= 0:
            return self.text[start:end]
        held = "".join(self._held)
        return held[len(held) + start :] + self.text[:end]

    def _emit(self, item: ParsedCall | ParseProblem) -> None:
        if self.count >= MAX_CALLS:
            raise _CallLimit
        self.count += 1
        self._close_prose()
        self.events.append(item)

    # -- one construct at a time ---------------------------------------------------------------

    def _step(self, final: bool) -> None:
        """Reads one construct at self.position, or raises NeedMore with nothing consumed."""
        if self.scan is not None:
            self._resume(final)
            return
        if self.at_line_start:
            if self.fence is not None:
                self._prose_fence_line(final)
                return
            if self._fence_opening(final):
                return
            self.at_line_start = False
        if self.fence is not None:
            end = self.text.find("\n", self.position)
            end = len(self.text) if end < 0 else end + 1
            self._prose(self.position, end)
            self.at_line_start = end <= len(self.text) and self.text[end - 1] == "\n"
            self.position = end
            return
        text = self.text
        match = (_IN_SPAN if self.span is not None else _INLINE).search(text, self.position)
        if match is None:
            self._note_content(self.position, len(text))
            self._prose(self.position, len(text))
            self.position = len(text)
            return
        self._note_content(self.position, match.start())
        self._prose(self.position, match.start())
        self.position = match.start()
        char = text[self.position]
        if char == "\n":
            if self.blank:
                self.span = None  # a paragraph ends every code span
            self._prose(self.position, self.position + 1)
            self.position += 1
            self.at_line_start, self.blank = True, True
        elif char == "`":
            self._backticks(final)
        elif char == "<":
            self._tag(final)
        else:
            self._bare(final)

    def _note_content(self, start: int, end: int) -> None:
        if self.blank and self.text[start:end].strip():
            self.blank = False

    def _resume(self, final: bool) -> None:
        scan = self.scan
        assert scan is not None
        if scan.kind == "bare":
            self._bare_scan(final)
        elif scan.kind == "fence":
            self._fence_scan(final)
        elif scan.kind == "tag":
            self._tag_scan(final)
        else:
            self._paragraph_scan(final)

    # -- fences --------------------------------------------------------------------------------

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
        self.span = None
        label = info.split()[0].lower() if info else ""
        if label not in CALL_LABELS and label not in DATA_LABELS:
            self._prose(start, after)
            self.fence = (marker[0], len(marker))
            self.position = after
            self.at_line_start = True
            return True
        self.scan = _Scan("fence", start, after, body_start=after, marker=marker, strict=label in CALL_LABELS)
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
                    elif line_end < 0 and not final:
                        raise NeedMore
            scan.at_line_start = False
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

    def _fence_is_prose(self) -> None:
        """A ```json fence of shell output or prose: streamed as prose from here to its close."""
        scan = self.scan
        assert scan is not None
        self._prose(scan.start, scan.position)
        self.fence = (scan.marker[0], len(scan.marker))
        self.position = scan.position
        self.at_line_start = True
        self.scan = None

    def _fence_done(self, body_end: int, after: int) -> None:
        scan = self.scan
        assert scan is not None
        self.scan = None
        body = self._slice(scan.body_start, body_end)
        line = scan.line
        if not self._values(body, strict=scan.strict, line=line, source="fence"):
            self._prose(scan.start, after)
        self.position = after
        self.at_line_start, self.blank = True, True

    # -- inline code spans ---------------------------------------------------------------------

    def _backticks(self, final: bool) -> None:
        run = _BACKTICKS.match(self.text, self.position)
        assert run is not None
        if run.end() == len(self.text) and not final:
            raise NeedMore
        length = len(run.group())
        if self.span is None:
            self.span = length
        elif self.span == length:
            self.span = None
        self.blank = False
        self._prose(run.start(), run.end())
        self.position = run.end()

    # -- tags ----------------------------------------------------------------------------------

    def _tag(self, final: bool) -> None:
        rest = self.text[self.position : self.position + 16]
        tag = next((tag for tag in TAGS if rest.startswith(tag)), None)
        if tag is None:
            if not final and any(tag.startswith(rest) for tag in TAGS) and len(rest) < 16:
                raise NeedMore
            self.blank = False
            self._prose(self.position, self.position + 1)
            self.position += 1
            return
        self.blank = False
        self.scan = _Scan("tag", self.position, self.position + len(tag), marker=tag[1:-1])
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
                match = _STRING_STOPS.search(text, scan.position)
            else:
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
                body = _strip_fence(self._slice(scan.start + len(scan.marker) + 2, match.start()))
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

    # -- bare objects in prose -----------------------------------------------------------------

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
        call_key = self._leading_call_key(start, final)
        self.scan = _Scan("bare", start, start, strict=call_key)
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
                    self._bare_done(scan.start, index + 1)
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
        self.spent += index - scan.start
        self.scan = None
        start = scan.start
        if reason is None or not scan.strict:
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
        self.scan = _Scan("paragraph", start, index, problem=problem)
        self._paragraph_scan(final)

    def _paragraph_scan(self, final: bool) -> None:
        scan = self.scan
        assert scan is not None and scan.problem is not None
        end = _PARAGRAPH_END.search(self.text, scan.position)
        if end is None and not final:
            scan.position = max(self.text.rfind("\n"), scan.position)
            raise NeedMore
        self.scan = None
        self._emit(scan.problem)
        self.position = end.start() + 1 if end else len(self.text)
        self.at_line_start, self.blank = True, True

    def _bare_done(self, start: int, end: int) -> None:
        candidate = self.text[start:end]
        line = self.line_at(start)
        try:
            value = _DECODER.decode(candidate)
        except (json.JSONDecodeError, RecursionError):
            if _LEADING_CALL_KEY.match(candidate) and self._values(candidate, strict=False, line=line, source="text"):
                self.position = end
                return
            self._prose(start, start + 1)
            self.position = start + 1
            return
        shapes = _shapes_of(value, strict=False)
        if not shapes:
            self._prose(start, end)  # objects inside a non-call object are not top level
        else:
            self._emit_shapes(shapes, line, "text")
        self.position = end

    # -- reading blocks ------------------------------------------------------------------------

    def _values(self, body: str, *, strict: bool, line: int, source: str) -> bool:
        """Reads one JSON value, an array, or several values in a row; True when it held a call."""
        stripped = body.strip()
        if not strict and not stripped.startswith(("{", "[")):
            return False  # an unlabeled fence of shell output or prose
        try:
            values = _decode_all(stripped)
        except json.JSONDecodeError as exc:
            if not strict and not _CALL_KEY.search(stripped):
                return False
            self.blocks += 1
            where = f"at line {exc.lineno} column {exc.colno}"
            hint = JSON_HINT + (" JSON needs double quotes." if "'" in stripped[: exc.pos + 1] else "")
            self._emit(
                ParseProblem(
                    f"block {self.blocks}: invalid JSON {where}: {exc.msg}",
                    self.blocks,
                    line=line,
                    hint=hint,
                )
            )
            return True
        except RecursionError:
            self.blocks += 1
            self._emit(ParseProblem(f"block {self.blocks}: the JSON is nested too deeply", self.blocks, line=line))
            return True
        elements: list[Any] = []
        for value in values:
            elements.extend(value if isinstance(value, list) else [value])
        strict = strict or any(_meant_as_call(element) for element in elements)
        if len(elements) == 1 and isinstance(elements[0], dict) and _is_wrapper(elements[0]):
            shapes = _shapes_of(elements[0], strict=strict)
        else:
            several = len(elements) != 1 or isinstance(values[0], list)
            shapes = []
            for index, element in enumerate(elements, start=1):
                shape = _classify_element(element, strict=strict)
                if shape is not None:
                    shapes.append((index if several else None, shape))
        if not shapes:
            if not strict:
                return False
            self.blocks += 1
            self._emit(ParseProblem(f"block {self.blocks}: holds no tool call", self.blocks, line=line, hint=CALL_HINT))
            return True
        self._emit_shapes(shapes, line, source)
        return True

    def _emit_shapes(self, shapes: list[tuple[int | None, _Shape]], line: int, source: str) -> None:
        self.blocks += 1
        block = self.blocks
        for item, shape in shapes:
            if isinstance(shape, _Problem):
                self._emit(
                    ParseProblem(f"{label_of(block, item)}: {shape.message}", block, item, line, shape.name, CALL_HINT)
                )
            else:
                self._emit(ParsedCall(shape.name, shape.arguments, block, item, line, source, shape.call_id))


# -- classifying one JSON value ----------------------------------------------------------------


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class _Problem:
    message: str
    name: str | None = None


_Shape = _Call | _Problem


def _decode_all(text: str) -> list[Any]:
    """Every JSON value in the text, in order (models sometimes write one call per line)."""
    values: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        if position >= len(text):
            break
        value, position = _DECODER.raw_decode(text, position)
        values.append(value)
    if not values:
        raise json.JSONDecodeError("Expecting value", text, 0)
    return values


def _strip_fence(body: str) -> str:
    """`<tool_call>` content is sometimes fenced as well."""
    stripped = body.strip()
    if stripped.startswith(("```", "~~~")):
        first_newline = stripped.find("\n")
        stripped = stripped[first_newline + 1 :] if first_newline >= 0 else ""
        stripped = stripped.rstrip()
        stripped = stripped.rstrip("`~").rstrip() if stripped.endswith(("```", "~~~")) else stripped
    return stripped


def _model_id(obj: dict[str, Any]) -> str | None:
    for key in ("id", "call_id"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:100]
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _is_wrapper(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("tool_calls"), list) and set(obj) <= WRAPPER_KEYS


def _shapes_of(value: Any, *, strict: bool) -> list[tuple[int | None, _Shape]]:
    """The calls a top-level value holds: one object, or the legacy {"tool_calls": [...]} wrapper."""
    if isinstance(value, dict) and _is_wrapper(value):
        calls = value["tool_calls"]
        several = len(calls) != 1
        return [
            (index if several else None, _classify_element(element, strict=True) or _Problem("not a tool call"))
            for index, element in enumerate(calls, start=1)
        ]
    if isinstance(value, dict):
        shape = _classify(value, strict=strict)
        return [] if shape is None else [(None, shape)]
    return []


def _meant_as_call(element: Any) -> bool:
    """Whether a block's object shows it was written as a call, so each other object there must be one."""
    if not isinstance(element, dict):
        return False
    if _classify(element, strict=False) is not None or _is_wrapper(element):
        return True
    return bool({"tool", "tool_name", "function"} & set(element)) or (
        "name" in element and bool(set(ARGUMENT_KEYS) & set(element))
    )


def _classify_element(element: Any, *, strict: bool) -> _Shape | None:
    if isinstance(element, dict):
        return _classify(element, strict=strict)
    return _Problem(f"expected a JSON object, got {json_type(element)}") if strict else None


def _arguments(value: Any, key: str) -> dict[str, Any] | _Problem:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            parsed = _DECODER.decode(value.strip())
        except json.JSONDecodeError as exc:
            return _Problem(f"{key} is a string but not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})")
        if isinstance(parsed, dict):
            return parsed
        return _Problem(f"{key} must be a JSON object, got {json_type(parsed)} inside the string")
    return _Problem(f"{key} must be a JSON object of arguments, got {json_type(value)}")


def _tool_name_like(name: str) -> bool:
    """A name that can only be meant as a tool: ours, a wire name, or another system's."""
    return is_known(name) and name not in _PLAIN_WORDS


def _classify(obj: dict[str, Any], *, strict: bool) -> _Shape | None:
    """Which call an object is, a problem if it is a broken call, None if it is not a call at all."""
    call_id = _model_id(obj)
    function = obj.get("function")
    if isinstance(function, dict) and obj.get("type", "function") == "function":
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            return _Problem("function.name is missing: expected the tool's name as a string")
        extra = sorted(set(obj) - {"function", *ENVELOPE_KEYS}) + sorted(set(function) - {"name", "arguments"})
        if extra:
            return _Problem(f"unexpected {', '.join(extra)}; put every argument inside function.arguments", name)
        arguments = _arguments(function.get("arguments", {}), "function.arguments")
        if isinstance(arguments, _Problem):
            return _Problem(arguments.message, name)
        return _Call(name.strip(), arguments, call_id)

    name_key = next((key for key in NAME_KEYS if key in obj), None)
    argument_keys = [key for key in ARGUMENT_KEYS if key in obj]
    name = obj.get(name_key) if name_key else None
    if not isinstance(name, str) or not name.strip():
        looks_like_call = strict or ("arguments" in obj and set(obj) <= {*argument_keys, *ENVELOPE_KEYS, *NAME_KEYS})
        if not looks_like_call:
            return None
        if name_key is None:
            return _Problem('no tool name: expected a "name" key holding the tool\'s name')
        return _Problem(f"{name_key} must be the tool's name as a string, got {json_type(name)}")
    name = name.strip()

    tool_like = name in ALIASES or _NAMESPACED.fullmatch(name) is not None
    if argument_keys:
        extra = sorted(set(obj) - {name_key, *argument_keys, *ENVELOPE_KEYS})
        value = obj[argument_keys[0]]
        object_like = isinstance(value, dict) or (isinstance(value, str) and value.lstrip().startswith("{"))
        if not strict and not tool_like and (extra or not object_like):
            return None  # {"name": "Ada", "input": "hello"} in prose is data, not a call
        if len(argument_keys) > 1:
            return _Problem(f"both {argument_keys[0]} and {argument_keys[1]} given; send the arguments once", name)
        if extra:
            shown = ", ".join(extra)
            return _Problem(
                f"unexpected {shown} beside {name_key} and {argument_keys[0]}; put every argument inside "
                f"{argument_keys[0]}",
                name,
            )
        arguments = _arguments(value, argument_keys[0])
        if isinstance(arguments, _Problem):
            return _Problem(arguments.message, name)
        return _Call(name, arguments, call_id)

    # Flat: {"tool": "write_file", "path": ..., "content": ...}; the other keys are the arguments.
    # {"name": "files.read"} alone is a call without arguments: the tool's validation says what is missing.
    flat = strict or name in ALIASES or (name_key in ("tool", "tool_name") and tool_like) or _tool_name_like(name)
    if not flat:
        return None
    return _Call(name, {key: value for key, value in obj.items() if key != name_key}, call_id)


# -- the scissors-cat format -------------------------------------------------------------------


def scissors_calls(section: str, line: int = 1) -> list[ParsedCall | ParseProblem]:
    """The calls of the tool section before ✂️🐱, each validated alone; never raises."""
    text = section.strip()
    if not text:
        return []
    if not text.startswith("["):
        return [_section_problem("the tool section before the delimiter must be a JSON array of calls", line)]
    leading = len(section) - len(section.lstrip())
    line += section.count("\n", 0, leading)
    items: list[ParsedCall | ParseProblem] = []
    position, index = 1, 0
    while True:
        position = _skip_space(text, position)
        if position < len(text) and text[position] == "]":
            if text[position + 1 :].strip():
                items.append(_section_problem("text after the array of calls, before the delimiter", line))
            return items
        if index:
            if position >= len(text) or text[position] != ",":
                items.append(_section_problem(f"expected , or ] after item {index}", line))
                return items
            position = _skip_space(text, position + 1)
        index += 1
        element_line = line + text.count("\n", 0, position)
        if index > MAX_CALLS:
            items.append(
                ParseProblem(
                    f"only the first {MAX_CALLS} tool calls were read; the rest, from line {element_line}, "
                    "were not run",
                    None,
                    line=element_line,
                    hint="Send fewer calls at a time.",
                )
            )
            return items
        try:
            element, position = _DECODER.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            items.append(
                ParseProblem(
                    f"block 1, item {index}: invalid JSON ({why}); this call and any after it were not read",
                    1,
                    index,
                    element_line,
                    hint=JSON_HINT,
                )
            )
            return items
        items.append(_scissors_call(element, index, element_line))


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _section_problem(message: str, line: int) -> ParseProblem:
    return ParseProblem(f"block 1: {message}", 1, line=line, hint=SCISSORS_HINT)


def _scissors_call(element: Any, index: int, line: int) -> ParsedCall | ParseProblem:
    """One {"id", "type", "operation", "parameters", "priority"?} call, or what to fix in it."""

    def problem(message: str, name: str | None = None) -> ParseProblem:
        return ParseProblem(f"block 1, item {index}: {message}", 1, index, line, name, SCISSORS_HINT)

    if not isinstance(element, dict):
        return problem(f"expected a JSON object, got {json_type(element)}")
    kind = element.get("type")
    name = kind.strip() if isinstance(kind, str) else None
    extra = sorted(set(element) - set(SCISSORS_KEYS))
    if extra:
        return problem(f"unexpected {', '.join(extra)}; put every argument inside parameters", name)
    call_id = element.get("id")
    if isinstance(call_id, int) and not isinstance(call_id, bool):
        call_id = str(call_id)
    if not isinstance(call_id, str) or not call_id.strip():
        return problem("id must be the call's id as a non-empty string", name)
    if not name:
        return problem(f"type must be the tool's name as a string, got {json_type(kind)}")
    operation = element.get("operation")
    if not isinstance(operation, str):
        return problem(f"operation must be a string saying what the call does, got {json_type(operation)}", name)
    parameters = element.get("parameters")
    if not isinstance(parameters, dict):
        return problem(f"parameters must be a JSON object of arguments, got {json_type(parameters)}", name)
    priority = element.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int | float):
        return problem(f"priority must be a number, got {json_type(priority)}", name)
    combined = f"{name}_{operation.strip()}"
    if not is_known(name) and is_known(combined):
        name = combined  # {"type": "gmail", "operation": "send"}
    return ParsedCall(name, parameters, 1, index, line, "scissors", call_id.strip()[:100], priority, operation)
