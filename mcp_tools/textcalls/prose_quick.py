"""The quick paths of the prose scan: pieces that change nothing but counters, taken without a step.

Most pieces of a streamed reply are words inside a line or the middle of a written file. Plain words
are passed at once and what a step would note of them (code spans, quotes, blank lines, line numbers)
is noted in one go when the next step needs it; the pieces of one long JSON string in a fence or tag
are set aside whole. Either way a piece costs about a string search.
"""

from __future__ import annotations

import collections
import re

from mcp_tools.textcalls.prose_core import PARAGRAPH_END, STEP, STRING, STRING_REST, TICKS, WORDS, ScannerCore
from mcp_tools.textcalls.scissors import DELIMITER_STARTS

SCISSORS_START, MAC_ROMAN_START = sorted(DELIMITER_STARTS, reverse=True)  # ✂ and ‚: both beyond ASCII
# A line start that opens (or, at the piece's end, may still open) a fence or a blockquote.
_MAY_OPEN = r"[ \t]*+(?:>|```|~~~|[`~]{1,2}\Z)|[ \t]++\Z"
LINE_MAY_OPEN = re.compile(_MAY_OPEN)
BREAK_MAY_OPEN = re.compile(f"\n(?:{_MAY_OPEN})")
LINE_OPENERS = " \t>`~"  # the first characters LINE_MAY_OPEN can match at all


class QuickPaths(ScannerCore):
    """What the scanner takes without a step, and notes when the next step needs it."""

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
        end = STRING_REST.match(text, start).end()  # type: ignore[union-attr]
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
        last = collections.deque(PARAGRAPH_END.finditer(text), maxlen=1)
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
