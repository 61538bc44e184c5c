"""What each call came to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_tools.policy.gate import CallOutcome
from mcp_tools.textcalls.calls import ParsedCall, ParseProblem


@dataclass
class TextCallResult:
    """What one parsed call (or problem) came to; `name` is the canonical tool when one was found."""

    call: ParsedCall | ParseProblem
    name: str | None
    outcome: CallOutcome

    @property
    def is_error(self) -> bool:
        return self.outcome.is_error

    def as_dict(self) -> dict[str, Any]:
        return {
            "call": self.call.as_dict(),
            "name": self.name,
            "is_error": self.is_error,
            "structured": self.outcome.structured,
        }
