"""The seven gmail tools, declared as data.

Mail content is untrusted: every text block carrying it is fenced with the inbox's markers.
Scopes are checked before each call, so a missing grant names the scope and the command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_tools.core.tooling import CallContext, Risk, ToolAlias, ToolFailure, ToolSpec, UpstreamScopes
from mcp_tools.servers.gmail.models import (
    AttachmentArgs,
    AttachmentResult,
    ComposeArgs,
    DraftArgs,
    DraftResult,
    Failed,
    LabelInfo,
    LabelsArgs,
    LabelsResult,
    ReadArgs,
    ReadResult,
    SearchArgs,
    SearchResult,
    SendArgs,
    SendResult,
    TrashArgs,
    TrashResult,
)
from mcp_tools.servers.gmail.service import (
    ATTACHMENT_TOOL,
    DRAFT_TOOL,
    LABELS_TOOL,
    READ_TOOL,
    SEARCH_TOOL,
    SEND_TOOL,
    TRASH_TOOL,
)
from mcp_tools.servers.google.aliases import PAGING
from mcp_tools.servers.google.scopes import GMAIL_COMPOSE, GMAIL_MODIFY, GMAIL_READONLY, GMAIL_SEND
from mcp_tools.servers.google.text import page
from mcp_tools.util.text import fence

if TYPE_CHECKING:
    from mcp_tools.servers.gmail.service import GmailService


TEXT_TYPES = ("text/", "application/json", "application/xml", "application/csv", "application/x-yaml")


def _failed(failures: dict[Any, Any]) -> list[Failed]:
    return [Failed(id=str(key), kind=f.kind, message=f.message, hint=f.hint or "") for key, f in failures.items()]


def raise_if_none_done(done: list[str], failures: dict[Any, Any]) -> None:
    """When every item failed, the call failed: an error result, not a quiet empty success."""
    if failures and not done:
        key, first = next(iter(failures.items()))
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise ToolFailure(first.kind, f"{key}: {first.message}{more}", first.hint, first.details)


def _failed_text(failed: list[Failed]) -> str:
    if not failed:
        return ""
    lines = [f"\nNOT DONE for {len(failed)} item(s):"]
    lines += [f"- {item.id}: {item.kind}: {item.message}" + (f" ({item.hint})" if item.hint else "") for item in failed]
    return "\n".join(lines)


# --- search ------------------------------------------------------------------------------------


async def search(service: GmailService, args: SearchArgs, ctx: CallContext) -> SearchResult:
    found = await service.run(SEARCH_TOOL, service.search, args.query.strip(), args.labels, args.limit, args.cursor)
    return SearchResult.model_validate(found)


def render_search(result: SearchResult) -> str:
    if not result.messages and not result.failed:
        return "No messages match."
    lines = []
    for hit in result.messages:
        extra = f" [{hit.attachments} attachment(s)]" if hit.attachments else ""
        lines.append(f"- id {hit.id} thread {hit.thread_id} | {hit.date} | {hit.sender} | {hit.subject}{extra}")
        lines.append(f"  labels: {', '.join(hit.labels)} | {hit.snippet}")
    text = fence("email listing", "\n".join(lines)) if lines else "No message could be fetched."
    if result.next_cursor:
        text += f"\nMore: call again with cursor={result.next_cursor}"
    return text + _failed_text(result.failed)


# --- read --------------------------------------------------------------------------------------


async def read(service: GmailService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    found = await service.run(READ_TOOL, service.read, args.id, args.thread)
    text, next_offset = page(found["text"], args.offset, args.max_chars, "total")
    end = args.offset + len(text)
    ends = [*found["starts"][1:], len(found["text"]) + 2]  # each message's text ends 2 before the next starts
    on_page = [  # a message's headers come with the page its text is on, not with every page
        message
        for message, start, after in zip(found["messages"], found["starts"], ends, strict=True)
        if (start < end and after - 2 > args.offset) or start == args.offset
    ]
    return ReadResult(
        id=found["id"],
        thread_id=found["thread_id"],
        messages=on_page,
        messages_total=len(found["messages"]),
        text=text,
        offset=args.offset,
        total_chars=len(found["text"]),
        next_offset=next_offset,
        warnings=found["warnings"][:20],
    )


def render_read(result: ReadResult) -> str:
    header = []
    for message in result.messages:
        header += [f"Message {message.id}", f"From: {message.sender}", f"To: {message.to}"]
        if message.cc:
            header.append(f"Cc: {message.cc}")
        header += [f"Subject: {message.subject}", f"Date: {message.date}", f"Labels: {', '.join(message.labels)}"]
        header += [
            f"Attachment {a.index}: {a.filename} ({a.content_type}, {a.size} bytes)" for a in message.attachments
        ]
    end = result.offset + len(result.text)
    position = f"Thread {result.thread_id}, characters {result.offset:,}-{end:,} of {result.total_chars:,}"
    if result.messages_total > 1:
        position += f" ({len(result.messages)} of its {result.messages_total} messages)"
    if result.next_offset is not None:
        position += f"; {result.total_chars - result.next_offset:,} more, call again with offset={result.next_offset}"
    return position + "\n" + fence("email", "\n".join(header) + "\n\n" + result.text)


# --- attachment --------------------------------------------------------------------------------


async def attachment(service: GmailService, args: AttachmentArgs, ctx: CallContext) -> AttachmentResult:
    from mcp_tools.servers.google.text import decode_bytes

    item, data = await service.run(ATTACHMENT_TOOL, service.attachment, args.message_id, args.index)
    common = {
        "message_id": args.message_id,
        "index": args.index,
        "filename": item.filename,
        "content_type": item.content_type,
        "size": len(data),
    }
    textual = item.content_type.startswith(TEXT_TYPES)
    if args.save:
        from mcp_tools.servers.google.stored import save_named

        folder = f"{service.config.attachments_folder}/{args.message_id}"
        path = await save_named(ctx, folder, item.filename, data)  # files.write, through the policy gate
        return AttachmentResult(
            **common, encoding="saved", content="", saved_path=path, offset=0, total_chars=0, next_offset=None
        )
    if textual:
        text = decode_bytes(data, item.charset, [], "attachment")
        chunk, next_offset = page(text, args.offset, args.max_chars, "total")
        return AttachmentResult(
            **common,
            encoding="text",
            content=chunk,
            saved_path=None,
            offset=args.offset,
            total_chars=len(text),
            next_offset=next_offset,
        )
    if len(data) > service.config.max_attachment_bytes:
        raise ToolFailure(
            "too_large",
            f"{item.filename} is {len(data)} bytes; binary attachments are returned up to "
            f"{service.config.max_attachment_bytes} bytes",
            "pass save=true to store it in the files store",
        )
    from mcp_tools.util.text import binary_page

    offset = args.offset - args.offset % 4
    encoding, chunk, total, next_offset = binary_page(data, item.content_type, offset, args.max_chars)
    paged: Literal["image", "base64"] = "image" if encoding == "image" else "base64"
    result = AttachmentResult(
        **common,
        encoding=paged,
        content=chunk,
        saved_path=None,
        offset=offset,
        total_chars=total,
        next_offset=next_offset,
    )
    return result.with_image(data, item.content_type) if encoding == "image" else result


def render_attachment(result: AttachmentResult) -> str:
    head = f"Attachment {result.index} of {result.message_id}: {result.filename}"
    head += f" ({result.content_type}, {result.size} bytes)"
    if result.encoding == "saved":
        return head + f", saved to the files store as {result.saved_path}"
    if result.encoding == "image":
        return head + ", shown as image content"
    if result.encoding == "base64":
        from mcp_tools.util.text import binary_head

        where = binary_head(
            result.size,
            result.content_type,
            result.offset,
            result.content,
            result.total_chars,
            result.next_offset,
            "save=true",
        )
        return head + "\n" + where + "\nbase64:\n" + result.content
    end = result.offset + len(result.content)
    head += f", characters {result.offset}-{end} of {result.total_chars}"
    if result.next_offset is not None:
        head += f"; {result.total_chars - result.next_offset:,} more, call again with offset={result.next_offset}"
    return head + "\n" + fence("attachment", result.content)


# --- draft and send ----------------------------------------------------------------------------


async def read_attachments(service: GmailService, args: ComposeArgs, ctx: CallContext) -> list[tuple[str, bytes]]:
    """The files-store attachments (name, bytes), read with files.read through the policy gate."""
    from mcp_tools.servers.google.stored import load
    from mcp_tools.util.sandbox import check_key

    for path in args.attachments:
        check_key(path, "unicode", field="attachments")  # the store applies its own rule on files.read
    files: list[tuple[str, bytes]] = []
    total = 0
    for path in args.attachments:
        data = await load(ctx, path, service.config.max_send_bytes)
        total += len(data)
        if total > service.config.max_send_bytes:
            raise ToolFailure(
                "too_large",
                f"the attachments add up to more than {service.config.max_send_bytes} bytes",
                "send fewer or smaller files",
            )
        files.append((path.rsplit("/", 1)[-1], data))
    return files


async def draft(service: GmailService, args: DraftArgs, ctx: CallContext) -> DraftResult:
    from mcp_tools.servers.gmail.recipients import resolve_names

    args, _ = await service.run(DRAFT_TOOL, resolve_names, service, DRAFT_TOOL, args)
    files = await read_attachments(service, args, ctx)
    made = await service.run(DRAFT_TOOL, service.draft, args, files)
    outgoing = made["outgoing"]
    return DraftResult(
        draft_id=made["draft_id"],
        message_id=made["message_id"],
        thread_id=made["thread_id"],
        to=outgoing.to,
        cc=outgoing.cc,
        bcc=outgoing.bcc,
        subject=outgoing.subject,
        attachments=[f"{name} ({len(data)} bytes)" for name, data in outgoing.attachments],
    )


@dataclass
class SendFacts:
    """The attachments as `prepare` read them, then the message as the precheck built and checked it."""

    files: list[tuple[str, bytes]] | None = None
    prepared: dict[str, Any] | None = None  # raw, thread_id, summary (what the person reads), digest, names


async def load_attachments(service: GmailService, args: SendArgs, ctx: CallContext, facts: SendFacts) -> None:
    """Read before anything is sent, so the person confirms the message with its attachments."""
    facts.files = await read_attachments(service, args, ctx)


def _prepare_send(service: GmailService, args: SendArgs, files: list[tuple[str, bytes]] | None) -> dict[str, Any]:
    from mcp_tools.servers.gmail.mime import summarize_outgoing
    from mcp_tools.servers.gmail.recipients import resolve_names
    from mcp_tools.servers.gmail.service import digest

    args, names = resolve_names(service, SEND_TOOL, args)  # before anyone is asked
    if args.draft_id:
        raw, thread_id = service.draft_raw(args.draft_id)
    else:
        outgoing = service.outgoing(SEND_TOOL, args, files)
        raw, thread_id = outgoing.build(), outgoing.thread_id
    summary = summarize_outgoing(raw)
    if not summary["recipients"]:
        raise ToolFailure("invalid_arguments", "the message has no recipient", "add to, cc or bcc")
    refused = service.refused_recipients(summary["recipients"])
    if refused:
        raise ToolFailure(
            "denied_by_policy",
            f"[gmail] allowed_recipients does not allow {', '.join(refused)}",
            "Send only to allowed addresses; the person can widen [gmail] allowed_recipients.",
        )
    return {"raw": raw, "thread_id": thread_id, "summary": summary, "digest": digest(raw), "names": names}


async def precheck_send(service: GmailService, args: SendArgs, facts: SendFacts) -> None:
    facts.prepared = await service.run(SEND_TOOL, _prepare_send, service, args, facts.files)


def _size(size: int) -> str:
    for unit in ("bytes", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return str(size)


def describe_send(args: SendArgs, facts: SendFacts) -> str:
    prepared = facts.prepared
    if prepared is None:
        return f"send draft {args.draft_id}" if args.draft_id else f"send email to {', '.join(args.to + args.cc)}"
    info = prepared["summary"]
    lines = [f"Send email from {info['from'] or 'this account'}"]
    lines.append(f"To: {', '.join(info['to']) or '-'}")
    if info["cc"]:
        lines.append(f"Cc: {', '.join(info['cc'])}")
    if info["bcc"]:
        lines.append(f"Bcc: {', '.join(info['bcc'])}")
    lines.append(f"Subject: {info['subject'] or '(no subject)'}")
    first = [line for line in info["text"].splitlines() if line.strip()][:3]
    lines.append("First lines: " + (" / ".join(line.strip()[:100] for line in first) or "(empty)"))
    for name, size in info["attachments"]:
        lines.append(f"Attachment: {name} ({_size(size)})")
    lines += [f"Name: {note}" for note in prepared.get("names", [])]
    return "\n".join(lines)


async def send(service: GmailService, args: SendArgs, ctx: CallContext, facts: SendFacts) -> SendResult:
    if facts.prepared is None:
        if facts.files is None:
            await load_attachments(service, args, ctx, facts)
        await precheck_send(service, args, facts)
    prepared = facts.prepared
    assert prepared is not None  # the precheck built it or raised

    def deliver() -> dict[str, Any]:
        from mcp_tools.servers.gmail.service import digest

        if args.draft_id:
            current, _ = service.draft_raw(args.draft_id)
            if digest(current) != prepared["digest"]:
                raise ToolFailure(
                    "conflict",
                    f"draft {args.draft_id} changed after it was confirmed",
                    "call gmail_send again so the person confirms the current draft",
                )
            return service.send_draft(args.draft_id)
        return service.send_raw(prepared["raw"], prepared["thread_id"])

    sent = await service.run(SEND_TOOL, deliver)
    return SendResult(
        message_id=sent.get("id", ""),
        thread_id=sent.get("threadId", ""),
        recipients=prepared["summary"]["recipients"],
    )


# --- labels and trash --------------------------------------------------------------------------


async def labels(service: GmailService, args: LabelsArgs, ctx: CallContext) -> LabelsResult:
    tool = LABELS_TOOL
    if not args.ids:
        found = await service.run(tool, service.labels, tool, True)
        return LabelsResult(
            labels=[LabelInfo(id=item["id"], name=item.get("name", ""), type=item.get("type", "")) for item in found],
            changed=[],
            failed=[],
        )

    def change() -> tuple[list[str], dict[Any, Any]]:
        add = service.resolve_labels(tool, args.add)
        remove = service.resolve_labels(tool, args.remove)
        if args.archive:
            remove.append("INBOX")
        if args.mark_read is True:
            remove.append("UNREAD")
        elif args.mark_read is False:
            add.append("UNREAD")
        return service.modify(list(dict.fromkeys(args.ids)), args.thread, add, remove)

    changed, failed = await service.run(tool, change)
    raise_if_none_done(changed, failed)
    return LabelsResult(labels=[], changed=changed, failed=_failed(failed))


def render_labels(result: LabelsResult) -> str:
    if result.labels:
        return "Labels:\n" + "\n".join(f"- {item.name} (id {item.id}, {item.type})" for item in result.labels)
    return f"Changed {len(result.changed)}: {', '.join(result.changed) or 'none'}" + _failed_text(result.failed)


def describe_labels(args: LabelsArgs) -> str:
    if not args.ids:
        return "list Gmail labels"
    what = [f"+{name}" for name in args.add] + [f"-{name}" for name in args.remove]
    what += ["archive"] if args.archive else []
    what += [] if args.mark_read is None else ["mark read" if args.mark_read else "mark unread"]
    return f"{', '.join(what)} on {len(args.ids)} {'thread' if args.thread else 'message'}(s)"


@dataclass
class TrashFacts:
    """One line (subject, sender) per id, read by the precheck for the person."""

    lines: dict[str, str] | None = None


async def precheck_trash(service: GmailService, args: TrashArgs, facts: TrashFacts) -> None:
    lines, failed = await service.run(TRASH_TOOL, service.describe_items, TRASH_TOOL, args.ids, args.thread)
    if failed:
        first = next(iter(failed.items()))
        raise ToolFailure(first[1].kind, f"{first[0]}: {first[1].message}", first[1].hint)
    facts.lines = lines


def describe_trash(args: TrashArgs, facts: TrashFacts) -> str:
    kind = "thread" if args.thread else "message"
    lines = [f"Move {len(args.ids)} {kind}(s) to the Gmail trash (recoverable for 30 days):"]
    lines += [f"- {item}: {(facts.lines or {}).get(item, '')}" for item in args.ids[:20]]
    return "\n".join(lines)


async def trash(service: GmailService, args: TrashArgs, ctx: CallContext, facts: TrashFacts) -> TrashResult:
    trashed, failed = await service.run(TRASH_TOOL, service.trash, list(dict.fromkeys(args.ids)), args.thread)
    raise_if_none_done(trashed, failed)
    return TrashResult(trashed=trashed, failed=_failed(failed))


def render_trash(result: TrashResult) -> str:
    return f"Moved to trash: {', '.join(result.trashed) or 'none'}" + _failed_text(result.failed)


def _recipients_line(args: ComposeArgs) -> str:
    names = args.to + args.cc + args.bcc
    return ", ".join(names) if names else "the original sender"


# Gmail API argument names, as other systems' gmail tools pass them.
_ALIAS_RENAMES = {
    **PAGING,
    "q": "query",
    "messageId": "id",
    "message_id": "id",
    "threadId": "thread_id",
    "labelIds": "labels",
}
_ATTACHMENT_ALIAS_RENAMES = {"messageId": "message_id", "id": "message_id", "partIndex": "index"}
_LABELS_ALIAS_RENAMES = {"messageIds": "ids", "messageId": "id", "addLabelIds": "add", "removeLabelIds": "remove"}


def _read_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """A thread id names a thread: gmail.read takes it as `id` with `thread: true`."""
    out = dict(arguments)
    if "thread_id" in out and "id" not in out:
        out["id"] = out.pop("thread_id")
        out.setdefault("thread", True)
    return out


def _one_or_many_ids_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """`id` / `messageId` for one message becomes gmail's `ids` list."""
    out = dict(arguments)
    if "id" in out and "ids" not in out:
        out["ids"] = [out.pop("id")]
    return out


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name=SEARCH_TOOL,
        scopes=UpstreamScopes((GMAIL_READONLY,), ("gmail.users.messages.list", "gmail.users.messages.get")),
        aliases=(ToolAlias("gmail_list", _ALIAS_RENAMES), ToolAlias("gmail_search", _ALIAS_RENAMES)),
        title="Search Gmail",
        description="Search Gmail; empty query: latest inbox mail.",
        input_model=SearchArgs,
        output_model=SearchResult,
        handler=search,
        risk=Risk.LOW,
        describe=lambda args: f"search Gmail for {args.query!r}",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="core",
        render_text=render_search,
    ),
    ToolSpec(
        name=READ_TOOL,
        scopes=UpstreamScopes((GMAIL_READONLY,), ("gmail.users.messages.get", "gmail.users.threads.get")),
        aliases=(ToolAlias("gmail_read", _ALIAS_RENAMES, _read_alias),),
        title="Read Gmail message",
        description="A message or thread as text, with headers and attachments; page with next_offset.",
        input_model=ReadArgs,
        output_model=ReadResult,
        handler=read,
        risk=Risk.LOW,
        describe=lambda args: f"read Gmail {'thread' if args.thread else 'message'} {args.id}",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="core",
        render_text=render_read,
    ),
    ToolSpec(
        name=ATTACHMENT_TOOL,
        scopes=UpstreamScopes((GMAIL_READONLY,), ("gmail.users.messages.get", "gmail.users.messages.attachments.get")),
        aliases=(ToolAlias("gmail_attachment", _ATTACHMENT_ALIAS_RENAMES),),
        title="Get Gmail attachment",
        description="One attachment: text types as text, others as base64, or saved to the files store.",
        input_model=AttachmentArgs,
        output_model=AttachmentResult,
        handler=attachment,
        risk=Risk.LOW,
        describe=lambda args: f"get attachment {args.index} of Gmail message {args.message_id}",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="extended",
        render_text=render_attachment,
        reaches={"save": "files.write"},
    ),
    ToolSpec(
        name=DRAFT_TOOL,
        scopes=UpstreamScopes(
            (GMAIL_COMPOSE, GMAIL_READONLY),
            ("gmail.users.drafts.create", "gmail.users.drafts.update", "gmail.users.messages.get"),
        ),
        aliases=(ToolAlias("gmail_draft", _ALIAS_RENAMES),),
        title="Write Gmail draft",
        description="Create or replace a draft; reply_to answers a message in its thread.",
        input_model=DraftArgs,
        output_model=DraftResult,
        handler=draft,
        risk=Risk.MEDIUM,
        describe=lambda args: f"save a Gmail draft to {_recipients_line(args)}: {args.subject or ''!r}",
        open_world=True,
        tier="core",
        destructive=False,
        reaches={"attachments": "files.read"},
    ),
    ToolSpec(
        name=SEND_TOOL,
        scopes=UpstreamScopes(
            (GMAIL_SEND, GMAIL_COMPOSE, GMAIL_READONLY),
            (
                "gmail.users.messages.send",
                "gmail.users.drafts.get",
                "gmail.users.drafts.send",
                "gmail.users.messages.get",
            ),
        ),
        aliases=(ToolAlias("gmail_send", _ALIAS_RENAMES),),
        title="Send email",
        description="Send a draft (draft_id) or a new message.",
        input_model=SendArgs,
        output_model=SendResult,
        handler=send,
        risk=Risk.HIGH,
        describe=describe_send,
        prepare=load_attachments,
        precheck=precheck_send,
        facts=SendFacts,
        open_world=True,
        tier="core",
        destructive=True,
        reaches={"attachments": "files.read"},
    ),
    ToolSpec(
        name=LABELS_TOOL,
        scopes=UpstreamScopes(
            (GMAIL_MODIFY,), ("gmail.users.labels.list", "gmail.users.messages.modify", "gmail.users.threads.modify")
        ),
        aliases=(ToolAlias("gmail_labels", _LABELS_ALIAS_RENAMES, _one_or_many_ids_alias),),
        title="Gmail labels",
        description="No ids: list labels. With ids: add/remove labels, archive, mark read.",
        input_model=LabelsArgs,
        output_model=LabelsResult,
        handler=labels,
        risk=Risk.MEDIUM,
        describe=describe_labels,
        idempotent=True,
        open_world=True,
        tier="extended",
        destructive=False,
        render_text=render_labels,
    ),
    ToolSpec(
        name=TRASH_TOOL,
        scopes=UpstreamScopes((GMAIL_MODIFY,), ("gmail.users.messages.trash", "gmail.users.threads.trash")),
        aliases=(ToolAlias("gmail_trash", _LABELS_ALIAS_RENAMES, _one_or_many_ids_alias),),
        title="Trash Gmail messages",
        description="Move messages or threads to the trash (never a permanent delete).",
        input_model=TrashArgs,
        output_model=TrashResult,
        handler=trash,
        risk=Risk.HIGH,
        describe=describe_trash,
        precheck=precheck_trash,
        facts=TrashFacts,
        idempotent=True,
        open_world=True,
        tier="extended",
        destructive=True,
        render_text=render_trash,
    ),
]
