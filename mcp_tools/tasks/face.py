"""What the MCP face lends the tasks: how it reads a request and writes a tool result.

`mcp_tools.transports.mcp_server` serves the tasks and passes itself in (a module satisfies this protocol),
so the tasks follow the face's own rules (who the principal is, whether a form reaches the person,
how a result looks) without importing the module that imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import mcp_types as types
from mcp.server.context import ServerRequestContext

from mcp_tools.policy.gate import Answer, CallOutcome

Context = ServerRequestContext[Any, Any]
Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class Face(Protocol):
    CONFIRM_SCHEMA: dict[str, Any]

    def call_result(self, outcome: CallOutcome) -> types.CallToolResult: ...

    def answer_from(self, action: str, content: dict[str, Any] | None) -> Answer: ...

    def can_elicit_form(self, ctx: Context) -> bool: ...

    def forms_reach_person(self, ctx: Context) -> bool: ...

    def client_of(self, ctx: Context) -> str | None: ...

    def principal_of(self, ctx: Context, default: str) -> str: ...

    def reach_of(self, ctx: Context) -> Callable[[Any], bool] | None: ...

    def is_modern(self, ctx: Context) -> bool: ...
