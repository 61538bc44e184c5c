"""Reading a reply as it streams: prose out at once, each call as soon as it is complete.

`StreamParser` takes text or bytes in pieces split anywhere (inside the delimiter, a UTF-8
sequence or a JSON string) and returns events: `Prose` to show now, `ParsedCall`s and
`ParseProblem`s. It holds back only what could still be the start of a delimiter, a fence, a
tag or a call. `parse_reply` is the same parser fed the whole reply at once, so a reply split
anywhere reads exactly as the whole.

Which shape a reply has is decided from its start (`format="auto"`): a JSON array of calls
followed by ✂️🐱 is the scissors-cat format; anything else is the prose format. A host that
knows its model writes the scissors-cat format says `format="scissors"`: then a reply without
the delimiter is all markdown and runs nothing.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_tools.textcalls.calls import MAX_TEXT_CHARS, Event, ParsedCall, ParseProblem, Prose
from mcp_tools.textcalls.prose import (
    BREAK_MAY_OPEN,
    LINE_MAY_OPEN,
    LINE_OPENERS,
    MAC_ROMAN_START,
    SCISSORS_START,
    STEP,
    STRING,
    TICKS,
    WORDS,
    ProseScanner,
)
from mcp_tools.textcalls.scissors import DELIMITERS, LONGEST_DELIMITER, SCISSORS_KEYS, scissors_calls

FORMATS = ("auto", "scissors", "prose")
_ARRAY, _MARKDOWN = 4, 5  # quick paths of the parser's own, beside the scanner's WORDS, STRING and TICKS


_ARRAY_STOPS = re.compile(r'[\[\]{}"\\]')
_STRING_STOPS = re.compile(r'["\\]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_utf8_decode = codecs.utf_8_decode
_new_tuple = tuple.__new__  # prose_of(text) is _new_tuple(Prose, (text,)): made in line, one per piece
_LONGEST = LONGEST_DELIMITER
_FIRST_KEY = re.compile(r'"(\w{0,20})"?')
_FENCE_CLOSE = re.compile(r"`{3,}|~{3,}")
_FENCE_START = re.compile(r"(`{3,}|~{3,})[ \t]*+(?:json[ \t]*+)?\r?\n", re.IGNORECASE)


@dataclass
class ParsedReply:
    """A whole reply read: its shape, the calls and problems in order, and the text for the person."""

    format: str  # "scissors" or "prose"
    items: list[ParsedCall | ParseProblem]
    markdown: str

    @property
    def calls(self) -> list[ParsedCall]:
        return [item for item in self.items if isinstance(item, ParsedCall)]

    @property
    def problems(self) -> list[ParseProblem]:
        return [item for item in self.items if isinstance(item, ParseProblem)]


@dataclass
class StreamParser:
    """Feed it pieces of a reply with `feed`, then call `flush` once; `reply` holds the whole result."""

    format: str = "auto"
    known: Callable[[str], bool] | None = None  # names a bare call in prose may have (default: `names.is_known`)
    shape: str | None = None  # decided: "scissors" or "prose"
    _pending: bytes = b""  # the start of a UTF-8 sequence that the next piece completes
    _head: str = ""  # text held while the shape is undecided
    _pieces: list[str] = field(default_factory=list)  # text after _head, taken while inside the call array
    _pieces_length: int = 0
    _array_found: int | None = None  # where the call array ends, found piece by piece
    _array_scan: tuple[int, int, bool] | None = None  # (position, depth, in_string)
    _searched: int = 0  # how far the delimiter was looked for
    _scanner: ProseScanner = field(init=False)
    _markdown_started: bool = False
    _read: int = 0  # characters taken in for reading (up to MAX_TEXT_CHARS)
    _cut: bool = False
    _items: list[ParsedCall | ParseProblem] = field(default_factory=list)
    _prose: list[str] = field(default_factory=list)
    _flushed: bool = False
    _unicode_reported: bool = False
    _surrogates: bool = False  # text came in as str, not all ASCII: it may hold lone surrogates
    _finished: bool = False
    _quick: int = STEP  # the quick path the next piece may take (see _quick_path)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}")
        self._scanner = ProseScanner(self.known)
        if self.format == "prose":
            self.shape = "prose"
        self._quick = self._quick_path()

    def feed(self, chunk: str | bytes) -> list[Event]:
        """The events this piece decides; prose comes out as soon as nothing could still change it."""
        # Most pieces of a long reply change no state worth a step: words inside a line, the middle of a
        # long JSON string, markdown after the delimiter. `_quick` says which of these the state allows;
        # such a piece costs a few string searches, in line here since a reply streams in thousands.
        quick = self._quick
        if quick > 0 and type(chunk) is bytes:
            try:
                text = chunk.decode()  # a whole UTF-8 piece, as most are: the quickest decoder
            except UnicodeDecodeError:  # a sequence split at the piece's end, or bytes that are not UTF-8
                text, used = _utf8_decode(chunk, "replace", False)
                if used < len(chunk):
                    self._pending = chunk[used:]
                    self._quick = -quick
        elif quick < 0 and type(chunk) is bytes:  # the last piece ended inside a UTF-8 sequence: this one ends it
            chunk, self._pending, self._quick = self._pending + chunk, b"", -quick
            return self.feed(chunk)
        elif quick > 0 and type(chunk) is str:
            text = chunk
            if not text.isascii():
                self._surrogates = True  # it may hold lone surrogates
                if _lone_surrogate(text):
                    return self._feed_text(text)
        else:
            return self._feed(chunk)
        read = self._read + len(text)
        if read > MAX_TEXT_CHARS or not text:
            return self._feed_text(text)
        if quick == WORDS:
            if (
                "{" not in text
                and "<" not in text
                and text[-1] != "`"  # a run of backticks may go on in the next piece
                and (text.isascii() or (SCISSORS_START not in text and MAC_ROMAN_START not in text))
                and (
                    "\n" not in text  # then the searches that find what a line break could open, cheapest first
                    or not ("\n " in text or "\n\t" in text or "\n>" in text or "\n`" in text or "\n~" in text)
                    or BREAK_MAY_OPEN.search(text) is None
                )
                and (
                    text[0] not in LINE_OPENERS
                    or not self._scanner.at_line_start_now()
                    or LINE_MAY_OPEN.match(text) is None
                )
            ):  # plain words, as ProseScanner.quick passes them
                self._scanner.words_passed.append(text)
                self._read = read
                self._prose.append(text)
                return [_new_tuple(Prose, (text,))]  # prose_of, in line
            return self._words(text, read)
        if quick == STRING:
            scanner = self._scanner
            if text[-1] != "\\" and (
                '"' not in text
                or (not scanner.run_escaped and "\\\\" not in text and text.count('"') == text.count('\\"'))
            ):  # every quote escaped, every backslash an escape: the string goes on, as string_goes_on finds
                scanner.run_escaped = False
            elif not scanner.string_goes_on(text, 1 if scanner.run_escaped else 0):
                return self._feed_text(text)
            scanner.string_run.append(text)
            self._read = read
            return []
        if quick == _MARKDOWN:
            self._read = read
            self._prose.append(text)
            return [_new_tuple(Prose, (text,))]  # prose_of, in line
        if quick == _ARRAY:
            if '"' in text or "\\" in text:
                return self._feed_text(text)
            length = self._pieces_length + len(text)  # inside a string of the call array: nothing to scan
            self._pieces.append(text)
            self._pieces_length = length
            _, depth, _ = self._array_scan  # type: ignore[misc]
            self._array_scan = (len(self._head) + length, depth, True)
            self._read = read
            return []
        return self._words(text, read)  # TICKS

    def _words(self, text: str, read: int) -> list[Event]:
        """Words after a held run of backticks, or ending in one, as ProseScanner.quick passes them; else a step."""
        scanner = self._scanner
        passed = scanner.quick(text)
        if passed is None:
            return self._feed_text(text)
        self._read = read
        quick = TICKS if scanner.carry else WORDS
        self._quick = -quick if self._pending else quick
        if passed:
            self._prose.append(passed)
            return [_new_tuple(Prose, (passed,))]  # prose_of, in line
        return []

    def _quick_path(self) -> int:
        """The quick path the next piece may take; negative while bytes of a split UTF-8 sequence wait."""
        if self._flushed or self._cut:
            return STEP
        quick = STEP
        if self.shape == "prose":
            quick = self._scanner.quick_path()
        elif self.shape == "scissors":
            quick = _MARKDOWN if self._markdown_started else STEP
        elif self._array_scan is not None and self._array_found is None:
            position, _, in_string = self._array_scan
            if in_string and position == len(self._head) + self._pieces_length:
                quick = _ARRAY
        return -quick if self._pending else quick

    def _feed(self, chunk: str | bytes) -> list[Event]:
        """A piece decoded as it always was, then taken with a full step."""
        if self._flushed:
            raise RuntimeError("the parser was flushed; start a new one for the next reply")
        if type(chunk) is bytes and not self._pending:
            try:
                text = chunk.decode()
            except UnicodeDecodeError:
                text, used = _utf8_decode(chunk, "replace", False)
                self._pending = chunk[used:] if used < len(chunk) else b""
        elif isinstance(chunk, bytes | bytearray):
            if self._pending:
                chunk = self._pending + chunk
            text, used = _utf8_decode(chunk, "replace", False)  # valid UTF-8 never holds a lone surrogate
            self._pending = chunk[used:] if used < len(chunk) else b""
        else:
            text = chunk
            self._surrogates = self._surrogates or not text.isascii()
        return self._feed_text(text)

    def _feed_text(self, text: str) -> list[Event]:
        """Decoded text taken with a full step; then which quick path suits the next piece."""
        events = self._step(text)
        self._quick = self._quick_path()
        return events

    def _step(self, text: str) -> list[Event]:
        if not text:
            return []
        read = self._read + len(text)
        if read <= MAX_TEXT_CHARS and self.shape is not None and not (self._surrogates and _lone_surrogate(text)):
            if self.shape == "prose":
                passed = self._scanner.quick(text)
                if passed is not None:
                    self._read = read
                    if passed:
                        self._prose.append(passed)
                        return [_new_tuple(Prose, (passed,))]  # prose_of, in line
                    return []
            elif self._markdown_started:
                self._read = read
                self._prose.append(text)
                return [_new_tuple(Prose, (text,))]  # prose_of, in line
        elif read <= MAX_TEXT_CHARS and self._array_scan is not None and self._array_found is None:
            self._read = read  # inside the call array: a piece costs one search of itself
            if self._array_piece(text) is None:
                return []
            return self._record(self._route("", final=False))
        return self._record(self._take(text, final=False))

    def flush(self) -> list[Event]:
        """The end of the reply: decides whatever was held back."""
        if self._flushed:
            return []
        text = _utf8_decode(self._pending, "replace", True)[0] if self._pending else ""
        self._pending = b""
        events = self._take(text, final=False) if text else []
        if not self._finished:
            events += self._finish()
        if self._cut:
            events.append(
                ParseProblem(
                    f"the reply is longer than {MAX_TEXT_CHARS} characters; only the first {MAX_TEXT_CHARS} were "
                    "read for tool calls",
                    None,
                )
            )
        self._flushed = True
        self._quick = STEP
        return self._record(events)

    @property
    def reply(self) -> ParsedReply:
        if not self._flushed:
            raise RuntimeError("call flush() before reading the whole reply")
        return ParsedReply(self.shape or "prose", list(self._items), "".join(self._prose))

    # -- inside --------------------------------------------------------------------------------

    def _record(self, events: list[Event]) -> list[Event]:
        merged: list[Event] = []
        for event in events:
            if isinstance(event, Prose):
                if not event.text:
                    continue
                # text no encoder can write: shown as U+FFFD, and said once
                if self._surrogates and _lone_surrogate(event.text):
                    event = Prose(_SURROGATE.sub("\ufffd", event.text))
                    if not self._unicode_reported:
                        self._unicode_reported = True
                        problem = ParseProblem(
                            "the reply holds text that is not valid Unicode (a lone surrogate); it is shown as \ufffd",
                            None,
                            hint="Send the reply as UTF-8 text.",
                        )
                        self._items.append(problem)
                        merged.append(problem)
                self._prose.append(event.text)
                if merged and isinstance(merged[-1], Prose):
                    merged[-1] = Prose(merged[-1].text + event.text)
                    continue
            else:
                self._items.append(event)
            merged.append(event)
        return merged

    def _take(self, text: str, final: bool) -> list[Event]:
        """Reads up to MAX_TEXT_CHARS characters; past that, text is prose that is never read for calls."""
        if self._cut:
            return [Prose(text)]
        room = MAX_TEXT_CHARS - self._read
        if len(text) <= room:
            self._read += len(text)
            return self._route(text, final)
        self._read = MAX_TEXT_CHARS
        events = self._route(text[:room], final)
        events += self._finish()
        self._cut = True
        return [*events, Prose(text[room:])]

    def _finish(self) -> list[Event]:
        self._finished = True
        events = self._route("", final=True)
        if self.shape == "prose":
            events += self._scanner.finish()
        return events

    def _route(self, text: str, final: bool) -> list[Event]:
        if self.shape == "prose":
            return self._scanner.feed(text) if text else []
        if self.shape == "scissors":
            return self._markdown(text)
        if self._array_scan is not None and not final and self._array_found is None:
            if self._array_piece(text) is None:
                return []  # inside the call array: everything before it was decided when the scan began
            self._join_head()
        else:
            self._join_head()
            head, self._head = self._head, ""
            head += text  # the only reference: grown in place, not copied each piece
            self._head = head
        decided = self._decide(final)
        if decided is None:
            return []
        head, self._head = self._head, ""
        if isinstance(decided, str):  # "prose"
            self.shape = "prose"
            return self._scanner.feed(head)
        section_end, markdown_start = decided
        self.shape = "scissors"
        items: list[Event] = list(scissors_calls(head[:section_end]))
        return items + self._markdown(head[markdown_start:])

    def _markdown(self, text: str) -> list[Event]:
        """After the delimiter everything is markdown for the person; it is never read for calls."""
        if not self._markdown_started:
            text = text.lstrip()
            self._markdown_started = bool(text)
        return [Prose(text)] if text else []

    def _decide(self, final: bool) -> tuple[int, int] | str | None:
        """(end of the tool section, start of the markdown), "prose", or None while undecided."""
        head = self._head
        if self.format == "scissors":
            found = _first_delimiter(head, max(0, self._searched - _LONGEST))
            self._searched = len(head)
            if found is not None:
                return found
            return (0, 0) if final else None  # no delimiter: the whole reply is markdown, nothing runs
        start = len(head) - len(head.lstrip())
        if start == len(head):
            return "prose" if final else None
        section = start
        if head[start] in "`~":  # the array fenced as ```json, as models often write it
            fence = _FENCE_START.match(head, start)
            if fence is None:
                undecided = "\n" not in head[start:] and len(head) - start < 16
                return None if undecided and not final else "prose"
            section = _skip(head, fence.end())
            if section == len(head):
                return "prose" if final else None
        if head[section] not in "[{":
            return "prose"
        after = _skip(head, section + 1)
        if after == len(head):
            return "prose" if final else None
        if head[after] not in ("{]" if head[section] == "[" else '"}'):
            return "prose"  # [a markdown link] or {a brace in words}, not calls
        if head[section] == "{":  # one call without its array: only a scissors-cat key may open it
            key = _FIRST_KEY.match(head, after)
            if key is None or key.end() == len(head):
                return "prose" if final or key is None else None
            if key.group(1) not in SCISSORS_KEYS:
                return "prose"  # {"name": ...}: a call in prose, read as it streams
        end = self._array_end(section)
        if end is None:
            return "prose" if final else None
        rest_start = _skip(head, end)
        if section != start:  # the fence closes before the delimiter
            closing = _FENCE_CLOSE.match(head, rest_start)
            if closing is None:
                return None if not final and len(head) - rest_start < 3 else "prose"
            rest_start = _skip(head, closing.end())
        return _delimiter_at(head, rest_start, final)

    def _array_end(self, start: int) -> int | None:
        """The end of the balanced JSON array at start, strings respected; resumes where it stopped."""
        if self._array_found is not None:
            return self._array_found
        position, depth, in_string = self._array_scan or (start, 0, False)
        return self._array_scan_text(self._head, 0, position, depth, in_string)

    def _array_piece(self, text: str) -> int | None:
        """The array scan carried on over one more piece, kept aside: the held text is never copied while it
        grows, and each piece is searched once."""
        offset = len(self._head) + self._pieces_length
        self._pieces.append(text)
        self._pieces_length += len(text)
        assert self._array_scan is not None
        position, depth, in_string = self._array_scan
        return self._array_scan_text(text, offset, position, depth, in_string)

    def _array_scan_text(self, text: str, offset: int, position: int, depth: int, in_string: bool) -> int | None:
        """Scans text (at absolute offset) from absolute position; the end of the array, absolute, or None."""
        local = position - offset
        if local < 0:  # a backslash ended the last piece: this piece starts with what it escapes
            local = 1
        while True:
            match = (_STRING_STOPS if in_string else _ARRAY_STOPS).search(text, local)
            if match is None:
                local = len(text)
                break
            char, local = match.group(), match.end()
            if char == "\\":
                if local >= len(text):
                    local -= 1  # the escaped character is still to come
                    break
                local += 1
            elif char == '"':
                in_string = not in_string
            elif char in "[{":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    self._array_found = offset + local
                    return self._array_found
        self._array_scan = (offset + local, depth, in_string)
        return None

    def _join_head(self) -> None:
        """The pieces taken inside the call array, joined to the held text once."""
        if self._pieces:
            self._head = "".join([self._head, *self._pieces])
            self._pieces, self._pieces_length = [], 0


def _lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-16-le")  # far faster than a search; fails exactly on a lone surrogate
    except UnicodeEncodeError:
        return True
    return False


def _first_delimiter(head: str, since: int) -> tuple[int, int] | None:
    """(start, end) of the first delimiter in head from since (the longer where two start together), or None."""
    found = [(head.find(delimiter, since), delimiter) for delimiter in DELIMITERS]
    found = [(index, delimiter) for index, delimiter in found if index >= 0]
    if not found:
        return None
    index, delimiter = min(found, key=lambda pair: (pair[0], -len(pair[1])))
    return index, index + len(delimiter)


def _delimiter_at(head: str, start: int, final: bool) -> tuple[int, int] | str | None:
    """(start, end) of the delimiter right after the call array, "prose" without one, None while undecided."""
    rest = head[start : start + _LONGEST]
    for delimiter in DELIMITERS:
        if rest.startswith(delimiter):
            return start, start + len(delimiter)
    if not final and len(rest) < _LONGEST and any(delimiter.startswith(rest) for delimiter in DELIMITERS):
        return None
    return "prose"


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def parse_reply(text: str | bytes, format: str = "auto", known: Callable[[str], bool] | None = None) -> ParsedReply:
    """The whole reply read at once: the same parser as for a stream, fed one piece."""
    parser = StreamParser(format, known)
    parser.feed(text)
    parser.flush()
    return parser.reply


def parse_tool_calls(text: str) -> list[ParsedCall | ParseProblem]:
    """The calls in a model's reply, in order, with a ParseProblem for each broken one; never raises.

    Work is bounded: only the first MAX_TEXT_CHARS characters are read and at most MAX_CALLS
    items are returned; whatever was cut is reported as a final ParseProblem.
    """
    return parse_reply(text).items
