"""What the parsers hand the runner: a call as the model wrote it, or a problem to report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_TEXT_CHARS = 1_000_000
MAX_CALLS = 50

DELIMITER = "\u2702\ufe0f\U0001f431"  # ✂️🐱: the scissors-cat format's end of the tool section
CALL_HINT = 'Write each call as {"name": "files.read", "arguments": {...}} in a ```json fence.'
# What other systems call the mistakes a call can hold; each failed text call says which, beside our error kind.
INVALID_TOOL_NAME = "INVALID_TOOL_NAME"  # no tool has the name (the answer says the closest)
MISSING_ARGUMENTS = "MISSING_ARGUMENTS"  # no arguments object where one must be
INVALID_TOOL_CALL = "INVALID_TOOL_CALL"  # any other call that cannot be read
JSON_HINT = "Fix the JSON (quotes, commas, braces, escaped line breaks) and send the call again."


@dataclass(frozen=True)
class ParsedCall:
    """One call as the model wrote it: the name before alias resolution and an argument object."""

    name: str
    arguments: dict[str, Any]
    block: int
    item: int | None = None  # 1-based position when the block held several calls
    line: int = 1
    source: str = "fence"  # fence, tag, text or scissors
    call_id: str | None = None  # the model's own id for the call, when it gave one
    priority: float = 0  # the scissors-cat format runs higher priority first
    operation: str | None = None  # the scissors-cat format's words for what the call does

    @property
    def label(self) -> str:
        return label_of(self.block, self.item)

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "name": self.name, "arguments": self.arguments, "line": self.line}


@dataclass(frozen=True)
class ParseProblem:
    """A block that looks like a call but cannot be one; the message says what to fix."""

    message: str
    block: int | None
    item: int | None = None
    line: int = 1
    name: str | None = None
    hint: str | None = None
    code: str = INVALID_TOOL_CALL

    @property
    def label(self) -> str:
        return label_of(self.block, self.item)

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "problem": self.message, "line": self.line, "code": self.code}


def label_of(block: int | None, item: int | None) -> str:
    if block is None:
        return "reply"
    return f"block {block}" + (f", item {item}" if item is not None else "")


class Prose(tuple[str]):
    """Text of the reply that is for the person, not a call: streamed as soon as it is decided.

    A tuple underneath, so that a stream can make one for each piece of words at the cost of a tuple
    (`prose_of`). Otherwise it behaves as the frozen dataclass of one field it replaces: `text`,
    immutable, hashable, equal only to another Prose with the same text, not ordered.
    """

    __slots__ = ()
    __match_args__ = ("text",)

    def __new__(cls, text: str) -> Prose:
        return tuple.__new__(cls, (text,))

    @property
    def text(self) -> str:
        return self[0]

    def __repr__(self) -> str:
        return f"Prose(text={self[0]!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is Prose:
            return self[0] == other[0]
        return False if isinstance(other, tuple) else NotImplemented  # a plain tuple would answer True

    def __ne__(self, other: object) -> bool:
        if other.__class__ is Prose:
            return self[0] != other[0]
        return True if isinstance(other, tuple) else NotImplemented

    def __lt__(self, other: object) -> bool:
        return NotImplemented

    __le__ = __gt__ = __ge__ = __lt__
    __hash__ = tuple.__hash__

    def __getnewargs__(self) -> tuple[str]:  # copy and pickle call __new__ with the text
        return (self[0],)


_new_tuple = tuple.__new__


def prose_of(text: str) -> Prose:
    """The same as Prose(text), without the call of its __new__: what a stream does in line for each piece."""
    return _new_tuple(Prose, (text,))


Event = Prose | ParsedCall | ParseProblem
