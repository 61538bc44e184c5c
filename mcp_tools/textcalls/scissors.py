"""The scissors-cat shape: a JSON array of calls, the delimiter ✂️🐱, then markdown for the chat.

`scissors_calls` validates the tool section before the delimiter, each call alone; the markdown
after it is never read for calls. Pure and bounded; never raises.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_tools.textcalls.calls import DELIMITER, JSON_HINT, MAX_CALLS, ParsedCall, ParseProblem, json_type
from mcp_tools.textcalls.names import is_known
from mcp_tools.textcalls.shapes import DECODER

SCISSORS_KEYS = ("id", "type", "operation", "parameters", "priority")
SCISSORS_HINT = (
    'Start the reply with [{"id": "1", "type": "files_read", "operation": "read a file", '
    f'"parameters": {{"path": "a.md"}}}}], then {DELIMITER}, then the message.'
)


def scissors_calls(section: str, line: int = 1) -> list[ParsedCall | ParseProblem]:
    """The calls of the tool section before ✂️🐱, each validated alone; never raises."""
    text = section.strip()
    if not text:
        return []
    if not text.startswith("["):
        return [_section_problem("the tool section before the delimiter must be a JSON array of calls", line)]
    leading = len(section) - len(section.lstrip())
    line += section.count("\n", 0, leading)
    items: list[ParsedCall | ParseProblem] = []
    position, index = 1, 0
    while True:
        position = _skip_space(text, position)
        if position < len(text) and text[position] == "]":
            if text[position + 1 :].strip():
                items.append(_section_problem("text after the array of calls, before the delimiter", line))
            return items
        if index:
            if position >= len(text) or text[position] != ",":
                items.append(_section_problem(f"expected , or ] after item {index}", line))
                return items
            position = _skip_space(text, position + 1)
        index += 1
        element_line = line + text.count("\n", 0, position)
        if index > MAX_CALLS:
            items.append(
                ParseProblem(
                    f"only the first {MAX_CALLS} tool calls were read; the rest, from line {element_line}, "
                    "were not run",
                    None,
                    line=element_line,
                    hint="Send fewer calls at a time.",
                )
            )
            return items
        try:
            element, position = DECODER.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            items.append(
                ParseProblem(
                    f"block 1, item {index}: invalid JSON ({why}); this call and any after it were not read",
                    1,
                    index,
                    element_line,
                    hint=JSON_HINT,
                )
            )
            return items
        items.append(_scissors_call(element, index, element_line))


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _section_problem(message: str, line: int) -> ParseProblem:
    return ParseProblem(f"block 1: {message}", 1, line=line, hint=SCISSORS_HINT)


def _scissors_call(element: Any, index: int, line: int) -> ParsedCall | ParseProblem:
    """One {"id", "type", "operation", "parameters", "priority"?} call, or what to fix in it."""

    def problem(message: str, name: str | None = None) -> ParseProblem:
        return ParseProblem(f"block 1, item {index}: {message}", 1, index, line, name, SCISSORS_HINT)

    if not isinstance(element, dict):
        return problem(f"expected a JSON object, got {json_type(element)}")
    kind = element.get("type")
    name = kind.strip() if isinstance(kind, str) else None
    extra = sorted(set(element) - set(SCISSORS_KEYS))
    if extra:
        return problem(f"unexpected {', '.join(extra)}; put every argument inside parameters", name)
    call_id = element.get("id")
    if isinstance(call_id, int) and not isinstance(call_id, bool):
        call_id = str(call_id)
    if not isinstance(call_id, str) or not call_id.strip():
        return problem("id must be the call's id as a non-empty string", name)
    if not name:
        return problem(f"type must be the tool's name as a string, got {json_type(kind)}")
    operation = element.get("operation")
    if not isinstance(operation, str):
        return problem(f"operation must be a string saying what the call does, got {json_type(operation)}", name)
    parameters = element.get("parameters")
    if not isinstance(parameters, dict):
        return problem(f"parameters must be a JSON object of arguments, got {json_type(parameters)}", name)
    priority = element.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int | float):
        return problem(f"priority must be a number, got {json_type(priority)}", name)
    combined = f"{name}_{operation.strip()}"
    if not is_known(name) and is_known(combined):
        name = combined  # {"type": "gmail", "operation": "send"}
    return ParsedCall(name, parameters, 1, index, line, "scissors", call_id.strip()[:100], priority, operation)
