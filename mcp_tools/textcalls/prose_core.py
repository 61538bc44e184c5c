"""What every reader of the prose shape shares: the state of a scan, prose and events out, code spans
and quotes, and JSON blocks read into calls.

`ScannerCore` holds where the undecided text stands (its offset, the line count, the front of a long
block set aside) and what the paragraph so far says about quoting. The readers of fences and tags
(`prose_blocks`) and of bare objects (`prose_bare`) and the quick paths (`prose_quick`) build on
it; `prose.ProseScanner` drives them one construct at a time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_tools.inventory.catalog import is_known
from mcp_tools.textcalls.calls import CALL_HINT, JSON_HINT, MAX_CALLS, Event, ParsedCall, ParseProblem, Prose, label_of
from mcp_tools.textcalls.scissors import DELIMITER_STARTS, scissors_shaped
from mcp_tools.textcalls.shapes import (
    UNICODE_PROBLEM,
    Problem,
    Shape,
    classify_element,
    decode_all,
    is_wrapper,
    lone_surrogate,
    meant_as_call,
    shapes_of,
)

# Where a call, a tag, a comment, a fence or a delimiter could start; found with str.find, which is fast.
_CANDIDATES = ("{", "<", "```", "~~~", *DELIMITER_STARTS)
_BACKTICKS = re.compile(r"`+")
PARAGRAPH_END = re.compile(r"\n[ \t\r]*\n")
STRING_REST = re.compile(r'(?:[^"\\]++|\\.)*+', re.DOTALL)  # to a string's closing quote, escapes skipped
_CALL_KEY = re.compile(r"[\"'](?:tool|tool_name|name|function)[\"']\s*:")
_CURLY = re.compile("[\u201c\u201d]")
_QUOTE_BEFORE = frozenset("'\u2018")
_HOLD_AFTER = 65_536  # characters of a held fence or tag kept in the working text

# Which quick path suits a piece (`ProseScanner.quick_path`): none, plain words, the middle of a JSON string,
# plain words while a run of backticks is held.
STEP, WORDS, STRING, TICKS = 0, 1, 2, 3


class NeedMore(Exception):
    """The text so far cannot decide the construct at hand; wait for the next piece."""


class CallLimit(Exception):
    """MAX_CALLS items are out: the rest of the reply is prose, reported, never read for calls."""


@dataclass
class Scan:
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
    quoted: bool = False  # a bare object inside quoted text: read past, never a call
    decoded: bool = False  # a JSON fence body was tried with the decoder from its start


class ScannerCore:
    """The state of one prose scan, and the steps every construct's reader takes."""

    def __init__(self, known: Callable[[str], bool] | None = None) -> None:
        self.known = known or is_known  # a bare object in prose is a call only when it names one of these
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
        self.scan: Scan | None = None
        self.stopped_line: int | None = None  # MAX_CALLS reached at this line
        self.spent = 0  # characters the bare-object scans have looked at
        self.bare_stopped_at: int | None = None
        self._prose_range: tuple[int, int] | None = None
        self._held: list[str] = []  # the front of a long fence or tag, already scanned
        # What the quick paths (`quick`, and the parser's own for bytes) take without a step:
        self.words_passed: list[str] = []  # plain pieces passed, not yet noted
        self.carry = ""  # backticks that ended the last of them, held for the next piece
        self.string_run: list[str] = []  # pieces of one JSON string, not yet set aside
        self.run_escaped = False  # the last of those pieces ends with a backslash that escapes what comes next
        self._counted, self._line = 0, 1
        # Quoted text is never a call: a blockquote paragraph, an HTML comment, a quoted string.
        self.quoted = False  # this paragraph is a blockquote (a line of it starts with >)
        self.quotes = 0  # straight double quotes so far in this paragraph, outside code spans
        self.curly = 0  # open curly double quotes in this paragraph
        self.comment = False  # inside <!-- -->
        self.tail = ""  # the character before text[0]
        self.scissors_line: int | None = None  # where a scissors-cat call was seen in prose
        self.markdown = False  # past a scissors-cat delimiter: the rest is for the person
        self._ahead = {needle: (-1, 0) for needle in _CANDIDATES}  # (next absolute offset or -1, searched up to)
        self._no_break_before = 0  # absolute offset before which no blank line was found
        self._break_ahead = (-1, 0)  # (absolute offset of the next blank line's newline or -1, searched up to)

    def line_at(self, index: int) -> int:
        """The line of text[index]; counted on from the last answer, so the scan stays linear."""
        if index < self._counted:
            self._line -= self.text.count("\n", index, self._counted)
        else:
            self._line += self.text.count("\n", self._counted, index)
        self._counted = index
        return self._line

    def _trim(self) -> None:
        if self.position <= 0:
            return  # nothing read, or inside a held block
        self.line_at(self.position)
        cut = self.position
        self.tail = self.text[cut - 1]
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
            raise CallLimit
        self.count += 1
        self._close_prose()
        self.events.append(item)

    # -- code spans and quotes --------------------------------------------------------------------

    def _inline(self, stop: int, final: bool) -> None:
        """Text up to the next stop: only its backticks (code spans) and quotes change anything."""
        text, start = self.text, self.position
        piece = start
        for run in _BACKTICKS.finditer(text, start, stop):
            if run.end() == len(text) and not final:  # the run may go on in the next piece
                if run.start() == start:
                    raise NeedMore
                stop = run.start()
                break
            if self.span is None:
                self._count_quotes(piece, run.start())
            length = run.end() - run.start()
            if self.span is None:
                self.span = length
            elif self.span == length:
                self.span = None
            piece = run.end()
        if self.span is None:
            self._count_quotes(piece, stop)
        self._note_content(start, stop)
        self._prose(start, stop)
        self.position = stop

    def _count_quotes(self, start: int, end: int) -> None:
        text = self.text
        if text.find('"', start, end) >= 0:
            self.quotes += text.count('"', start, end)
        if text.find("\u201c", start, end) >= 0 or text.find("\u201d", start, end) >= 0:
            for mark in _CURLY.findall(text, start, end):  # in order: a closing mark before any opening is text
                self.curly = self.curly + 1 if mark == "\u201c" else max(0, self.curly - 1)

    def _quoted(self, index: int) -> bool:
        """Whether text at index is quoted: in a blockquote, inside quotation marks, or right after a quote."""
        before = self.text[index - 1] if index > 0 else self.tail
        return self.markdown or self.quoted or self.quotes % 2 == 1 or self.curly > 0 or before in _QUOTE_BEFORE

    def _note_content(self, start: int, end: int) -> None:
        if self.blank and self.text[start:end].strip():
            self.blank = False

    # -- reading blocks ---------------------------------------------------------------------------

    def _values(self, body: str, *, strict: bool, line: int, source: str, decoded: list[Any] | None = None) -> bool:
        """Reads one JSON value, an array, or several values in a row; True when it held a call."""
        stripped = body.strip()
        if not strict and not stripped.startswith(("{", "[")):
            return False  # an unlabeled fence of shell output or prose
        try:
            values = decoded if decoded is not None else decode_all(stripped)
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
        strict = strict or any(meant_as_call(element) for element in elements)
        if len(elements) == 1 and isinstance(elements[0], dict) and is_wrapper(elements[0]):
            shapes = shapes_of(elements[0], strict=strict)
        else:
            several = len(elements) != 1 or isinstance(values[0], list)
            shapes = []
            for index, element in enumerate(elements, start=1):
                shape = classify_element(element, strict=strict)
                if shape is not None:
                    shapes.append((index if several else None, shape))
        if not shapes:
            if self.scissors_line is None and any(scissors_shaped(element) for element in elements):
                self.scissors_line = line
            if not strict:
                return False
            self.blocks += 1
            self._emit(ParseProblem(f"block {self.blocks}: holds no tool call", self.blocks, line=line, hint=CALL_HINT))
            return True
        self._emit_shapes(shapes, line, source)
        return True

    def _emit_shapes(self, shapes: list[tuple[int | None, Shape]], line: int, source: str) -> None:
        self.blocks += 1
        block = self.blocks
        for item, shape in shapes:
            if isinstance(shape, Problem):
                message = f"{label_of(block, item)}: {shape.message}"
                self._emit(ParseProblem(message, block, item, line, shape.name, CALL_HINT, shape.code))
            elif lone_surrogate(shape.name) or lone_surrogate(shape.arguments):
                self._emit(
                    ParseProblem(f"{label_of(block, item)}: {UNICODE_PROBLEM}", block, item, line, None, CALL_HINT)
                )
            else:
                self._emit(ParsedCall(shape.name, shape.arguments, block, item, line, source, shape.call_id))
