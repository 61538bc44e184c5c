"""The arguments and results of the inbox tools."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field

from mcp_tools.core.tooling import MAX_PAGE_CHARS, Arguments, Output

LAST_DAY = date(9999, 12, 30)  # the day after must still be a date


class SearchArgs(Arguments):
    query: str | None = Field(default=None, max_length=500, description="All must match; word* for a prefix")
    sender: str | None = Field(
        default=None, max_length=320, description="Part of a name or address, forwarded senders too"
    )
    since: date | None = Field(default=None, le=LAST_DAY, description="UTC day, inclusive")
    until: date | None = Field(default=None, le=LAST_DAY, description="UTC day, inclusive")
    has_attachment: bool | None = None
    limit: int = Field(default=10, ge=1, le=50)
    cursor: str | None = Field(default=None, max_length=200, description="next_cursor of the last page")


class MessageItem(Output):
    id: str
    sender: str
    forwarded_from: list[str] = Field(description="Senders of forwarded mails inside")
    subject: str
    date: str
    summary: str
    has_attachments: bool


class SearchResult(Output):
    messages: list[MessageItem]
    next_cursor: str | None


class ReadArgs(Arguments):
    id: str = Field(max_length=64)
    offset: int = Field(default=0, ge=0, description="In characters")
    max_chars: int = Field(default=8000, ge=100, le=MAX_PAGE_CHARS)


class AttachmentInfo(Output):
    index: int
    filename: str
    content_type: str
    size: int


class ReadResult(Output):
    id: str
    sender: str
    forwarded_from: list[str]
    recipients: list[str]
    subject: str
    date: str
    summary: str
    body: str
    offset: int
    body_chars: int
    next_offset: int | None
    attachments: list[AttachmentInfo]
    warnings: list[str]


class AttachmentArgs(Arguments):
    id: str = Field(max_length=64)
    index: int = Field(ge=0, description="From inbox_read")
    offset: int = Field(default=0, ge=0, description="In characters (base64 ones for binary)")
    max_chars: int = Field(default=20_000, ge=100, le=MAX_PAGE_CHARS)


class AttachmentResult(Output):
    id: str
    index: int
    filename: str
    content_type: str
    size: int
    encoding: Literal["text", "base64", "image"]  # a small image as image content
    content: str
    offset: int
    total_chars: int
    next_offset: int | None
