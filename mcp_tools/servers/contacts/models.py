"""The arguments and result of the contacts tools."""

from __future__ import annotations

from pydantic import Field

from mcp_tools.core.tooling import Arguments, Output


class SearchArgs(Arguments):
    query: str = Field(min_length=1, max_length=200, description="name, address or phone")
    limit: int = Field(10, ge=1, le=30)


class Contact(Output):
    name: str
    emails: list[str]
    phones: list[str]
    organization: str | None = None


class SearchResult(Output):
    contacts: list[Contact]
