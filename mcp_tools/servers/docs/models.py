"""The arguments and results of the docs tools, and the checks their fields share."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from mcp_tools.core.tooling import MAX_PAGE_CHARS, Arguments, Output

_URL_ID = re.compile(r"/document/(?:u/\d+/)?d/([A-Za-z0-9_-]+)")


def _doc_id(value: str) -> str:
    """A document id, or a Docs address it is taken from."""
    found = _URL_ID.search(value)
    value = found.group(1) if found else value.strip()
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,200}", value):
        raise ValueError(f"{value[:80]!r} is not a Google Docs id (the part after /document/d/ in its address)")
    return value


DocId = Annotated[str, AfterValidator(_doc_id)]
Id = Field(min_length=1, max_length=500, description="Document id or address.")
Revision = Field(default="", max_length=200, description="revision from docs_read; a newer document is a conflict.")
Markdown = Field(min_length=1, max_length=200_000, description="Markdown.")


class ReadArgs(Arguments):
    id: DocId = Id
    offset: int = Field(default=0, ge=0)
    max_chars: int = Field(default=20_000, ge=200, le=MAX_PAGE_CHARS)


class ReadResult(Output):
    id: str
    title: str
    revision: str
    text: str  # Markdown, this page of it
    offset: int
    total_chars: int
    next_offset: int | None


class CreateArgs(Arguments):
    title: str = Field(min_length=1, max_length=256)
    text: str = Field(default="", max_length=200_000, description="Markdown body.")

    @model_validator(mode="after")
    def _one_line(self) -> CreateArgs:
        if "\n" in self.title or "\r" in self.title:
            raise ValueError("title: must be one line")
        return self


class Written(Output):
    id: str
    url: str
    revision: str


class AppendArgs(Arguments):
    id: DocId = Id
    text: str = Markdown
    revision: str = Revision


class ReplaceArgs(Arguments):
    id: DocId = Id
    find: str = Field(min_length=1, max_length=1000)
    replace: str = Field(max_length=10_000)
    match_case: bool = True
    dry_run: bool = Field(default=False, description="Only count matches.")
    expected_matches: int | None = Field(default=None, ge=0, le=1_000_000, description="Known count: asks no one.")
    revision: str = Revision

    @model_validator(mode="after")
    def _one_line(self) -> ReplaceArgs:
        for name in ("find", "replace"):
            if "\n" in getattr(self, name) or "\r" in getattr(self, name):
                raise ValueError(f"{name}: must not hold a line break (replace within paragraphs)")
        return self


class ReplaceResult(Output):
    id: str
    matches: int  # found (dry run) or replaced
    dry_run: bool
    revision: str
