"""The prose shape: JSON calls in ```json / ```tool_call fences, `<tool_call>` tags, or bare in the text.

This covers the JSON-in-prose and the code-block formats. `ProseScanner` reads a reply a piece
at a time: each construct is decided as soon as the text decides it, and the scanner says when it
needs more, so a reply split anywhere reads exactly as the whole. Calls inside inline code spans
and fences of other languages are prose, and so is quoted text (a blockquote, an HTML comment, a
quoted string: what a model quotes from an email or a page never runs); a bare object is a call
only when it names a known tool; a block that fails consumes its whole extent. Paragraphs before
the next place a call could start are passed in one step, and a JSON string is read in one, so
a megabyte costs a few string searches. Pure and bounded; broken calls come back as
ParseProblems the model can act on, never as exceptions.
"""

from __future__ import annotations

import collections
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_tools.catalog import is_known
from mcp_tools.textcalls.attempts import bare_shapes
from mcp_tools.textcalls.calls import (
    CALL_HINT,
    DELIMITER,
    JSON_HINT,
    MAX_CALLS,
    Event,
    ParsedCall,
    ParseProblem,
    Prose,
    label_of,
    prose_of,
)
from mcp_tools.textcalls.scissors import (
    DELIMITER_STARTS,
    DELIMITERS,
    LONGEST_DELIMITER,
    SCISSORS_HINT,
    scissors_shaped,
)
from mcp_tools.textcalls.shapes import (
    DECODER,
    NAME_KEYS,
    UNICODE_PROBLEM,
    Problem,
    Shape,
    classify_element,
    decode_all,
    is_wrapper,
    lone_surrogate,
    meant_as_call,
    shapes_of,
    strip_fence,
)

CALL_LABELS = frozenset({"tool_call", "tool", "function_call"})  # fences that can only mean a call
DATA_LABELS = frozenset({"json", ""})  # fences that may hold a call or just example data
TAGS = ("<tool_call>", "<function_call>")
_FENCE_LINE = re.compile(r"[ \t]*(?P<marker>`{3,}|~{3,})(?P<info>[^\n]*)")
_FENCE_PREFIX = re.compile(r"[ \t]*(?:`+|~+)?")
_STOPS = re.compile(f"[{{<\\n{DELIMITER_STARTS}]")  # what can change how the text around it reads
SCISSORS_START, MAC_ROMAN_START = sorted(DELIMITER_STARTS, reverse=True)  # ✂ and ‚: both beyond ASCII
# A line start that opens (or, at the piece's end, may still open) a fence or a blockquote.
_MAY_OPEN = r"[ \t]*+(?:>|```|~~~|[`~]{1,2}\Z)|[ \t]++\Z"
LINE_MAY_OPEN = re.compile(_MAY_OPEN)
BREAK_MAY_OPEN = re.compile(f"\n(?:{_MAY_OPEN})")
LINE_OPENERS = " \t>`~"  # the first characters LINE_MAY_OPEN can match at all
# Where a call, a tag, a comment, a fence or a delimiter could start; found with str.find, which is fast.
_CANDIDATES = ("{", "<", "```", "~~~", *DELIMITER_STARTS)
_BACKTICKS = re.compile(r"`+")
_BARE_START = re.compile(r"\{\s*\"")
_ONLY_SPACE = re.compile(r"[ \t\r]*")
_PARAGRAPH_END = re.compile(r"\n[ \t\r]*\n")
_CALL_KEY = re.compile(r"[\"'](?:tool|tool_name|name|function)[\"']\s*:")
_LEADING_CALL_KEY = re.compile(r"\{\s*\"(?:tool|tool_name|name|function)\"\s*:")
_KEY_PREFIX = re.compile(r"\{\s*\"(?P<key>\w*)(?P<quote>\")?(?P<space>\s*)(?P<colon>:)?")
_IN_STRING = re.compile(r"[\"\\\n]")
_STRING_REST = re.compile(r'(?:[^"\\]++|\\.)*+', re.DOTALL)  # to a string's closing quote, escapes skipped
_NAME_VALUE = re.compile(r'\{\s*"(?:tool|tool_name|name|function)"\s*:\s*"([^"\\\n]{1,200})"')
_NAME_SO_FAR = re.compile(r'\{\s*"(?:tool|tool_name|name|function)"\s*:\s*(?:"[^"\\\n]{0,200})?')
_CURLY = re.compile("[\u201c\u201d]")
_QUOTE_BEFORE = frozenset("'\u2018")
_BARE_STOPS = re.compile(r"[{}\"\\\n]")
_STRING_STOPS = re.compile(r"[\"\\\n]")
_TAG_STOPS = re.compile(r"[\"<]")
_NEWLINE = re.compile(r"\n")
_OPEN_BRACE = re.compile(r"\{\s*")
_SKIP_AT_LEAST = 1024  # characters ahead for the paragraph skip to pay for its searches
_HOLD_AFTER = 65_536  # characters of a held fence or tag kept in the working text


# Which quick path suits a piece (`ProseScanner.quick_path`): none, plain words, the middle of a JSON string,
# plain words while a run of backticks is held.
STEP, WORDS, STRING, TICKS = 0, 1, 2, 3


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
    quoted: bool = False  # a bare object inside quoted text: read past, never a call
    decoded: bool = False  # a JSON fence body was tried with the decoder from its start


class ProseScanner:
    """Calls and prose from the prose shape, fed in pieces; `finish` decides what is left."""

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
        self.scan: _Scan | None = None
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

    # -- driving -------------------------------------------------------------------------------

    def feed(self, text: str) -> list[Event]:
        passed = self.quick(text) if text else None
        if passed is not None:
            return [prose_of(passed)] if passed else []
        self._note_pending()
        self._settle()
        self.text += text
        return self._run(final=False)

    def _settle(self) -> None:
        """The pieces of one long JSON string taken by `quick`, set aside in one step."""
        run = self.string_run
        if run:
            self.string_run = []
            joined = run[0] if len(run) == 1 else "".join(run)
            if self.run_escaped:  # the backslash that ended the last piece waits for what it escapes, as a step
                self.run_escaped = False  # leaves it
                self._string_piece(joined[:-1])
                self.text = "\\"
            else:
                self._string_piece(joined)

    def quick(self, text: str) -> str | None:
        """A piece that changes nothing but counters, taken without a step: the prose to pass at once
        ("" when it goes on a long JSON string: nothing decided), or None when it needs a step.

        Most pieces of a streamed reply are words inside a line or the middle of a written file; this
        keeps their cost near a string search. A run of backticks that ends a piece of words inside a
        line is held, as a step holds it, and passed with the next piece. Non-empty text only.
        """
        scan = self.scan
        if scan is None:
            if self.text:
                return None
            carry = self.carry
            if carry:
                text = carry + text
            if text[-1] == "`":  # the run may go on in the next piece
                shown = text.rstrip("`")
                if not shown or shown[-1] == "\n" or not self._plain_words(shown):
                    return None
                self.carry = text[len(shown) :]
                return shown
            if not self._plain_words(text):
                return None
            self.carry = ""
            return text
        run = self.string_run
        if run:  # inside a long JSON string: nothing changed since its last piece
            if self.string_goes_on(text, 1 if self.run_escaped else 0):
                run.append(text)
                return ""
            self._settle()
            return None
        if (
            scan.in_string
            and scan.kind != "bare"
            and self.position == 0
            and scan.position == len(self.text)
            and self.string_goes_on(text, 0)
        ):
            run.append(text)  # set aside with the pieces after it when a step needs them
            return ""
        return None

    def quick_path(self) -> int:
        """Which quick path the next piece may take, as the last step left the scanner: WORDS (plain words
        between constructs), TICKS (the same, a run of backticks held from the last piece), STRING (the
        middle of a long JSON string in a fence or tag) or STEP (a full step).
        """
        scan = self.scan
        if scan is None:
            if self.text or self.comment or self.fence is not None or self.stopped_line is not None:
                return STEP
            return TICKS if self.carry else WORDS
        if (
            scan.in_string
            and scan.kind != "bare"
            and (self.string_run or (self.position == 0 and scan.position == len(self.text)))
        ):
            return STRING
        return STEP

    def at_line_start_now(self) -> bool:
        """Whether the next piece starts a line, the plain words passed since the last step included."""
        passed = self.words_passed
        return passed[-1][-1] == "\n" if passed else self.at_line_start

    def string_goes_on(self, text: str, start: int) -> bool:
        """Whether the JSON string goes on past the end of text (read from start); notes a last backslash."""
        end = _STRING_REST.match(text, start).end()  # type: ignore[union-attr]
        if end == len(text):
            self.run_escaped = False
            return True
        if end == len(text) - 1 and text[end] == "\\":  # it escapes the first character of the next piece
            self.run_escaped = True
            return True
        return False

    def _string_piece(self, text: str) -> None:
        """The middle of a JSON string in a fence or tag: set aside with the held text, never copied again."""
        held = len(self.text)
        if held:
            self.line_at(held)
            self._held.append(self.text)
            self.text = ""
            self.base += held
            self._counted -= held
            self._shift(held)
        self._held.append(text)  # read to its end: the scan goes on at the start of the next piece
        self._line += text.count("\n")
        self.base += len(text)
        scan = self.scan
        assert scan is not None
        scan.start -= len(text)
        scan.body_start -= len(text)

    def _plain_words(self, text: str) -> bool:
        """Lines and words holding nothing a call, tag, fence or quote could start with: passed at once.

        Most pieces of a streamed reply are such words; this keeps their cost near a string search.
        What the full step would note of them (code spans, quotes, blank lines, line numbers) is noted
        when the next step or the end needs it (`_note_pending`): none of it decides whether a piece
        is plain, and noting several pieces at once notes the same as noting each.
        """
        if (
            self.comment
            or self.fence is not None
            or self.stopped_line is not None
            or text[-1] == "`"  # a run of backticks may go on in the next piece
            or "{" in text  # what _STOPS finds, but a line break: a few searches are faster than the pattern
            or "<" in text
            or (not text.isascii() and (SCISSORS_START in text or MAC_ROMAN_START in text))
        ):
            return False
        if (self.at_line_start_now() and LINE_MAY_OPEN.match(text)) or ("\n" in text and BREAK_MAY_OPEN.search(text)):
            return False  # a line that may open a fence or a blockquote: read in full
        self.words_passed.append(text)
        return True

    def _note_pending(self) -> None:
        """Notes what the plain pieces passed since the last step hold, in one go."""
        pending = self.words_passed
        if pending:
            self.words_passed = []
            self._note_words(pending[0] if len(pending) == 1 else "".join(pending))
        if self.carry:  # the backticks held after them: where the next step starts, as a step leaves them
            self.text, self.carry = self.carry + self.text, ""

    def _note_words(self, text: str) -> None:
        self.base += len(text)
        self.tail = text[-1]
        if "\n" not in text:
            self.at_line_start = False
            self._words(text)
            return
        # a blank line ends every code span and every quote: only the words after the last one are still to note
        last = collections.deque(_PARAGRAPH_END.finditer(text), maxlen=1)
        if last:
            last_end = last[0].end()
            self._line += text.count("\n", 0, last_end)
            self.span, self.quoted, self.quotes, self.curly = None, False, 0, 0
            self.at_line_start, self.blank = True, True
            text = text[last_end:]
        for index, line in enumerate(text.split("\n")):
            if index:  # the line break: a blank line ends every code span and every quote
                if self.blank:
                    self.span, self.quoted, self.quotes, self.curly = None, False, 0, 0
                self.at_line_start, self.blank = True, True
                self._line += 1
            if line:
                self.at_line_start = False
                self._words(line)

    def _words(self, text: str) -> None:
        """Notes the code spans, quotes and content of words inside one line."""
        if "`" not in text and "\u201c" not in text and "\u201d" not in text:
            if self.span is None and '"' in text:
                self.quotes += text.count('"')
            if self.blank and not text.isspace():
                self.blank = False
        elif "``" not in text and self.span not in (None, 1):
            self.blank = False  # single backticks inside a code span opened by a longer run: all of it is code
        elif "``" not in text and '"' not in text and "\u201c" not in text and "\u201d" not in text:
            if text.count("`") % 2:  # single backticks open and close spans of one
                self.span = 1 if self.span is None else None
            self.blank = False
        else:
            self.text, self.position = text, 0
            self._inline(len(text), True)  # a run of backticks at the end ends at the line break or the piece's end
            self.text, self.position = "", 0
            self._prose_range = None

    def finish(self) -> list[Event]:
        self._note_pending()
        self._settle()
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
        if self.comment:
            self._comment(final)
            return
        if self.at_line_start:
            if self.fence is not None:
                self._prose_fence_line(final)
                return
            if self._fence_opening(final):
                return
            self.at_line_start = False
            indent = self.position
            while indent < len(self.text) and self.text[indent] in " \t":
                indent += 1
            if indent < len(self.text) and self.text[indent] == ">":
                self.quoted = True  # a blockquote: the rest of its paragraph quotes someone
        if self.fence is not None:
            end = self.text.find("\n", self.position)
            end = len(self.text) if end < 0 else end + 1
            self._prose(self.position, end)
            self.at_line_start = end <= len(self.text) and self.text[end - 1] == "\n"
            self.position = end
            return
        if self.span is None and self._skip_paragraphs():
            return
        text = self.text
        match = _STOPS.search(text, self.position)
        stop = len(text) if match is None else match.start()
        if stop > self.position:
            self._inline(stop, final)
            return
        char = text[stop]
        if char == "\n":
            if self.blank:  # a paragraph ends every code span and every quote
                self.span, self.quoted, self.quotes, self.curly = None, False, 0, 0
            self._prose(stop, stop + 1)
            self.position = stop + 1
            self.at_line_start, self.blank = True, True
        elif self.span is not None:  # inside inline code: text
            self.blank = False
            self._prose(stop, stop + 1)
            self.position = stop + 1
        elif char == "<":
            self._tag(final)
        elif char == "{":
            self._bare(final)
        else:
            self._delimiter(final)

    def _skip_paragraphs(self) -> bool:
        """Whole paragraphs before the next place a call could start are prose: passed in one step."""
        text, start = self.text, self.position
        if len(text) - start < _SKIP_AT_LEAST or self.base + start < self._no_break_before:
            return False  # a short piece, or no blank line before the candidate ahead: nothing to gain
        found, searched = self._break_ahead
        if found < self.base + start and not (found < 0 and searched >= self.base + len(text)):
            resume = start if found >= 0 else max(start, text.rfind("\n", start, max(start, searched - self.base)))
            match = _PARAGRAPH_END.search(text, resume)
            found = -1 if match is None else self.base + match.start()
            self._break_ahead = found, self.base + len(text)
        if found < self.base + start:
            return False  # no blank line in the text so far
        end = self._next_candidate(start)
        line_end = text.rfind("\n", start, end)
        while line_end > start:
            previous = text.rfind("\n", start, line_end)
            if previous < 0:
                break
            if text[previous + 1 : line_end].strip(" \t\r"):
                line_end = previous
                continue
            after = line_end + 1  # a blank line: everything before it is decided
            self._prose(start, after)
            self.position = after
            self.span, self.quoted, self.quotes, self.curly = None, False, 0, 0
            self.at_line_start, self.blank = True, True
            return True
        self._no_break_before = self.base + end
        return False

    def _next_candidate(self, start: int) -> int:
        """Where the next call could start; each needle's next place is remembered, so the text is searched once."""
        text, base = self.text, self.base
        end = base + len(text)
        nearest = len(text)
        for needle, (found, searched) in self._ahead.items():
            if found >= base + start:
                nearest = min(nearest, found - base)
                continue
            if found < 0 and searched >= end:
                continue
            resume = start if found >= 0 else max(start, searched - base - len(needle) + 1)
            limit = min(len(text), nearest + len(needle))  # only the nearest matters: search no further
            index = text.find(needle, resume, limit)
            self._ahead[needle] = (-1, base + limit) if index < 0 else (base + index, base + limit)
            if index >= 0:
                nearest = index
        return nearest

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

    def _comment(self, final: bool) -> None:
        """Inside <!-- -->: text that is never shown, and never a call."""
        end = self.text.find("-->", self.position)
        if end >= 0:
            self._prose(self.position, end + 3)
            self.position = end + 3
            self.comment = False
            return
        keep = len(self.text) if final else max(self.position, len(self.text) - 2)  # "--" may start the end
        if keep == self.position:
            raise NeedMore
        self._prose(self.position, keep)
        self.position = keep

    def _delimiter(self, final: bool) -> None:
        """✂️🐱 in prose: after scissors-cat calls that did not start the reply, say why nothing ran."""
        start = self.position
        rest = self.text[start : start + LONGEST_DELIMITER]
        found = next((delimiter for delimiter in DELIMITERS if rest.startswith(delimiter)), None)
        if found is None:
            if not final and len(rest) < LONGEST_DELIMITER and any(d.startswith(rest) for d in DELIMITERS):
                raise NeedMore
            self.blank = False
            self._prose(start, start + 1)
            self.position = start + 1
            return
        if self.scissors_line is not None and not self.markdown:
            self.markdown = True  # what follows is the message for the person, as in the scissors-cat format
            self.blocks += 1
            self._emit(
                ParseProblem(
                    f"block {self.blocks}: the tool calls before {DELIMITER} (line {self.scissors_line}) were not run: "
                    "a scissors-cat reply must start with its JSON array of calls, and this one starts with text "
                    "or a fence",
                    self.blocks,
                    line=self.scissors_line,
                    hint=SCISSORS_HINT,
                )
            )
        self.blank = False
        self._prose(start, start + len(found))
        self.position = start + len(found)

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
        self.span, self.quoted, self.quotes, self.curly = None, False, 0, 0
        label = info.split()[0].lower() if info else ""
        if self.markdown or (label not in CALL_LABELS and label not in DATA_LABELS):
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
        match = _STRING_REST.match(text, scan.position)
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

    # -- tags ----------------------------------------------------------------------------------

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
        quoted = self._quoted(start)
        call_key = not quoted and self._leading_call_key(start, final)
        self.scan = _Scan("bare", start, start, strict=call_key, quoted=quoted)
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

    # -- reading blocks ------------------------------------------------------------------------

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
