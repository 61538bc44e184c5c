"""The three inbox tools: search, read, attachment.

Everything in a stored email came from outside, so every text block that carries mail
content fences it between markers with a fresh random tag the mail cannot forge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_tools.core.tooling import CallContext, Risk, ToolFailure, ToolSpec
from mcp_tools.servers.inbox.models import (
    AttachmentArgs,
    AttachmentInfo,
    AttachmentResult,
    MessageItem,
    ReadArgs,
    ReadResult,
    SearchArgs,
    SearchResult,
)
from mcp_tools.util.text import fence

if TYPE_CHECKING:
    from mcp_tools.servers.inbox.service import InboxService

ID_HINT = "ids come from inbox_search results"
_TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-yaml",
        "application/yaml",
        "application/csv",
        "application/x-sh",
        "application/sql",
        "application/ics",
    }
)


def is_text_type(content_type: str) -> bool:
    return (
        content_type.startswith("text/")
        or content_type in _TEXT_APPLICATION_TYPES
        or content_type.endswith(("+json", "+xml"))
    )


def _message_item(row: dict[str, Any]) -> MessageItem:
    return MessageItem(
        id=row["id"],
        sender=row["sender"],
        forwarded_from=row["forwarded_from"],
        subject=row["subject"],
        date=row["sent_at"] or row["received_at"],
        summary=row["summary"],
        has_attachments=row["attachment_count"] > 0,
    )


async def _run(function: Any, *args: Any) -> Any:
    import anyio

    return await anyio.to_thread.run_sync(function, *args)


async def search(service: InboxService, args: SearchArgs, ctx: CallContext) -> SearchResult:
    from mcp_tools.servers.inbox.store import InvalidQuery, SearchFilters

    if args.since and args.until and args.since > args.until:
        raise ToolFailure("invalid_arguments", "since is after until", "swap them or drop one")
    query = args.query.strip() if args.query and args.query.strip() else None
    sender = args.sender.strip() if args.sender and args.sender.strip() else None
    filters = SearchFilters(query, sender, args.since, args.until, args.has_attachment)
    try:
        rows, next_cursor = await _run(service.store.search, filters, args.limit, args.cursor)
    except InvalidQuery as error:
        raise ToolFailure("invalid_arguments", str(error)) from None
    return SearchResult(messages=[_message_item(row) for row in rows], next_cursor=next_cursor)


async def _load(service: InboxService, message_id: str) -> dict[str, Any]:
    message: dict[str, Any] | None = await _run(service.store.get, message_id.strip())
    if message is None:
        raise ToolFailure("not_found", f"no email with id {message_id!r}", ID_HINT)
    return message


async def read(service: InboxService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    message = await _load(service, args.id)
    body: str = message["body"]
    if args.offset > len(body):
        raise ToolFailure(
            "invalid_arguments",
            f"offset {args.offset} is past the end of the body ({len(body)} characters)",
            "use an offset below body_chars",
        )
    end = min(len(body), args.offset + args.max_chars)
    return ReadResult(
        id=message["id"],
        sender=message["sender"],
        forwarded_from=message["forwarded_from"],
        recipients=message["recipients"],
        subject=message["subject"],
        date=message["sent_at"] or message["received_at"],
        summary=message["summary"],
        body=body[args.offset : end],
        offset=args.offset,
        body_chars=len(body),
        next_offset=end if end < len(body) else None,
        attachments=[
            AttachmentInfo(
                index=item["idx"],
                filename=item["filename"],
                content_type=item["content_type"],
                size=item["size"],
            )
            for item in message["attachments"]
        ],
        warnings=message["warnings"],
    )


async def attachment(service: InboxService, args: AttachmentArgs, ctx: CallContext) -> AttachmentResult:
    from mcp_tools.util.text import decode_bytes

    message = await _load(service, args.id)
    items = message["attachments"]
    if args.index >= len(items):
        count = len(items)
        raise ToolFailure(
            "not_found",
            f"email {message['id']} has {count} attachment(s); index {args.index} is out of range",
            "use an index from the attachments list of inbox_read",
        )
    item = items[args.index]
    textual = is_text_type(item["content_type"])
    if not textual and item["size"] > service.config.max_attachment_bytes:
        raise ToolFailure(
            "too_large",
            f"{item['filename']} is {item['size']} bytes; binary attachments are returned up to "
            f"{service.config.max_attachment_bytes} bytes",
            "raise [inbox] max_attachment_bytes if this one is needed",
        )
    try:
        data: bytes = await _run(service.blobs.get, item["blob"])
    except (OSError, ValueError):
        raise ToolFailure("internal_error", "the attachment's stored data is missing") from None
    common = {
        "id": message["id"],
        "index": args.index,
        "filename": item["filename"],
        "content_type": item["content_type"],
        "size": item["size"],
    }
    if not textual:
        from mcp_tools.util.text import binary_page

        offset = args.offset - args.offset % 4
        encoding, chunk, total, next_offset = binary_page(data, item["content_type"], offset, args.max_chars)
        result = AttachmentResult(
            **common, encoding=encoding, content=chunk, offset=offset, total_chars=total, next_offset=next_offset
        )
        return result.with_image(data, item["content_type"]) if encoding == "image" else result
    text = decode_bytes(data, item["charset"], [], "attachment")
    if args.offset > len(text):
        raise ToolFailure(
            "invalid_arguments",
            f"offset {args.offset} is past the end of the text ({len(text)} characters)",
            "use an offset below total_chars",
        )
    end = min(len(text), args.offset + args.max_chars)
    return AttachmentResult(
        **common,
        encoding="text",
        content=text[args.offset : end],
        offset=args.offset,
        total_chars=len(text),
        next_offset=end if end < len(text) else None,
    )


def render_search(result: SearchResult) -> str:
    if not result.messages:
        return "No emails match."
    lines = []
    for item in result.messages:
        attachment_note = " [attachments]" if item.has_attachments else ""
        forwarded = f" (forwarding {', '.join(item.forwarded_from)})" if item.forwarded_from else ""
        lines.append(f"- id {item.id} | {item.date} | {item.sender}{forwarded} | {item.subject}{attachment_note}")
        lines.append(f"  summary: {item.summary}")
    text = fence("email listing", "\n".join(lines))
    if result.next_cursor:
        text += f"\nMore results: call again with cursor={result.next_cursor}"
    return text


def render_read(result: ReadResult) -> str:
    header = [
        f"From: {result.sender}",
        *(f"Forwarded from: {sender}" for sender in result.forwarded_from),
        f"To: {', '.join(result.recipients)}",
        f"Subject: {result.subject}",
        f"Date: {result.date}",
        f"Summary: {result.summary}",
    ]
    for item in result.attachments:
        header.append(f"Attachment {item.index}: {item.filename} ({item.content_type}, {item.size} bytes)")
    for warning in result.warnings:
        header.append(f"Parse warning: {warning}")
    end = result.offset + len(result.body)
    position = f"Email {result.id}, body characters {result.offset}-{end} of {result.body_chars}"
    if result.next_offset is not None:
        position += f"; {result.body_chars - result.next_offset:,} more, call again with offset={result.next_offset}"
    return position + "\n" + fence("email", "\n".join(header) + "\n\n" + result.body)


def render_attachment(result: AttachmentResult) -> str:
    position = f"Attachment {result.index} of email {result.id}: {result.filename} ({result.content_type})"
    if result.encoding == "image":
        return position + f", {result.size:,} bytes, shown as image content"
    if result.encoding == "base64":
        from mcp_tools.util.text import binary_head

        where = binary_head(
            result.size,
            result.content_type,
            result.offset,
            result.content,
            result.total_chars,
            result.next_offset,
            None,
        )
        return position + "\n" + where + "\nbase64:\n" + result.content
    end = result.offset + len(result.content)
    position += f", characters {result.offset}-{end} of {result.total_chars}"
    if result.next_offset is not None:
        position += f"; {result.total_chars - result.next_offset:,} more, call again with offset={result.next_offset}"
    return position + "\n" + fence("attachment", result.content)


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name="inbox.search",
        tier="core",
        title="Search forwarded email",
        description="Search forwarded emails, newest first, with summaries.",
        input_model=SearchArgs,
        output_model=SearchResult,
        handler=search,
        risk=Risk.LOW,
        describe=lambda args: "search forwarded email" + (f" for {args.query!r}" if args.query else ""),
        read_only=True,
        idempotent=True,
        render_text=render_search,
    ),
    READ := ToolSpec(
        name="inbox.read",
        tier="core",
        title="Read a forwarded email",
        description=("An email's text, paged (next_offset), with its attachments."),
        input_model=ReadArgs,
        output_model=ReadResult,
        handler=read,
        risk=Risk.LOW,
        describe=lambda args: f"read forwarded email {args.id}",
        read_only=True,
        idempotent=True,
        render_text=render_read,
    ),
    ToolSpec(
        name="inbox.attachment",
        tier="extended",
        title="Read an email attachment",
        description=("One attachment of an email: text paged, other types as base64 (size-limited)."),
        input_model=AttachmentArgs,
        output_model=AttachmentResult,
        handler=attachment,
        risk=Risk.LOW,
        describe=lambda args: f"read attachment {args.index} of forwarded email {args.id}",
        read_only=True,
        idempotent=True,
        render_text=render_attachment,
    ),
]
