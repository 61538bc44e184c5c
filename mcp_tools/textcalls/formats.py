"""Finding calls in a reply: ```json and ```tool_call fences, `<tool_call>` tags, bare objects in prose.

`parse_tool_calls` is pure (no I/O) and bounded: MAX_TEXT_CHARS characters, MAX_CALLS items.
Broken blocks come back as ParseProblems the model can act on, never as exceptions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcp_tools.textcalls.calls import (
    CALL_HINT,
    JSON_HINT,
    MAX_CALLS,
    MAX_TEXT_CHARS,
    ParsedCall,
    ParseProblem,
    json_type,
    label_of,
)
from mcp_tools.textcalls.names import ALIASES

NAME_KEYS = ("tool", "tool_name", "name", "function")  # first present wins: in flat calls "name" may be an argument
ARGUMENT_KEYS = ("arguments", "args", "parameters", "input")
ENVELOPE_KEYS = frozenset({"id", "call_id", "type"})  # wrapper fields some formats add; carry no arguments
CALL_LABELS = frozenset({"tool_call", "tool", "function_call"})  # fences that can only mean a call
DATA_LABELS = frozenset({"json", ""})  # fences that may hold a call or just example data

_TOKEN = re.compile(
    r"(?P<fence>^[ \t]*(?P<marker>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$)"
    r"|(?P<tag><(?P<tag_name>tool_call|function_call)>)"
    r"|(?P<brace>\{)",
    re.MULTILINE,
)
_BARE_START = re.compile(r"\{\s*\"")
_CALL_KEY = re.compile(r"\"(?:tool|tool_name|name|function)\"\s*:")
_LEADING_CALL_KEY = re.compile(r"\{\s*\"(?:tool|tool_name|name|function)\"\s*:")
_NAMESPACED = re.compile(r"[A-Za-z][A-Za-z0-9]*[._][A-Za-z0-9_.-]+")
_IN_STRING = re.compile(r"[\"\\\n]")
_OUTSIDE_STRING = re.compile(r"[{}\"\\]")
_DECODER = json.JSONDecoder(strict=False)  # fenced calls often carry raw line breaks inside file content


class _CallLimit(Exception):
    """Raised inside the scan once MAX_CALLS items are out; the rest of the reply is reported, not read."""

    def __init__(self, line: int) -> None:
        self.line = line


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[ParsedCall | ParseProblem] = []
        self.blocks = 0
        self.bare_budget = 4 * len(text) + 10_000  # characters the bare-object scanner may look at in all
        self.bare_stopped_at: int | None = None
        self._line_index, self._line = 0, 1

    def line_at(self, index: int) -> int:
        """Counted on from the last answer: the scan moves forward, so this stays linear."""
        if index < self._line_index:
            self._line_index, self._line = 0, 1
        self._line += self.text.count("\n", self._line_index, index)
        self._line_index = index
        return self._line

    def emit(self, item: ParsedCall | ParseProblem) -> None:
        if len(self.items) >= MAX_CALLS:
            raise _CallLimit(item.line)
        self.items.append(item)

    def run(self) -> list[ParsedCall | ParseProblem]:
        position = 0
        text = self.text
        while True:
            match = _TOKEN.search(text, position)
            if match is None:
                break
            if match.group("fence") is not None:
                position = self.fence(match)
            elif match.group("tag") is not None:
                position = self.tag(match)
            else:
                position = self.bare(match.start())
        if self.bare_stopped_at is not None:
            line = self.line_at(self.bare_stopped_at)
            self.items.append(
                ParseProblem(
                    f"stopped looking for calls outside fences at line {line}: too much unbalanced JSON-like text",
                    None,
                    line=line,
                    hint=CALL_HINT,
                )
            )
        return self.items

    # Each handler returns where the scan continues.

    def fence(self, match: re.Match[str]) -> int:
        marker = match.group("marker")
        info = match.group("info").strip()
        if marker[0] == "`" and "`" in info:
            return match.end("marker")  # inline code such as ```x```, not a fence
        label = info.split()[0].lower() if info else ""
        body_start = min(match.end() + 1, len(self.text))
        closing = re.compile(rf"^[ \t]*{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$", re.MULTILINE)
        close = closing.search(self.text, body_start)
        body_end, after = (close.start(), close.end()) if close else (len(self.text), len(self.text))
        if label not in CALL_LABELS and label not in DATA_LABELS:
            return after  # code in another language: never a call, not even bare JSON inside it
        line = self.line_at(match.start())
        self.values(self.text[body_start:body_end], strict=label in CALL_LABELS, line=line, source="fence")
        return after

    def tag(self, match: re.Match[str]) -> int:
        name = match.group("tag_name")
        end_tag = f"</{name}>"
        close = self.text.find(end_tag, match.end())
        line = self.line_at(match.start())
        if close < 0:
            self.blocks += 1
            self.emit(
                ParseProblem(
                    f"block {self.blocks}: <{name}> is never closed with {end_tag}",
                    self.blocks,
                    line=line,
                    hint="Send the whole call again, closed.",
                )
            )
            return len(self.text)
        body = _strip_fence(self.text[match.end() : close])
        self.values(body, strict=True, line=line, source="tag")
        return close + len(end_tag)

    def bare(self, start: int) -> int:
        if self.bare_stopped_at is not None or not _BARE_START.match(self.text, start):
            return start + 1
        end, reason = self.scan_object(start)
        if end is None:
            if self.bare_stopped_at is None and _LEADING_CALL_KEY.match(self.text, start) and reason:
                self.blocks += 1
                self.emit(
                    ParseProblem(
                        f"block {self.blocks}: this looks like a tool call but is not valid JSON: {reason}",
                        self.blocks,
                        line=self.line_at(start),
                        hint=CALL_HINT,
                    )
                )
                return self.text.find("\n", start) + 1 or len(self.text)
            return start + 1
        candidate = self.text[start:end]
        try:
            value = _DECODER.decode(candidate)
        except (json.JSONDecodeError, RecursionError):
            if not _LEADING_CALL_KEY.match(candidate):
                return start + 1
            self.values(candidate, strict=False, line=self.line_at(start), source="text")
            return end
        shape = _classify(value, strict=False)
        if shape is not None:
            self.blocks += 1
            self.emit_shape(shape, self.blocks, None, self.line_at(start), "text")
        return end  # objects inside a non-call object are not top level

    def scan_object(self, start: int) -> tuple[int | None, str | None]:
        """End of the balanced object at `start`, respecting strings and escapes; or why there is none."""
        text = self.text
        depth = 0
        in_string = False
        position = start
        while True:
            match = (_IN_STRING if in_string else _OUTSIDE_STRING).search(text, position)
            if match is None:
                self.charge(start, len(text))
                return None, "it is never closed"
            char, index = match.group(), match.start()
            if index - start > self.bare_budget:
                self.charge(start, index)
                return None, None
            if in_string:
                if char == "\\":
                    position = index + 2
                    continue
                if char == "\n":
                    self.charge(start, index)
                    return None, r"a string holds a raw line break (write it as \n, or put the call in a ```json fence)"
                in_string = False
            elif char == '"':
                in_string = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    self.charge(start, index)
                    return index + 1, None
            else:  # a backslash outside a string: not JSON
                self.charge(start, index)
                return None, "a backslash outside a string"
            position = index + 1

    def charge(self, start: int, end: int) -> None:
        self.bare_budget -= end - start
        if self.bare_budget <= 0 and self.bare_stopped_at is None:
            self.bare_stopped_at = start

    def values(self, body: str, *, strict: bool, line: int, source: str) -> None:
        """Reads one JSON value, an array, or several values in a row from a block."""
        stripped = body.strip()
        if not strict and not stripped.startswith(("{", "[")):
            return  # an unlabeled fence of shell output or prose
        try:
            values = _decode_all(stripped)
        except json.JSONDecodeError as exc:
            if strict or _CALL_KEY.search(stripped):
                self.blocks += 1
                where = f"at line {exc.lineno} column {exc.colno}"
                self.emit(
                    ParseProblem(
                        f"block {self.blocks}: invalid JSON {where}: {exc.msg}", self.blocks, line=line, hint=JSON_HINT
                    )
                )
            return
        except RecursionError:
            self.blocks += 1
            self.emit(ParseProblem(f"block {self.blocks}: the JSON is nested too deeply", self.blocks, line=line))
            return
        elements: list[Any] = []
        for value in values:
            elements.extend(value if isinstance(value, list) else [value])
        several = len(elements) != 1 or isinstance(values[0], list)
        shapes: list[tuple[int | None, _Shape]] = []
        for index, element in enumerate(elements, start=1):
            item = index if several else None
            if isinstance(element, dict):
                shape = _classify(element, strict=strict)
            else:
                shape = _Problem(f"expected a JSON object, got {json_type(element)}") if strict else None
            if shape is not None:
                shapes.append((item, shape))
        if not shapes:
            if strict:
                self.blocks += 1
                self.emit(
                    ParseProblem(f"block {self.blocks}: holds no tool call", self.blocks, line=line, hint=CALL_HINT)
                )
            return
        self.blocks += 1
        for item, shape in shapes:
            self.emit_shape(shape, self.blocks, item, line, source)

    def emit_shape(self, shape: _Shape, block: int, item: int | None, line: int, source: str) -> None:
        if isinstance(shape, _Problem):
            self.emit(
                ParseProblem(f"{label_of(block, item)}: {shape.message}", block, item, line, shape.name, CALL_HINT)
            )
        else:
            self.emit(ParsedCall(shape.name, shape.arguments, block, item, line, source))


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class _Problem:
    message: str
    name: str | None = None


_Shape = _Call | _Problem


def _decode_all(text: str) -> list[Any]:
    """Every JSON value in the text, in order (models sometimes write one call per line)."""
    values: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        if position >= len(text):
            break
        value, position = _DECODER.raw_decode(text, position)
        values.append(value)
    if not values:
        raise json.JSONDecodeError("Expecting value", text, 0)
    return values


def _strip_fence(body: str) -> str:
    """`<tool_call>` content is sometimes fenced as well."""
    stripped = body.strip()
    if stripped.startswith(("```", "~~~")):
        first_newline = stripped.find("\n")
        stripped = stripped[first_newline + 1 :] if first_newline >= 0 else ""
        stripped = stripped.rstrip()
        stripped = stripped.rstrip("`~").rstrip() if stripped.endswith(("```", "~~~")) else stripped
    return stripped


def _arguments(value: Any, key: str) -> dict[str, Any] | _Problem:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            parsed = _DECODER.decode(value.strip())
        except json.JSONDecodeError as exc:
            return _Problem(f"{key} is a string but not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})")
        if isinstance(parsed, dict):
            return parsed
        return _Problem(f"{key} must be a JSON object, got {json_type(parsed)} inside the string")
    return _Problem(f"{key} must be a JSON object of arguments, got {json_type(value)}")


def _classify(obj: dict[str, Any], *, strict: bool) -> _Shape | None:
    """Which call an object is, a problem if it is a broken call, None if it is not a call at all."""
    function = obj.get("function")
    if isinstance(function, dict) and obj.get("type", "function") == "function":
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            return _Problem("function.name is missing: expected the tool's name as a string")
        extra = sorted(set(obj) - {"function", *ENVELOPE_KEYS}) + sorted(set(function) - {"name", "arguments"})
        if extra:
            return _Problem(f"unexpected {', '.join(extra)}; put every argument inside function.arguments", name)
        arguments = _arguments(function.get("arguments", {}), "function.arguments")
        if isinstance(arguments, _Problem):
            return _Problem(arguments.message, name)
        return _Call(name.strip(), arguments)

    name_key = next((key for key in NAME_KEYS if key in obj), None)
    argument_keys = [key for key in ARGUMENT_KEYS if key in obj]
    name = obj.get(name_key) if name_key else None
    if not isinstance(name, str) or not name.strip():
        looks_like_call = strict or ("arguments" in obj and set(obj) <= {*argument_keys, *ENVELOPE_KEYS, *NAME_KEYS})
        if not looks_like_call:
            return None
        if name_key is None:
            return _Problem('no tool name: expected a "name" key holding the tool\'s name')
        return _Problem(f"{name_key} must be the tool's name as a string, got {json_type(name)}")
    name = name.strip()

    tool_like = name in ALIASES or _NAMESPACED.fullmatch(name) is not None
    if argument_keys:
        extra = sorted(set(obj) - {name_key, *argument_keys, *ENVELOPE_KEYS})
        value = obj[argument_keys[0]]
        object_like = isinstance(value, dict) or (isinstance(value, str) and value.lstrip().startswith("{"))
        if not strict and not tool_like and (extra or not object_like):
            return None  # {"name": "Ada", "input": "hello"} in prose is data, not a call
        if len(argument_keys) > 1:
            return _Problem(f"both {argument_keys[0]} and {argument_keys[1]} given; send the arguments once", name)
        if extra:
            shown = ", ".join(extra)
            return _Problem(
                f"unexpected {shown} beside {name_key} and {argument_keys[0]}; put every argument inside "
                f"{argument_keys[0]}",
                name,
            )
        arguments = _arguments(value, argument_keys[0])
        if isinstance(arguments, _Problem):
            return _Problem(arguments.message, name)
        return _Call(name, arguments)

    # Flat: {"tool": "write_file", "path": ..., "content": ...}; the other keys are the arguments.
    flat = strict or name in ALIASES or (name_key in ("tool", "tool_name") and tool_like)
    if not flat:
        return None
    return _Call(name, {key: value for key, value in obj.items() if key != name_key})


def parse_tool_calls(text: str) -> list[ParsedCall | ParseProblem]:
    """The calls in a model's reply, in order, with a ParseProblem for each broken one; never raises.

    Work is bounded: only the first MAX_TEXT_CHARS characters are read and at most MAX_CALLS
    items are returned; whatever was cut is reported as a final ParseProblem.
    """
    cut = len(text) > MAX_TEXT_CHARS
    parser = _Parser(text[:MAX_TEXT_CHARS] if cut else text)
    try:
        items = parser.run()
    except _CallLimit as limit:
        items = parser.items
        items.append(
            ParseProblem(
                f"only the first {MAX_CALLS} tool calls were read; the rest of the reply, from line {limit.line}, "
                "was not run",
                None,
                line=limit.line,
                hint="Send fewer calls at a time.",
            )
        )
    if cut:
        items.append(
            ParseProblem(
                f"the reply is longer than {MAX_TEXT_CHARS} characters; only the first {MAX_TEXT_CHARS} were read "
                "for tool calls",
                None,
                line=parser.line_at(len(parser.text)),
            )
        )
    return items
