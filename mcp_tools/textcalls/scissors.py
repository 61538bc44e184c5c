"""The scissors-cat shape: a JSON array of calls, the delimiter ✂️🐱, then markdown for the chat.

`scissors_calls` validates the tool section before the delimiter, each call alone; the markdown
after it is never read for calls. Pure and bounded; never raises.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_tools.core.tooling import json_type
from mcp_tools.inventory.catalog import is_known
from mcp_tools.textcalls.calls import DELIMITER, JSON_HINT, MAX_CALLS, ParsedCall, ParseProblem
from mcp_tools.textcalls.shapes import DECODER, UNICODE_PROBLEM, lone_surrogate

SCISSORS_KEYS = ("id", "type", "operation", "parameters", "priority")
SCISSORS_HINT = (
    'Start the reply with [{"id": "1", "type": "files_read", "operation": "read a file", '
    f'"parameters": {{"path": "a.md"}}}}], then {DELIMITER}, then the message.'
)


def _mac_roman(text: str) -> str:
    return text.encode("utf-8").decode("mac_roman")


_SCISSORS = (DELIMITER, "\u2702\U0001f431")
# The same bytes read as Mac Roman, with and without the Apple logo that 0xF0 becomes.
DELIMITERS: tuple[str, ...] = (
    *_SCISSORS,
    *(_mac_roman(form) for form in _SCISSORS),
    *(_mac_roman(form).replace("\uf8ff", "") for form in _SCISSORS),
)
LONGEST_DELIMITER = max(len(delimiter) for delimiter in DELIMITERS)
DELIMITER_STARTS = "".join(sorted({delimiter[0] for delimiter in DELIMITERS}))
_FENCE_OPENING = re.compile(r"(?:`{3,}|~{3,})[ \t]*+(?:json[ \t]*+)?\r?\n", re.IGNORECASE)
_FENCE_CLOSING = re.compile(r"\r?\n[ \t]*(?:`{3,}|~{3,})\Z")


def scissors_shaped(value: Any) -> bool:
    """A scissors-cat call (`{"id", "type", "operation", "parameters"}`) where the prose shape found it."""
    return isinstance(value, dict) and "type" in value and "parameters" in value and value.keys() <= set(SCISSORS_KEYS)


def scissors_calls(section: str, line: int = 1) -> list[ParsedCall | ParseProblem]:
    """The calls of the tool section before ✂️🐱, each validated alone; never raises.

    The section is the array of calls; one call alone is read as an array of one, and a section
    fenced as ```json is read without its fence, as models often write it.
    """
    text = section.strip()
    if not text:
        return []
    leading = len(section) - len(section.lstrip())
    line += section.count("\n", 0, leading)
    fence = _FENCE_OPENING.match(text)
    closing = _FENCE_CLOSING.search(text) if fence else None
    if fence and closing:
        body = text[fence.end() : closing.start()]
        line += 1 + body.count("\n", 0, len(body) - len(body.lstrip()))
        text = body.strip()
    if text.startswith("{"):
        return _single_call(text, line)
    if not text.startswith("["):
        first = min((at for at in (text.find("[{"), text.find("[\n"), text.find("[ ")) if at >= 0), default=-1)
        where = f" (it starts at line {line + text.count(chr(10), 0, first)})" if first > 0 else ""
        return [
            _section_problem(
                "the tool section before the delimiter must start with the JSON array of calls; it starts with "
                f"text{where}. Put any words for the person after the delimiter",
                line,
            )
        ]
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


def _single_call(text: str, line: int) -> list[ParsedCall | ParseProblem]:
    """One call object written without its array: read as an array of one."""
    try:
        element, end = DECODER.raw_decode(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        return [
            ParseProblem(f"block 1, item 1: invalid JSON ({why}); the call was not read", 1, 1, line, hint=JSON_HINT)
        ]
    items = [_scissors_call(element, 1, line)]
    if text[end:].strip():
        items.append(_section_problem("text after the call, before the delimiter", line))
    return items


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
    if lone_surrogate(parameters) or lone_surrogate(name) or lone_surrogate(call_id):
        return problem(UNICODE_PROBLEM, None)
    combined = f"{name}_{operation.strip()}"
    if not is_known(name) and is_known(combined):
        name = combined  # {"type": "gmail", "operation": "send"}
    return ParsedCall(name, parameters, 1, index, line, "scissors", call_id.strip()[:100], priority, operation)
