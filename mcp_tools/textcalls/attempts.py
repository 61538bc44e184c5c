"""Call attempts in prose: an object written as a call to a tool we do not have is answered, not dropped.

A bare object in prose is a call only when it names a known tool (`shapes`, `prose`), so that
data such as `{"name": "Ada", "age": 36}` stays data. An object shaped exactly as a call, a name
key and an arguments key and nothing else, with a name in `server.method` form
(`{"name": "fs.readFile", "arguments": {...}}`), or an arguments object with no name at all, can
only be a call the model believes it made: it is answered with the reason it could not run, so
the model can correct itself. Quoted text, code spans and the other places that never run keep
their rule: the prose scanner does not ask here for them.

Each answer carries a code in the terms other systems use for the same mistakes, beside our own
error kind: `INVALID_TOOL_NAME` (no tool has that name; the answer says the closest one),
`MISSING_ARGUMENTS` (no arguments object where one must be) and `INVALID_TOOL_CALL` (any other
call that cannot be read).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mcp_tools.textcalls.shapes import ARGUMENT_KEYS, ENVELOPE_KEYS, NAME_KEYS, Shape, is_wrapper, shapes_of

SERVER_METHOD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z][A-Za-z0-9_-]*)+")  # fs.readFile, files.read, a.b.c


def bare_shapes(value: Any, known: Callable[[str], bool]) -> list[tuple[int | None, Shape]]:
    """The calls (and call attempts) a bare object in prose holds; empty when it is data.

    An object naming a known tool (`known(name)`: ours, a wire name or an alias) is a call as
    before; one only shaped as a call (`attempted`) is one too, so its unknown name is answered.
    """
    shapes = shapes_of(value, strict=False)
    if is_wrapper(value):
        return shapes  # the legacy wrapper: every element is a call or a problem, as in a fence
    named = [(item, shape) for item, shape in shapes if shape.name is not None and known(shape.name)]
    if named or not isinstance(value, dict) or not attempted(value):
        return named
    return shapes


def attempted(obj: dict[str, Any]) -> bool:
    """Whether an object can only be a call: a name key and an arguments key and nothing else (an
    id or type beside them aside), the name in `server.method` form; or `arguments` with no name."""
    keys = obj.keys() - ENVELOPE_KEYS
    if keys == {"arguments"}:
        return isinstance(obj["arguments"], dict)
    if len(keys) != 2:
        return False
    name_key = next((key for key in NAME_KEYS if key in keys), None)
    if name_key is None or not keys - {name_key} <= set(ARGUMENT_KEYS):
        return False
    name = obj[name_key]
    return isinstance(name, str) and SERVER_METHOD.fullmatch(name.strip()) is not None
