"""The arguments and result of `search.all`."""

from __future__ import annotations

from pydantic import Field

from mcp_tools.core.tooling import Arguments, Output

MAX_OFFSET = 200


class AllArgs(Arguments):
    query: str = Field(min_length=1, max_length=500)
    scope: list[str] = Field(default_factory=list, max_length=20, description="Namespaces; none: all.")
    limit: int = Field(default=10, ge=1, le=50)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET, description="next_offset of the last page.")


class Result(Output):
    namespace: str
    title: str
    snippet: str
    tool: str  # opens the hit, given `arguments` (the description says so)
    arguments: dict[str, str]
    score: float


class Partial(Output):
    namespace: str
    reason: str


class AllResult(Output):
    results: list[Result]
    searched: list[str]
    partial: list[Partial]  # namespaces that timed out or failed
    next_offset: int | None = None  # hits left out to fit the result budget start here
