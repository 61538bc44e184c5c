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

import re

from mcp_tools.textcalls.calls import CALL_HINT, DELIMITER, MAX_CALLS, Event, ParseProblem, prose_of
from mcp_tools.textcalls.prose_bare import BareReader
from mcp_tools.textcalls.prose_blocks import BlockReader
from mcp_tools.textcalls.prose_core import PARAGRAPH_END, STEP, STRING, TICKS, WORDS, CallLimit, NeedMore
from mcp_tools.textcalls.prose_quick import (
    BREAK_MAY_OPEN,
    LINE_MAY_OPEN,
    LINE_OPENERS,
    MAC_ROMAN_START,
    SCISSORS_START,
    QuickPaths,
)
from mcp_tools.textcalls.scissors import DELIMITER_STARTS, DELIMITERS, LONGEST_DELIMITER, SCISSORS_HINT

__all__ = [
    "BREAK_MAY_OPEN",
    "LINE_MAY_OPEN",
    "LINE_OPENERS",
    "MAC_ROMAN_START",
    "SCISSORS_START",
    "STEP",
    "STRING",
    "TICKS",
    "WORDS",
    "NeedMore",
    "ProseScanner",
]

_STOPS = re.compile(f"[{{<\\n{DELIMITER_STARTS}]")  # what can change how the text around it reads
_SKIP_AT_LEAST = 1024  # characters ahead for the paragraph skip to pay for its searches


class ProseScanner(QuickPaths, BlockReader, BareReader):
    """Calls and prose from the prose shape, fed in pieces; `finish` decides what is left."""

    # -- driving ----------------------------------------------------------------------------------

    def feed(self, text: str) -> list[Event]:
        passed = self.quick(text) if text else None
        if passed is not None:
            return [prose_of(passed)] if passed else []
        self._note_pending()
        self._settle()
        self.text += text
        return self._run(final=False)

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

    def _run(self, final: bool) -> list[Event]:
        try:
            while self.stopped_line is None and (
                self.position < len(self.text) or (final and self.scan is not None)  # a held block ends here
            ):
                self._step(final)
        except NeedMore:
            pass
        except CallLimit:
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

    # -- one construct at a time ------------------------------------------------------------------

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
            match = PARAGRAPH_END.search(text, resume)
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
