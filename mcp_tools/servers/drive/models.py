"""The arguments and results of the drive tools, and the checks their fields share."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from mcp_tools.core.tooling import MAX_PAGE_CHARS, Arguments, Output, ToolFailure

TypeName = Literal["document", "spreadsheet", "presentation", "folder", "pdf", "image", "video", "text"]


def _drive_id(value: str) -> str:
    """Drive ids are letters, digits, '-' and '_' ("root" for the top folder)."""
    if value and (not value.isascii() or not value.replace("-", "").replace("_", "").isalnum()):
        raise ValueError(f"{value[:80]!r} is not a Drive id")
    return value


def _moment(value: str) -> str:
    """A date or date-time, as the RFC 3339 UTC time Drive's q compares."""
    if not value:
        return value
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value[:40]!r} is not a date (2026-03-01) or date-time (2026-03-01T09:00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _address(value: str) -> str:
    if value and (value.count("@") != 1 or any(c.isspace() for c in value) or len(value) > 320):
        raise ValueError(f"{value[:80]!r} is not an email address")
    return value.lower()


def _at_most(limit: int) -> AfterValidator:
    """A length bound checked in code, so the schema a model reads stays short."""

    def check(value: str | None) -> str | None:
        if value is not None and len(value) > limit:
            raise ValueError(f"at most {limit} characters")
        return value

    return AfterValidator(check)


def _version(value: str | None) -> str | None:
    if value is not None and (not value.isdigit() or len(value) > 20):
        raise ValueError("a version is the digits drive_search or drive_read gave")
    return value


def _mime(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[\w.+-]{1,60}/[\w.+-]{1,60}", value):
        raise ValueError(f"{value[:80]!r} is not a mime type such as text/markdown")
    return value


DriveId = Annotated[str, _at_most(128), AfterValidator(_drive_id)]
OptionalId = Annotated[str | None, _at_most(128), AfterValidator(lambda v: v and _drive_id(v))]
Moment = Annotated[str | None, _at_most(40), AfterValidator(lambda v: v and _moment(v))]
Email = Annotated[str | None, _at_most(320), AfterValidator(lambda v: v and _address(v))]
Short = Annotated[str | None, _at_most(255)]
Id = Field(min_length=1)


class FileInfo(Output):
    id: str
    name: str
    type: str  # document, spreadsheet, folder, pdf, ... or the mime type
    modified: str
    size: int | None  # bytes; null for Google Docs, Sheets, Slides and folders
    version: str  # pass to drive_update


class SearchArgs(Arguments):
    name: Short = Field(default=None, description="Name word prefix.")
    text: Short = Field(default=None, description="Full text.")
    type: TypeName | None = None
    folder: OptionalId = None
    modified_after: Moment = None
    modified_before: Moment = None
    owner: Email = None
    shared_with_me: bool = False
    trashed: bool = False
    q: Annotated[str | None, _at_most(1000)] = Field(default=None, description="Raw Drive query, ANDed.")
    limit: int = Field(default=25, ge=1, le=100)
    page_token: Annotated[str | None, _at_most(500)] = None


class SearchResult(Output):
    files: list[FileInfo]
    next_page_token: str | None
    q: str  # the query sent


class ReadArgs(Arguments):
    id: DriveId = Id
    sheet: Short = Field(default=None, description="Default: the first.")
    offset: int = Field(default=0, ge=0)
    max_chars: int = Field(default=20_000, ge=200, le=MAX_PAGE_CHARS)
    save_to: Annotated[str | None, _at_most(500)] = Field(default=None, description="A files-store path.")


class ReadResult(Output):
    file: FileInfo
    # Docs as Markdown, Sheets as CSV, Slides as plain text; a small image as image content
    encoding: Literal["text", "base64", "image", "saved"]
    content: str
    offset: int
    total_chars: int
    next_offset: int | None  # pass as offset for more; null at the end
    sheets: list[str]  # a spreadsheet's sheet names
    warnings: list[str]


CONTENT_FIELDS = ("content", "content_base64", "from_path")  # what a create or update may send, one at most


class ContentArgs(Arguments):
    content: Annotated[str | None, _at_most(2_000_000)] = None
    content_base64: Annotated[str | None, _at_most(30_000_000)] = None
    mime_type: Annotated[str | None, AfterValidator(_mime)] = None
    from_path: Annotated[str | None, _at_most(500)] = Field(default=None, description="A files-store path.")
    nul_allowed = frozenset({"content"})

    def data(self, limit: int) -> bytes | None:
        """The content's bytes (None when neither content field is given)."""
        if self.content_base64:
            try:
                data = base64.b64decode(self.content_base64, validate=True)
            except (binascii.Error, ValueError):
                raise ToolFailure("invalid_arguments", "content_base64 is not valid base64") from None
        elif self.content:
            data = self.content.encode("utf-8")
        else:
            return None
        if len(data) > limit:
            raise ToolFailure("too_large", f"the content is {len(data)} bytes; at most {limit} are sent")
        return data

    def content_type(self, name: str) -> str:
        import mimetypes

        if self.mime_type:
            return self.mime_type
        guessed = mimetypes.guess_type(name)[0] or ("text/markdown" if name.lower().endswith(".md") else None)
        return guessed or ("text/plain" if self.content else "application/octet-stream")

    @model_validator(mode="after")
    def _one_content(self) -> ContentArgs:
        if sum(bool(getattr(self, field)) for field in CONTENT_FIELDS) > 1:
            raise ValueError("give one of content, content_base64 or from_path")
        return self

    @property
    def replaces(self) -> bool:
        """Whether the call sends content (inline or from the files store)."""
        return any(getattr(self, field) for field in CONTENT_FIELDS)


class CreateArgs(ContentArgs):
    name: Annotated[str, _at_most(255)] = Field(min_length=1)
    folder: OptionalId = Field(default=None, description="Parent id; default root.")
    type: Literal["file", "folder"] = "file"
    convert: bool = Field(default=False, description="Markdown/CSV to a Google Doc/Sheet.")

    @model_validator(mode="after")
    def _check(self) -> CreateArgs:
        if self.type == "folder" and (self.replaces or self.convert):
            raise ValueError("a folder takes no content or convert")
        return self


class WriteResult(Output):
    file: FileInfo
    link: str


class UpdateArgs(ContentArgs):
    id: DriveId = Id
    name: Short = None
    version: Annotated[str | None, AfterValidator(_version)] = None

    @model_validator(mode="after")
    def _something(self) -> UpdateArgs:
        if not (self.name or self.replaces):
            raise ValueError("name, content, content_base64 or from_path: say what to change")
        return self


class DeleteArgs(Arguments):
    id: DriveId = Id


class DeleteResult(Output):
    id: str
    name: str
    outcome: Literal["trashed", "deleted"]


class ShareArgs(Arguments):
    id: DriveId = Id
    email: Email = None
    type: Literal["user", "group", "anyone"] = Field(default="user", description="anyone: with the link.")
    role: Literal["reader", "commenter", "writer"] = "reader"
    notify: bool = True
    message: Annotated[str | None, _at_most(2000)] = None

    @model_validator(mode="after")
    def _who(self) -> ShareArgs:
        if self.type == "anyone" and self.email:
            raise ValueError("email: anyone-with-the-link sharing takes no address")
        if self.type != "anyone" and not self.email:
            raise ValueError("email: name the person or group to share with")
        return self


class ShareResult(Output):
    id: str
    name: str
    permission_id: str
    type: str
    role: str
    email: str
