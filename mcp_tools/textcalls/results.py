"""What each call came to, in the shapes the formats use.

A `TextCallResult` is one call (or parse problem) with its outcome, its id and its status with
times. `TextCallReport` is a whole reply: `{format, calls, results, markdown, parse_errors}`.
Results come as the JSON-in-prose format's `{"name": "server.method", "content": ...}` /
`{"name": ..., "error": "message"}`, or rendered as markdown for a chat.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp_tools.policy.gate import CallOutcome
from mcp_tools.textcalls.calls import INVALID_TOOL_NAME, ParsedCall, ParseProblem


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class TextCallResult:
    """What one parsed call (or problem) came to; `name` is the canonical tool when one was found."""

    call: ParsedCall | ParseProblem
    name: str | None
    outcome: CallOutcome
    id: str = ""
    written_as: str | None = None  # the name the model wrote, when it was another system's
    times: dict[str, str] = field(default_factory=dict)  # detected, executing, completed or failed

    @property
    def is_error(self) -> bool:
        return self.outcome.is_error

    @property
    def status(self) -> str:
        return "failed" if self.is_error else "completed"

    def as_dict(self) -> dict[str, Any]:
        return {
            "call": self.call.as_dict(),
            "name": self.name,
            "is_error": self.is_error,
            "structured": self.outcome.structured,
        }

    @property
    def code(self) -> str | None:
        """What other systems call the mistake: a parse problem's own code, or `INVALID_TOOL_NAME`
        for a name no tool has; None for a call that ran (or was refused) as written."""
        if isinstance(self.call, ParseProblem):
            return self.call.code
        kind = (self.outcome.error or {}).get("kind")
        return INVALID_TOOL_NAME if self.is_error and kind == "unknown_tool" else None

    def error_message(self) -> str:
        error = self.outcome.error or {}
        message = str(error.get("message", self.outcome.text))
        return f"{message} ({error['hint']})" if error.get("hint") else message

    def as_result(self) -> dict[str, Any]:
        """`{"name", "content"}` or `{"name", "error"}`, with the call's id and any notice."""
        shape: dict[str, Any] = {"id": self.id, "name": self.name}
        if self.is_error:
            shape["error"] = self.error_message()
            if self.code is not None:
                shape["code"] = self.code
        else:
            shape["content"] = self.outcome.structured if self.outcome.structured is not None else self.outcome.text
        if self.outcome.notice:
            shape["notice"] = self.outcome.notice
        return shape

    def as_call(self) -> dict[str, Any]:
        """The call as detected and run: id, names, arguments, status and its times."""
        assert isinstance(self.call, ParsedCall)
        shape: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "written_as": self.written_as or self.call.name,
            "arguments": self.call.arguments,
            "status": self.status,
            "times": self.times,
        }
        if self.call.source == "scissors":
            shape["operation"] = self.call.operation
            shape["priority"] = self.call.priority
        return shape


@dataclass
class TextCallReport:
    """A whole reply run: the shape it had, each result in the order run, and the text for the person."""

    format: str
    results: list[TextCallResult]
    markdown: str

    @property
    def failed(self) -> bool:
        return any(result.is_error for result in self.results)

    def ran(self) -> list[TextCallResult]:
        return [result for result in self.results if isinstance(result.call, ParsedCall)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "calls": [result.as_call() for result in self.ran()],
            "results": [result.as_result() for result in self.ran()],
            "markdown": self.markdown,
            "parse_errors": [
                {
                    "id": result.id,
                    "label": result.call.label,
                    "message": result.call.message,
                    "hint": result.call.hint,
                    "line": result.call.line,
                    "code": result.call.code,
                }
                for result in self.results
                if isinstance(result.call, ParseProblem)
            ],
        }

    def as_results(self) -> list[dict[str, Any]]:
        """Every result in the JSON-in-prose shape, parse problems as errors, ready to hand to the model."""
        return [result.as_result() for result in self.results]


def render_markdown(results: list[TextCallResult]) -> str:
    """Each call and its result as markdown, ready to paste into a chat or back to the model."""
    sections: list[str] = []
    for result in results:
        title = f"### `{result.name or '?'}` ({result.id}): {'error' if result.is_error else 'ok'}"
        lines = [title]
        if isinstance(result.call, ParsedCall):
            if result.written_as:
                lines.append(f"Written as `{result.written_as}`.")
            lines.append(_fenced(json.dumps(result.call.arguments, indent=2, ensure_ascii=False)))
        else:
            lines.append(f"At line {result.call.line} of the reply.")
        if result.outcome.notice:
            lines.append(result.outcome.notice)
        if result.is_error:
            code = f" ({result.code})" if result.code else ""
            lines.append(f"**Error{code}:** {result.error_message()}")
        elif result.outcome.structured is not None:
            lines.append(_fenced(json.dumps(result.outcome.structured, indent=2, ensure_ascii=False)))
        else:
            lines.append(_fenced(result.outcome.text, ""))
        sections.append("\n\n".join(lines))
    return "\n\n".join(sections) + ("\n" if sections else "")


def _fenced(text: str, language: str = "json") -> str:
    """A fence longer than any run of backticks inside, so the content cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
