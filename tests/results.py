"""What every `tools/call` result must look like to a client that validates (the Inspector does).

Success: `structuredContent` that is plain JSON (no NaN or Infinity) and valid against the
tool's advertised `outputSchema` (formats checked too), plus at least one text block. Error:
no `structuredContent`, and exactly one text block holding the JSON error object described
by `ERROR_RESULT_SCHEMA`. Either way every string is valid UTF-8.

`tests/conftest.py` applies `check_call_result` to every call a test makes through the SDK's
real client, so every test of every namespace enforces this contract.
"""

from __future__ import annotations

import json
from typing import Any, get_args

import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from mcp_tools.core.tooling import ErrorKind

ERROR_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["error"],
    "additionalProperties": False,
    "properties": {
        "error": {
            "type": "object",
            "required": ["kind", "message"],
            "properties": {
                "kind": {"enum": list(get_args(ErrorKind))},
                "message": {"type": "string", "minLength": 1},
                "hint": {"type": "string", "minLength": 1},
                "approval_id": {"type": "string", "pattern": "^apr-[a-z0-9]+$"},
                "expires": {"type": "string", "format": "date-time"},
            },
            "allOf": [
                {
                    "if": {"properties": {"kind": {"const": "approval_required"}}},
                    "then": {"required": ["approval_id", "expires", "hint"]},
                }
            ],
        }
    },
}
Draft202012Validator.check_schema(ERROR_RESULT_SCHEMA)
_ERROR_VALIDATOR = Draft202012Validator(ERROR_RESULT_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


class InvalidResult(AssertionError):
    """A result that a validating client would reject."""


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    """Every way `instance` breaks `schema` (an empty list when it is valid)."""
    validator_class = validator_for(schema, default=Draft202012Validator)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    return [
        f"{'/'.join(str(part) for part in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    ]


def error_payload(result: types.CallToolResult) -> dict[str, Any]:
    """The JSON error object of an error result, after checking its shape."""
    if result.structured_content is not None:
        raise InvalidResult(f"an error result carries structuredContent: {result.structured_content!r}")
    blocks = result.content
    if len(blocks) != 1 or not isinstance(blocks[0], types.TextContent):
        raise InvalidResult(f"an error result must hold exactly one text block, got {blocks!r}")
    try:
        payload = json.loads(blocks[0].text, parse_constant=_not_json)
    except ValueError as exc:
        raise InvalidResult(f"an error result's text is not JSON: {blocks[0].text!r}") from exc
    problems = [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in _ERROR_VALIDATOR.iter_errors(payload)
    ]
    if problems:
        raise InvalidResult(f"error payload {payload!r} does not match the error schema: {problems}")
    return payload


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def check_call_result(tool: types.Tool | None, name: str, result: types.CallToolResult) -> None:
    """Raise `InvalidResult` unless `result` is what a validating client accepts from `tool`."""
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    try:  # a lone surrogate (from a name that is not UTF-8) cannot be sent at all
        json.dumps([texts, result.structured_content], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidResult(f"{name}: the result holds text that is not valid UTF-8: {exc}") from exc
    if result.is_error:
        error_payload(result)
        return
    if tool is None:
        raise InvalidResult(f"{name} succeeded but tools/list does not list it")
    if tool.output_schema is None:
        raise InvalidResult(f"{name} advertises no outputSchema")
    if result.structured_content is None:
        raise InvalidResult(f"{name} succeeded without structuredContent")
    try:
        json.dumps(result.structured_content, allow_nan=False)
    except ValueError as exc:  # NaN and Infinity are not JSON: the wire would carry null or fail
        raise InvalidResult(f"{name}: structuredContent is not plain JSON: {exc}") from exc
    problems = schema_errors(tool.output_schema, result.structured_content)
    if problems:
        raise InvalidResult(f"{name}: structuredContent does not match its outputSchema: {problems}")
    if not any(isinstance(block, types.TextContent) and block.text for block in result.content):
        raise InvalidResult(f"{name} succeeded without a text block")
