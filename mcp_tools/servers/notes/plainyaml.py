"""The common shape of note frontmatter read without the YAML library, giving what it would give.

Most notes carry a few top-level keys, each with a one-word-or-phrase value or a list of such
items under it, all in plain ASCII:

    plugin-id: dataview
    aliases:
    - Dataview
    publish: true

Building those through PyYAML's constructor costs more than the rest of parsing the note. This
reads exactly that shape and nothing else: a line at column 0 that is `key:` (a block follows),
`key: value`, or `- item` / `-` under a `key:` without a value. A value or item must start with
a letter and hold only letters, digits, spaces, `_`, `.` and `-`, so YAML can only read it as a
string, except for the words that YAML reads as a boolean or null (`true`, `Off`, `null`...),
which are converted the way YAML converts them. Anything else (quotes, `#`, `:` in a value,
indentation, tabs, numbers, dates, flow collections, blank lines) returns None and the note's
frontmatter goes through the YAML library as before.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = r"[A-Za-z][A-Za-z0-9_-]{0,127}"  # YAML reads a plain key of at most 1,024 characters
_PLAIN = r"[A-Za-z][A-Za-z0-9_. -]*"
# A key line (`key:` or `key: value`) or an item line (`-` or `- item`), trailing spaces allowed.
_LINE_RE = re.compile(rf"(?:({_KEY}):(?: +({_PLAIN}))?|-(?: +({_PLAIN}))?) *")

# What YAML 1.1's resolver (PyYAML's) reads as a boolean or null among plain words; any other
# spelling of these words is a string, as it is for YAML.
_WORDS: dict[str, bool | None] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL"), None),
}


def _scalar(text: str | None) -> Any:
    if text is None:
        return None
    text = text.rstrip(" ")
    return _WORDS.get(text, text)  # a null word maps to None, which is its value


def plain_frontmatter(raw: str) -> dict[str, Any] | None:
    """The mapping YAML reads from `raw` when `raw` has the common shape above, else None."""
    if not raw.isascii():
        return None
    result: dict[str, Any] = {}
    key: str | None = None  # the key whose block the item lines fill
    items: list[Any] | None = None
    lines = raw.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        return None  # empty: YAML reads no document
    for line in lines:
        if line.endswith("\r"):
            line = line[:-1]
        match = _LINE_RE.fullmatch(line)
        if match is None:
            return None
        name, value, item = match.groups()
        if name is not None:
            if key is not None:
                result[key] = items
            if name in _WORDS:  # a key YAML reads as a boolean or null: left to YAML
                return None
            # a repeated key keeps the place of its first line and takes the last value, as in YAML
            if value is None:  # `key:`: a list of items follows, or nothing (null)
                key, items = name, None
                result[name] = None
            else:
                key, items = None, None
                result[name] = _scalar(value)
        else:
            if key is None:
                return None  # an item with no `key:` above it
            if items is None:
                items = []
            items.append(_scalar(item))
    if key is not None:
        result[key] = items
    return result
