"""The arguments and results of the gmail tools, and the checks their fields share."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from mcp_tools.core.tooling import MAX_PAGE_CHARS, Arguments, Output


def _gmail_id(value: str) -> str:
    """Gmail ids are short letters, digits, '-' and '_'; checked here to keep the schemas small."""
    if (value and not value.replace("-", "").replace("_", "").isalnum()) or not value.isascii():
        raise ValueError(f"{value[:80]!r} is not a Gmail id")
    return value


GmailId = Annotated[str, AfterValidator(_gmail_id)]
Id = Field(min_length=1, max_length=64)
Address: Any = Field(default_factory=list, max_length=50)


class Failed(Output):
    id: str
    kind: str
    message: str
    hint: str = ""


class SearchArgs(Arguments):
    query: str = Field(default="", max_length=500, description="Gmail syntax, e.g. from:ann is:unread newer_than:7d")
    labels: list[str] = Field(default_factory=list, max_length=10, description="Label names; all must match.")
    limit: int = Field(default=10, ge=1, le=50)
    cursor: str = Field(default="", max_length=200)


class Hit(Output):
    id: str
    thread_id: str
    sender: str
    to: str
    subject: str
    date: str
    snippet: str
    labels: list[str]
    attachments: int


class SearchResult(Output):
    messages: list[Hit]
    next_cursor: str | None
    failed: list[Failed] = Field(description="Messages found but not fetched.")


class ReadArgs(Arguments):
    id: GmailId = Id
    thread: bool = Field(default=False, description="id names a thread.")
    offset: int = Field(default=0, ge=0)
    max_chars: int = Field(default=8000, ge=200, le=MAX_PAGE_CHARS)


class AttachmentInfo(Output):
    index: int
    filename: str
    content_type: str
    size: int


class MessageInfo(Output):
    id: str
    sender: str
    to: str
    cc: str
    subject: str
    date: str
    labels: list[str]
    attachments: list[AttachmentInfo]


class ReadResult(Output):
    id: str
    thread_id: str
    messages: list[MessageInfo]  # those whose text is on this page
    messages_total: int = 0  # in the thread
    text: str
    offset: int
    total_chars: int
    next_offset: int | None  # pass as offset for more; null at the end
    warnings: list[str]


class AttachmentArgs(Arguments):
    message_id: GmailId = Id
    index: int = Field(ge=0, le=499, description="From gmail_read.")
    save: bool = Field(default=False, description="Save to the files store instead.")
    offset: int = Field(default=0, ge=0)
    max_chars: int = Field(default=20_000, ge=200, le=MAX_PAGE_CHARS)


class AttachmentResult(Output):
    message_id: str
    index: int
    filename: str
    content_type: str
    size: int
    encoding: Literal["text", "base64", "image", "saved"]  # a small image as image content
    content: str
    saved_path: str | None
    offset: int
    total_chars: int
    next_offset: int | None


class ComposeArgs(Arguments):
    to: list[str] = Address
    cc: list[str] = Address
    bcc: list[str] = Address
    subject: str = Field(default="", max_length=998)
    body: str = Field(default="", max_length=200_000, description="Plain text.")
    html: str = Field(default="", max_length=500_000, description="HTML alternative.")
    reply_to: GmailId = Field(default="", max_length=64, description="Message id to answer.")
    attachments: list[str] = Field(default_factory=list, max_length=10, description="Paths in the files store.")

    @model_validator(mode="after")
    def _addresses(self) -> ComposeArgs:
        for field_name in ("to", "cc", "bcc"):
            for value in getattr(self, field_name):
                # without "@": a contact's name, resolved to its one address (gmail.recipients)
                name = "@" not in value and (not value.strip() or len(value) > 200 or set(value) & set(",;<>"))
                if len(value) > 320 or name or "\n" in value or "\r" in value:
                    raise ValueError(f"{field_name}: {value[:80]!r} is not an email address or a contact's name")
        if "\n" in self.subject or "\r" in self.subject:
            raise ValueError("subject: must be one line")
        return self


class DraftArgs(ComposeArgs):
    draft_id: GmailId = Field(default="", max_length=64, description="Draft to replace.")


class DraftResult(Output):
    draft_id: str
    message_id: str
    thread_id: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    attachments: list[str]


class SendArgs(ComposeArgs):
    draft_id: GmailId = Field(default="", max_length=64, description="Draft to send, alone.")

    @model_validator(mode="after")
    def _one_source(self) -> SendArgs:
        composed = self.to or self.cc or self.bcc or self.subject or self.body or self.html or self.reply_to
        if self.draft_id and (composed or self.attachments):
            raise ValueError("give draft_id alone, or the message fields without draft_id")
        if not self.draft_id and not (self.to or self.cc or self.bcc or self.reply_to):
            raise ValueError("to: name at least one recipient (or send a draft_id)")
        return self


class SendResult(Output):
    message_id: str
    thread_id: str
    recipients: list[str]


class LabelsArgs(Arguments):
    ids: list[str] = Field(default_factory=list, max_length=100)
    thread: bool = Field(default=False, description="ids are thread ids.")
    add: list[str] = Field(default_factory=list, max_length=20, description="Label names.")
    remove: list[str] = Field(default_factory=list, max_length=20)
    archive: bool = False
    mark_read: bool | None = None

    @model_validator(mode="after")
    def _check(self) -> LabelsArgs:
        changes = self.add or self.remove or self.archive or self.mark_read is not None
        if changes and not self.ids:
            raise ValueError("ids: name the messages to change")
        if self.ids and not changes:
            raise ValueError("add, remove, archive or mark_read: say what to change")
        for value in self.ids:
            if not value or len(value) > 64 or not value.replace("-", "").replace("_", "").isalnum():
                raise ValueError(f"ids: {value[:80]!r} is not a Gmail id")
        return self


class LabelInfo(Output):
    id: str
    name: str
    type: str


class LabelsResult(Output):
    labels: list[LabelInfo]
    changed: list[str]
    failed: list[Failed]


class TrashArgs(Arguments):
    ids: list[str] = Field(min_length=1, max_length=50)
    thread: bool = Field(default=False, description="ids are thread ids.")

    @model_validator(mode="after")
    def _check(self) -> TrashArgs:
        for value in self.ids:
            if not value or len(value) > 64 or not value.replace("-", "").replace("_", "").isalnum():
                raise ValueError(f"ids: {value[:80]!r} is not a Gmail id")
        return self


class TrashResult(Output):
    trashed: list[str]
    failed: list[Failed]
