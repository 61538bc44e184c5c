"""Text made storable by either engine before it is bound.

PostgreSQL's `text` refuses NUL, and neither SQLite nor PostgreSQL takes a lone surrogate (Python
strings can hold one; UTF-8 cannot). Text bound for a store has each such character replaced by
its `\\uXXXX` escape, written out: visible to whoever reads the row, valid inside a JSON string, and
the same on both engines, so a value looked up is escaped the way it was when it was stored.
"""

from __future__ import annotations

import re
from typing import Any

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match[0]):04x}"


def storable_text(text: str) -> str:
    """`text` with NUL and lone surrogates written as `\\uXXXX`; unchanged (the same object) when
    it has none."""
    if text.isascii():
        return text if "\x00" not in text else UNSTORABLE.sub(_escaped, text)
    return UNSTORABLE.sub(_escaped, text)


def storable_params(params: Any) -> tuple[Any, ...]:
    """The parameters of one statement, each string made storable."""
    return tuple(storable_text(value) if isinstance(value, str) else value for value in params)


def storable_value(value: Any) -> Any:
    """A copy of a JSON-like value whose strings (keys too) are all storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_value(key): storable_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable_value(item) for item in value]
    return value
