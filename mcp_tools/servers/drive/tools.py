"""The six drive tools, declared as data.

File content is untrusted: every text block carrying it is fenced. Writes carry the file's
`version` (Drive's counter of changes): a stale one is a conflict found before anyone is asked.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from mcp_tools.text import fence
from mcp_tools.tooling import MAX_PAGE_CHARS, Arguments, CallContext, Output, Risk, ToolFailure, ToolSpec

if TYPE_CHECKING:
    from mcp_tools.servers.drive.service import DriveService

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


def _line(item: FileInfo) -> str:
    size = f", {item.size} bytes" if item.size is not None else ""
    return f"- {item.name} (id {item.id}, {item.type}{size}, modified {item.modified}, version {item.version})"


# --- search ------------------------------------------------------------------------------------


class SearchArgs(Arguments):
    name: Short = Field(default=None, description="A word of the name starts with this.")
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


async def search(service: DriveService, args: SearchArgs, ctx: CallContext) -> SearchResult:
    return SearchResult.model_validate(await service.run("drive.search", service.search, args))


def render_search(result: SearchResult) -> str:
    if not result.files:
        text = "No files match."
    else:
        text = fence("Drive listing", "\n".join(_line(item) for item in result.files))
    if result.next_page_token:
        text += f"\nMore: call again with page_token={result.next_page_token}"
    return text


# --- read --------------------------------------------------------------------------------------


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


def _is_text(mime: str) -> bool:
    from mcp_tools.servers.drive.service import EXPORTS, TEXT_TYPES

    return mime in EXPORTS or mime.startswith(TEXT_TYPES)


def _read(service: DriveService, args: ReadArgs) -> tuple[ReadResult, bytes | None]:
    """The result, and with save_to the bytes to store (the handler stores them through files.write)."""
    from mcp_tools.servers.drive.service import EXPORTS, FOLDER, SHEET, file_info
    from mcp_tools.servers.google.text import page

    meta = service.target("drive.read", args.id)
    info = FileInfo.model_validate(file_info(meta))
    file_id = info.id  # a shortcut's target
    mime = meta.get("mimeType", "")
    if mime == FOLDER:
        raise ToolFailure(
            "invalid_arguments", f"{info.name!r} is a folder", f"list it with drive_search folder={file_id}"
        )
    if args.sheet and mime != SHEET:
        raise ToolFailure("invalid_arguments", f"sheet: {info.name!r} is a {info.type}, not a spreadsheet")
    limit = service.config.max_download_bytes
    if info.size is not None and info.size > limit and mime not in EXPORTS:
        raise ToolFailure(
            "too_large",
            f"{info.name!r} is {info.size} bytes; drive.read downloads at most {limit} bytes",
            "the person can raise [drive] max_download_bytes, or open it in Google Drive",
        )
    common: dict[str, Any] = {"file": info, "sheets": [], "warnings": []}
    if args.save_to:
        exported = mime in EXPORTS
        data = service.read_text(meta, args.sheet or "")[0].encode("utf-8") if exported else service.download(file_id)
        saved = ReadResult(**common, encoding="saved", content="", offset=0, total_chars=0, next_offset=None)
        return saved, data
    if _is_text(mime):
        text, sheets, warnings = service.read_text(meta, args.sheet or "")
        chunk, next_offset = page(text, args.offset, args.max_chars, "total")
        return ReadResult(
            **{**common, "sheets": sheets, "warnings": warnings[:20]},
            encoding="text",
            content=chunk,
            offset=args.offset,
            total_chars=len(text),
            next_offset=next_offset,
        ), None
    if mime.startswith("application/vnd.google-apps."):
        raise ToolFailure("invalid_arguments", f"{info.name!r} ({info.type}) has no text form to read")
    if info.size is not None and info.size > service.config.max_read_bytes:
        raise ToolFailure(
            "too_large",
            f"{info.name!r} is {info.size} bytes; binary files are returned up to {service.config.max_read_bytes}",
            "pass save_to=PATH to store it in the files store",
        )
    from mcp_tools.text import binary_page

    data = service.download(file_id)
    offset = args.offset - args.offset % 4
    encoding, chunk, total, next_offset = binary_page(data, mime, offset, args.max_chars)
    paged: Literal["image", "base64"] = "image" if encoding == "image" else "base64"
    result = ReadResult(
        **common, encoding=paged, content=chunk, offset=offset, total_chars=total, next_offset=next_offset
    )
    return (result.with_image(data, mime) if paged == "image" else result), None


async def read(service: DriveService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    if args.save_to:  # refused before the download when no name rule of the files store could take it
        from mcp_tools.sandbox import check_key

        check_key(args.save_to, "unicode", field="save_to")
    read_result: tuple[ReadResult, bytes | None] = await service.run("drive.read", _read, service, args)
    result, data = read_result
    if data is not None and args.save_to:
        from mcp_tools.servers.google.stored import save

        await save(ctx, args.save_to, data)  # files.write, through the policy gate
    return result


def render_read(result: ReadResult) -> str:
    """Where this page sits, then the file's names and content inside one fence (both come from outside)."""
    head = _line(result.file)[2:]
    if result.sheets:
        head += f"\nSheets: {', '.join(result.sheets)}"
    if result.encoding == "saved":
        return f"File {result.file.id} saved to the files store.\n" + fence("Drive file", head)
    if result.encoding == "image":
        return f"Image {result.file.id} ({result.file.type}), shown as image content.\n" + fence("Drive file", head)
    if result.encoding == "base64":
        from mcp_tools.text import binary_head

        size = result.file.size or 0
        where = binary_head(
            size,
            result.file.type,
            result.offset,
            result.content,
            result.total_chars,
            result.next_offset,
            "save_to=PATH",
        )
        return where + "\n" + fence("Drive file", head) + "\nbase64:\n" + result.content
    end = result.offset + len(result.content)
    position = f"File {result.file.id}, characters {result.offset}-{end} of {result.total_chars}"
    if result.next_offset is not None:
        position += f"; {result.total_chars - result.next_offset:,} more, call again with offset={result.next_offset}"
    position += "".join(f"\nWarning: {warning}" for warning in result.warnings)
    return position + "\n" + fence("Drive file", head + "\n\n" + result.content)


# --- create and update -------------------------------------------------------------------------


class ContentArgs(Arguments):
    content: Annotated[str | None, _at_most(2_000_000)] = None
    content_base64: Annotated[str | None, _at_most(30_000_000)] = None
    mime_type: Annotated[str | None, AfterValidator(_mime)] = None
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
        if self.content and self.content_base64:
            raise ValueError("give content or content_base64, not both")
        return self


class CreateArgs(ContentArgs):
    name: Annotated[str, _at_most(255)] = Field(min_length=1)
    folder: OptionalId = Field(default=None, description="Parent id; default root.")
    type: Literal["file", "folder"] = "file"
    convert: bool = Field(default=False, description="Markdown/CSV to a Google Doc/Sheet.")

    @model_validator(mode="after")
    def _check(self) -> CreateArgs:
        if self.type == "folder" and (self.content or self.content_base64 or self.convert):
            raise ValueError("a folder takes no content or convert")
        return self


class WriteResult(Output):
    file: FileInfo
    link: str


def _link(item: dict[str, Any]) -> str:
    from mcp_tools.servers.drive.service import FOLDER

    if item.get("mimeType") == FOLDER:
        return f"https://drive.google.com/drive/folders/{item.get('id', '')}"
    return f"https://drive.google.com/open?id={item.get('id', '')}"


def _written(item: dict[str, Any]) -> WriteResult:
    from mcp_tools.servers.drive.service import file_info

    return WriteResult(file=FileInfo.model_validate(file_info(item)), link=_link(item))


def _create(service: DriveService, args: CreateArgs) -> WriteResult:
    from mcp_tools.servers.drive.service import CONVERSIONS, FOLDER

    metadata: dict[str, Any] = {"name": args.name}
    if args.folder:
        metadata["parents"] = [args.folder]
    if args.type == "folder":
        metadata["mimeType"] = FOLDER
        return _written(service.create(metadata, None, ""))
    data = args.data(service.config.max_upload_bytes) or b""
    mime = args.content_type(args.name)
    if args.convert:
        if mime not in CONVERSIONS:
            raise ToolFailure(
                "invalid_arguments", f"convert takes Markdown, text, HTML or CSV, not {mime}", "set mime_type"
            )
        metadata["mimeType"] = CONVERSIONS[mime]
        metadata["name"] = re.sub(r"\.(md|markdown|txt|html?|csv)$", "", args.name, flags=re.IGNORECASE) or args.name
    else:
        metadata["mimeType"] = mime
    return _written(service.create(metadata, data, mime))


async def create(service: DriveService, args: CreateArgs, ctx: CallContext) -> WriteResult:
    created: WriteResult = await service.run("drive.create", _create, service, args)
    return created


class UpdateArgs(ContentArgs):
    id: DriveId = Id
    name: Short = None
    version: Annotated[str | None, AfterValidator(_version)] = None

    @model_validator(mode="after")
    def _something(self) -> UpdateArgs:
        if not (self.name or self.content or self.content_base64):
            raise ValueError("name, content or content_base64: say what to change")
        return self


def _check_version(service: DriveService, tool: str, file_id: str, version: str | None) -> dict[str, Any]:
    """The file's metadata; a conflict when the model's version is no longer the file's."""
    current = service.metadata(tool, file_id)
    if version and str(current.get("version", "")) != version:
        raise ToolFailure(
            "conflict",
            f"{current.get('name', file_id)!r} changed since version {version} (now {current.get('version')})",
            "read it again with drive_read, then retry with its version",
        )
    return current


async def update_risk(service: DriveService, args: UpdateArgs, facts: UpdateFacts) -> Risk:
    replaces = bool(args.content or args.content_base64)
    return Risk.HIGH if replaces and not args.version else Risk.MEDIUM


def _prepare_update(service: DriveService, args: UpdateArgs) -> tuple[dict[str, Any], bytes | None, str]:
    """The file as it is now, the bytes to send and their type; every refusal found before writing."""
    from mcp_tools.servers.drive.service import CONVERSIONS, EXPORTS, FOLDER

    current = _check_version(service, "drive.update", args.id, args.version)
    data = args.data(service.config.max_upload_bytes)
    kind = current.get("mimeType", "")
    imports = {target: source for source, target in reversed(CONVERSIONS.items())}  # Doc <- Markdown, Sheet <- CSV
    default = imports.get(kind) if kind in EXPORTS else (kind if data is not None else "")
    mime = args.mime_type or default or args.content_type(current.get("name", ""))
    if data is not None and (kind == FOLDER or kind.startswith("application/vnd.google-apps.")) and kind not in EXPORTS:
        raise ToolFailure("invalid_arguments", f"{current.get('name', args.id)!r} ({kind}) has no content to replace")
    if data is not None and kind in EXPORTS and CONVERSIONS.get(mime) != kind:
        raise ToolFailure(
            "invalid_arguments",
            f"the content of a Google {kind.rsplit('.', 1)[-1]} is replaced only from "
            + ("CSV" if kind.endswith("spreadsheet") else "Markdown or text"),
            "set mime_type",
        )
    return current, data, mime


@dataclass
class UpdateFacts:
    """The file as the precheck found it, for the line the person reads and the handler."""

    current: dict[str, Any] | None = None


async def precheck_update(service: DriveService, args: UpdateArgs, facts: UpdateFacts) -> None:
    facts.current = (await service.run("drive.update", _prepare_update, service, args))[0]


def describe_update(args: UpdateArgs, facts: UpdateFacts) -> str:
    name = (facts.current or {}).get("name", args.id)
    what = []
    if args.content or args.content_base64:
        what.append("replace the content" + ("" if args.version else " (not checked against a version read)"))
    if args.name:
        what.append(f"rename to {args.name!r}")
    return f"Drive file {name!r} (id {args.id}): " + " and ".join(what)


def _update(service: DriveService, args: UpdateArgs) -> WriteResult:
    _, data, mime = _prepare_update(service, args)  # again: the file may have changed while the person was asked
    metadata = {"name": args.name} if args.name else {}
    return _written(service.update(args.id, metadata, data, mime))


async def update(service: DriveService, args: UpdateArgs, ctx: CallContext, facts: UpdateFacts) -> WriteResult:
    updated: WriteResult = await service.run("drive.update", _update, service, args)
    return updated


# --- delete and share --------------------------------------------------------------------------


class DeleteArgs(Arguments):
    id: DriveId = Id


@dataclass
class DeleteFacts:
    """The file as the precheck found it, and whether it goes for good."""

    current: dict[str, Any] | None = None
    permanent: bool = False  # [drive] delete = "permanent": gone for good, not to the trash


class DeleteResult(Output):
    id: str
    name: str
    outcome: Literal["trashed", "deleted"]


async def precheck_delete(service: DriveService, args: DeleteArgs, facts: DeleteFacts) -> None:
    facts.current = await service.run("drive.delete", service.metadata, "drive.delete", args.id)
    facts.permanent = service.config.delete == "permanent"


def describe_delete(args: DeleteArgs, facts: DeleteFacts) -> str:
    from mcp_tools.servers.drive.service import FOLDER, type_name

    current = facts.current or {}
    name, kind = current.get("name", args.id), type_name(current.get("mimeType", ""))
    inside = " and everything in it" if current.get("mimeType") == FOLDER else ""
    if facts.permanent:
        return f"PERMANENTLY delete {kind} {name!r} (id {args.id}){inside} from Google Drive; this cannot be undone"
    return f"Move {kind} {name!r} (id {args.id}){inside} to the Google Drive trash (restorable for 30 days)"


def _delete(service: DriveService, args: DeleteArgs, facts: DeleteFacts) -> DeleteResult:
    current = facts.current or service.metadata("drive.delete", args.id)
    if service.config.delete == "permanent":
        service.delete(args.id)
        return DeleteResult(id=args.id, name=current.get("name", ""), outcome="deleted")
    service.trash(args.id)
    return DeleteResult(id=args.id, name=current.get("name", ""), outcome="trashed")


async def delete(service: DriveService, args: DeleteArgs, ctx: CallContext, facts: DeleteFacts) -> DeleteResult:
    deleted: DeleteResult = await service.run("drive.delete", _delete, service, args, facts)
    return deleted


ROLES = {"reader": "view", "commenter": "comment", "writer": "edit"}


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


@dataclass
class ShareFacts:
    """The name of the file being shared, as the precheck found it."""

    name: str = ""


async def precheck_share(service: DriveService, args: ShareArgs, facts: ShareFacts) -> None:
    config = service.config
    if args.type == "anyone" and not config.allow_link_sharing:
        raise ToolFailure(
            "denied_by_policy",
            "sharing with anyone who has the link is turned off",
            "share with named people instead; the person can set [drive] allow_link_sharing = true",
        )
    domain = (args.email or "").rpartition("@")[2]
    if args.email and config.allowed_domains and domain not in config.allowed_domains:
        raise ToolFailure(
            "denied_by_policy",
            f"[drive] allowed_domains does not include {domain}",
            f"share only with addresses at {', '.join(config.allowed_domains)}",
        )
    current = await service.run("drive.share", service.metadata, "drive.share", args.id)
    facts.name = current.get("name", "")


def describe_share(args: ShareArgs, facts: ShareFacts) -> str:
    who = "anyone with the link" if args.type == "anyone" else f"{args.email} ({args.type})"
    told = ""
    if args.notify and args.type != "anyone":
        told = f", emailing them: {args.message[:300]!r}" if args.message else " and email them"
    return f"Give {who} {ROLES[args.role]} access ({args.role}) to {facts.name or args.id!r} (id {args.id}){told}"


async def share(service: DriveService, args: ShareArgs, ctx: CallContext, facts: ShareFacts) -> ShareResult:
    permission: dict[str, Any] = {"type": args.type, "role": args.role}
    if args.email:
        permission["emailAddress"] = args.email
    else:
        permission["allowFileDiscovery"] = False
    made = await service.run("drive.share", service.share, args.id, permission, args.notify, args.message or "")
    return ShareResult(
        id=args.id,
        name=facts.name,
        permission_id=made.get("id", ""),
        type=made.get("type", args.type),
        role=made.get("role", args.role),
        email=made.get("emailAddress", args.email or ""),
    )


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name="drive.search",
        title="Search Google Drive",
        description="Find Drive files; no filter lists a folder (root).",
        input_model=SearchArgs,
        output_model=SearchResult,
        handler=search,
        risk=Risk.LOW,
        describe=lambda args: "search Google Drive",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="core",
        render_text=render_search,
    ),
    ToolSpec(
        name="drive.read",
        title="Read Drive file",
        description="Read a file: Docs as Markdown, Sheets as CSV, text paged; binary as base64 or save_to.",
        input_model=ReadArgs,
        output_model=ReadResult,
        handler=read,
        risk=Risk.LOW,
        describe=lambda args: f"read Drive file {args.id}",
        read_only=True,
        idempotent=True,
        open_world=True,
        tier="core",
        render_text=render_read,
        reaches={"save_to": "files.write"},
    ),
    ToolSpec(
        name="drive.create",
        title="Create Drive file",
        description="Create a Drive file or folder.",
        input_model=CreateArgs,
        output_model=WriteResult,
        handler=create,
        risk=Risk.MEDIUM,
        describe=lambda args: f"create Drive {args.type} {args.name!r}",
        open_world=True,
        tier="extended",
        destructive=False,
    ),
    ToolSpec(
        name="drive.update",
        title="Update Drive file",
        description="Replace a file's content and/or rename it; version refuses a stale write.",
        input_model=UpdateArgs,
        output_model=WriteResult,
        handler=update,
        risk=Risk.MEDIUM,
        describe=describe_update,
        dynamic_risk=update_risk,
        precheck=precheck_update,
        facts=UpdateFacts,
        open_world=True,
        tier="extended",
        destructive=True,
    ),
    ToolSpec(
        name="drive.delete",
        title="Delete Drive file",
        description="Trash a Drive file or folder.",
        input_model=DeleteArgs,
        output_model=DeleteResult,
        handler=delete,
        risk=Risk.HIGH,
        describe=describe_delete,
        precheck=precheck_delete,
        facts=DeleteFacts,
        open_world=True,
        tier="extended",
        destructive=True,
    ),
    ToolSpec(
        name="drive.share",
        title="Share Drive file",
        description="Share a Drive file.",
        input_model=ShareArgs,
        output_model=ShareResult,
        handler=share,
        risk=Risk.HIGH,
        describe=describe_share,
        precheck=precheck_share,
        facts=ShareFacts,
        open_world=True,
        tier="extended",
        destructive=True,
    ),
]
