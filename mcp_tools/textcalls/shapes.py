"""Which call a JSON value is: one object, an array, the legacy wrapper, or not a call at all.

Shared by the prose shape's fences, tags and bare objects; pure, and never raises for a value
that is not a call (it says None, or a Problem the model can act on).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcp_tools.core.tooling import json_type
from mcp_tools.inventory.catalog import is_alias, is_known
from mcp_tools.textcalls.calls import INVALID_TOOL_CALL, MISSING_ARGUMENTS

NAME_KEYS = ("tool", "tool_name", "name", "function")  # first present wins: in flat calls "name" may be an argument
ARGUMENT_KEYS = ("arguments", "args", "parameters", "input")
ENVELOPE_KEYS = frozenset({"id", "call_id", "type"})  # wrapper fields some formats add; carry no arguments
WRAPPER_KEYS = frozenset({"tool_calls", "role", "content", "id", "type"})  # the legacy {"tool_calls": [...]}
_NAMESPACED = re.compile(r"[A-Za-z][A-Za-z0-9]*[._][A-Za-z0-9_.-]+")
# what a text call's result looks like ({"name", "content"} or {"name", "error"}): echoed back, never a call
RESULT_KEYS = frozenset({"id", "name", "content", "error", "notice", "status", "times", "is_error", "structured"})
UNICODE_PROBLEM = "holds text that is not valid Unicode (a lone surrogate such as \\ud800); send the call as UTF-8 text"
_PLAIN_WORDS = frozenset({"search"})  # aliases that are also ordinary words: only a call under "tool"
DECODER = json.JSONDecoder(strict=False)  # fenced calls often carry raw line breaks inside file content


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class Problem:
    message: str
    name: str | None = None
    code: str = INVALID_TOOL_CALL


Shape = Call | Problem


def decode_all(text: str) -> list[Any]:
    """Every JSON value in the text, in order (models sometimes write one call per line)."""
    values: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        if position >= len(text):
            break
        value, position = DECODER.raw_decode(text, position)
        values.append(value)
    if not values:
        raise json.JSONDecodeError("Expecting value", text, 0)
    return values


def strip_fence(body: str) -> str:
    """`<tool_call>` content is sometimes fenced as well."""
    stripped = body.strip()
    if stripped.startswith(("```", "~~~")):
        first_newline = stripped.find("\n")
        stripped = stripped[first_newline + 1 :] if first_newline >= 0 else ""
        stripped = stripped.rstrip()
        stripped = stripped.rstrip("`~").rstrip() if stripped.endswith(("```", "~~~")) else stripped
    return stripped


def model_id(obj: dict[str, Any]) -> str | None:
    for key in ("id", "call_id"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:100]
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def is_wrapper(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("tool_calls"), list) and set(obj) <= WRAPPER_KEYS


def shapes_of(value: Any, *, strict: bool) -> list[tuple[int | None, Shape]]:
    """The calls a top-level value holds: one object, or the legacy {"tool_calls": [...]} wrapper."""
    if isinstance(value, dict) and is_wrapper(value):
        calls = value["tool_calls"]
        several = len(calls) != 1
        return [
            (index if several else None, classify_element(element, strict=True) or Problem("not a tool call"))
            for index, element in enumerate(calls, start=1)
        ]
    if isinstance(value, dict):
        shape = classify(value, strict=strict)
        return [] if shape is None else [(None, shape)]
    return []


def meant_as_call(element: Any) -> bool:
    """Whether a block's object shows it was written as a call, so each other object there must be one."""
    if not isinstance(element, dict):
        return False
    if classify(element, strict=False) is not None or is_wrapper(element):
        return True
    return bool({"tool", "tool_name", "function"} & set(element)) or (
        "name" in element and bool(set(ARGUMENT_KEYS) & set(element))
    )


def classify_element(element: Any, *, strict: bool) -> Shape | None:
    if isinstance(element, dict):
        return classify(element, strict=strict)
    return Problem(f"expected a JSON object, got {json_type(element)}") if strict else None


def arguments_of(value: Any, key: str) -> dict[str, Any] | Problem:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            parsed = DECODER.decode(value.strip())
        except json.JSONDecodeError as exc:
            return Problem(f"{key} is a string but not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})")
        except RecursionError:
            return Problem(f"{key} is a string holding JSON nested too deeply")
        if isinstance(parsed, dict):
            return parsed
        return Problem(f"{key} must be a JSON object, got {json_type(parsed)} inside the string")
    if value is None:
        return Problem(f"{key} is null: send the arguments as a JSON object ({{}} for none)", code=MISSING_ARGUMENTS)
    return Problem(f"{key} must be a JSON object of arguments, got {json_type(value)}")


def tool_name_like(name: str) -> bool:
    """A name that can only be meant as a tool: ours, a wire name, or another system's."""
    return is_known(name) and name not in _PLAIN_WORDS


def classify(obj: dict[str, Any], *, strict: bool) -> Shape | None:
    """Which call an object is, a problem if it is a broken call, None if it is not a call at all."""
    if is_result(obj):
        return None
    call_id = model_id(obj)
    function = obj.get("function")
    if isinstance(function, dict) and obj.get("type", "function") == "function":
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            return Problem("function.name is missing: expected the tool's name as a string")
        extra = sorted(set(obj) - {"function", *ENVELOPE_KEYS}) + sorted(set(function) - {"name", "arguments"})
        if extra:
            return Problem(f"unexpected {', '.join(extra)}; put every argument inside function.arguments", name)
        arguments = arguments_of(function.get("arguments", {}), "function.arguments")
        if isinstance(arguments, Problem):
            return Problem(arguments.message, name, arguments.code)
        return Call(name.strip(), arguments, call_id)

    name_key = next((key for key in NAME_KEYS if key in obj), None)
    argument_keys = [key for key in ARGUMENT_KEYS if key in obj]
    name = obj.get(name_key) if name_key else None
    if not isinstance(name, str) or not name.strip():
        looks_like_call = strict or ("arguments" in obj and set(obj) <= {*argument_keys, *ENVELOPE_KEYS, *NAME_KEYS})
        if not looks_like_call:
            return None
        if name_key is None:
            return Problem('no tool name: expected a "name" key holding the tool\'s name')
        return Problem(f"{name_key} must be the tool's name as a string, got {json_type(name)}")
    name = name.strip()

    tool_like = is_alias(name) or _NAMESPACED.fullmatch(name) is not None
    if argument_keys:
        extra = sorted(set(obj) - {name_key, *argument_keys, *ENVELOPE_KEYS})
        value = obj[argument_keys[0]]
        object_like = isinstance(value, dict) or (isinstance(value, str) and value.lstrip().startswith("{"))
        if not strict and not tool_like and (extra or not object_like):
            return None  # {"name": "Ada", "input": "hello"} in prose is data, not a call
        if len(argument_keys) > 1:
            return Problem(f"both {argument_keys[0]} and {argument_keys[1]} given; send the arguments once", name)
        if extra:
            shown = ", ".join(extra)
            return Problem(
                f"unexpected {shown} beside {name_key} and {argument_keys[0]}; put every argument inside "
                f"{argument_keys[0]}",
                name,
            )
        arguments = arguments_of(value, argument_keys[0])
        if isinstance(arguments, Problem):
            return Problem(arguments.message, name, arguments.code)
        return Call(name, arguments, call_id)

    # Flat: {"tool": "write_file", "path": ..., "content": ...}; the other keys are the arguments.
    # {"name": "files.read"} alone is a call without arguments: the tool's validation says what is missing.
    flat = strict or is_alias(name) or (name_key in ("tool", "tool_name") and tool_like) or tool_name_like(name)
    if not flat:
        return None
    return Call(name, {key: value for key, value in obj.items() if key != name_key}, call_id)


def is_result(obj: dict[str, Any]) -> bool:
    """A call's result as text calls return it, `{"name", "content"}` or `{"name", "error"}`: data, never run."""
    return "name" in obj and ("content" in obj or "error" in obj) and obj.keys() <= RESULT_KEYS


def lone_surrogate(value: Any) -> bool:
    """Whether a decoded value holds a lone surrogate (raw, or escaped as \\ud800): not valid Unicode.

    Walked without recursion, so any depth the decoder accepted is safe here.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-16-le")  # far faster than a search; fails exactly on a lone surrogate
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
