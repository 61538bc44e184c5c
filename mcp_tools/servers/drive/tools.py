"""The six drive tools, declared as data.

File content is untrusted: every text block carrying it is fenced. Writes carry the file's
`version` (Drive's counter of changes): a stale one is a conflict found before anyone is asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcp_tools.core.tooling import CallContext, Risk, ToolAlias, ToolFailure, ToolSpec, UpstreamScopes
from mcp_tools.servers.drive.models import (
    CONTENT_FIELDS,
    CreateArgs,
    DeleteArgs,
    DeleteResult,
    FileInfo,
    ReadArgs,
    ReadResult,
    SearchArgs,
    SearchResult,
    ShareArgs,
    ShareResult,
    UpdateArgs,
    WriteResult,
)
from mcp_tools.servers.drive.service import (
    CREATE_TOOL,
    DELETE_TOOL,
    FILE_FIELDS,
    READ_TOOL,
    SEARCH_TOOL,
    SHARE_TOOL,
    UPDATE_TOOL,
)
from mcp_tools.servers.google.aliases import PAGING
from mcp_tools.servers.google.scopes import DRIVE, DRIVE_FILE, DRIVE_READONLY
from mcp_tools.servers.google.sharing import SharingFacts, exposure_risk, told
from mcp_tools.util.text import fence

if TYPE_CHECKING:
    from mcp_tools.servers.drive.service import DriveService


def _line(item: FileInfo) -> str:
    size = f", {item.size} bytes" if item.size is not None else ""
    return f"- {item.name} (id {item.id}, {item.type}{size}, modified {item.modified}, version {item.version})"


# --- search ------------------------------------------------------------------------------------


async def search(service: DriveService, args: SearchArgs, ctx: CallContext) -> SearchResult:
    return SearchResult.model_validate(await service.run(SEARCH_TOOL, service.search, args))


def render_search(result: SearchResult) -> str:
    if not result.files:
        text = "No files match."
    else:
        text = fence("Drive listing", "\n".join(_line(item) for item in result.files))
    if result.next_page_token:
        text += f"\nMore: call again with page_token={result.next_page_token}"
    return text


# --- read --------------------------------------------------------------------------------------


def _is_text(mime: str) -> bool:
    from mcp_tools.servers.drive.service import EXPORTS, TEXT_TYPES

    return mime in EXPORTS or mime.startswith(TEXT_TYPES)


def _read(service: DriveService, args: ReadArgs) -> tuple[ReadResult, bytes | None]:
    """The result, and with save_to an export's bytes to store (a file's own are downloaded by the
    handler, in chunks with progress); the handler stores them through files.write."""
    from mcp_tools.servers.drive.service import EXPORTS, FOLDER, SHEET, file_info
    from mcp_tools.servers.google.text import page

    meta = service.target(READ_TOOL, args.id)
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
        data = service.read_text(meta, args.sheet or "")[0].encode("utf-8") if exported else None
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
    from mcp_tools.util.text import binary_page

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
        from mcp_tools.util.sandbox import check_key

        check_key(args.save_to, "unicode", field="save_to")
    read_result: tuple[ReadResult, bytes | None] = await service.run(READ_TOOL, _read, service, args)
    result, data = read_result
    if args.save_to and data is None:
        from mcp_tools.servers.drive.transfer import download

        data = await download(service, READ_TOOL, result.file.id, result.file.size, ctx)
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
        from mcp_tools.util.text import binary_head

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


def _link(item: dict[str, Any]) -> str:
    from mcp_tools.servers.drive.service import FOLDER

    if item.get("mimeType") == FOLDER:
        return f"https://drive.google.com/drive/folders/{item.get('id', '')}"
    return f"https://drive.google.com/open?id={item.get('id', '')}"


def _written(item: dict[str, Any]) -> WriteResult:
    from mcp_tools.servers.drive.service import file_info

    return WriteResult(file=FileInfo.model_validate(file_info(item)), link=_link(item))


@dataclass
class CreateFacts(SharingFacts):
    """The files-store file to upload (`from_path`), as `prepare` read it."""

    upload: bytes | None = None


def is_upload(arguments: Mapping[str, Any]) -> bool:
    """Whether a create or update call moves content (the calls worth a task: they may take long)."""
    return any(arguments.get(field) for field in CONTENT_FIELDS)


async def load_upload(service: DriveService, args: CreateArgs | UpdateArgs, ctx: CallContext, facts: Any) -> None:
    """`from_path`: the file read from the files store through `files.read`, before anyone is asked."""
    if args.from_path:
        from mcp_tools.servers.google.stored import load

        facts.upload = await load(ctx, args.from_path, service.config.max_upload_bytes)


Chunked = tuple[dict[str, Any], bytes, str]  # a write too large for one request: metadata, bytes, type


def _content(service: DriveService, args: CreateArgs | UpdateArgs, upload: bytes | None) -> bytes | None:
    return upload if args.from_path else args.data(service.config.max_upload_bytes)


def _create(service: DriveService, args: CreateArgs, upload: bytes | None = None) -> WriteResult | Chunked:
    """The folder or small file created; for content larger than a chunk, what to upload."""
    from mcp_tools.servers.drive.service import CONVERSIONS, FOLDER
    from mcp_tools.servers.drive.transfer import CHUNK_BYTES

    metadata: dict[str, Any] = {"name": args.name}
    if args.folder:
        metadata["parents"] = [args.folder]
    if args.type == "folder":
        metadata["mimeType"] = FOLDER
        return _written(service.create(metadata, None, ""))
    data = _content(service, args, upload) or b""
    mime = args.content_type(args.from_path or args.name)
    if args.convert:
        if mime not in CONVERSIONS:
            raise ToolFailure(
                "invalid_arguments", f"convert takes Markdown, text, HTML or CSV, not {mime}", "set mime_type"
            )
        metadata["mimeType"] = CONVERSIONS[mime]
        metadata["name"] = re.sub(r"\.(md|markdown|txt|html?|csv)$", "", args.name, flags=re.IGNORECASE) or args.name
    else:
        metadata["mimeType"] = mime
    if len(data) > CHUNK_BYTES:
        return metadata, data, mime
    return _written(service.create(metadata, data, mime))


async def create(service: DriveService, args: CreateArgs, ctx: CallContext, facts: CreateFacts) -> WriteResult:
    return await _write(
        service,
        CREATE_TOOL,
        ctx,
        lambda files, metadata, media: files.create(
            body=metadata, media_body=media, fields=FILE_FIELDS, supportsAllDrives=True
        ),
        _create,
        args,
        facts.upload,
    )


async def _write(
    service: DriveService,
    tool: str,
    ctx: CallContext,
    send: Callable[[Any, dict[str, Any], Any], Any],
    step: Callable[..., WriteResult | Chunked],
    *step_args: Any,
) -> WriteResult:
    """Runs a write (`step`, given the service and `step_args`); one it hands back as too large for
    one request goes up chunk by chunk, with progress (`send` makes each chunk's create or update)."""
    done: WriteResult | Chunked = await service.run(tool, step, service, *step_args)
    if isinstance(done, WriteResult):
        return done
    from mcp_tools.servers.drive.transfer import upload

    metadata, data, mime = done
    return _written(
        await upload(service, tool, lambda drive, media: send(drive.files(), metadata, media), data, mime, ctx)
    )


async def create_risk(service: DriveService, args: CreateArgs, facts: SharingFacts) -> Risk:
    """High when the folder it lands in is another's or shared: the new file is open to them too."""
    return await exposure_risk(service, CREATE_TOOL, args.folder, facts, Risk.MEDIUM)


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
    replaces = args.replaces
    base = Risk.HIGH if replaces and not args.version else Risk.MEDIUM
    return await exposure_risk(service, UPDATE_TOOL, args.id, facts, base)


def _prepare_update(
    service: DriveService, args: UpdateArgs, upload: bytes | None = None
) -> tuple[dict[str, Any], bytes | None, str]:
    """The file as it is now, the bytes to send and their type; every refusal found before writing."""
    from mcp_tools.servers.drive.service import CONVERSIONS, EXPORTS, FOLDER

    current = _check_version(service, UPDATE_TOOL, args.id, args.version)
    data = _content(service, args, upload)
    kind = current.get("mimeType", "")
    imports = {target: source for source, target in reversed(CONVERSIONS.items())}  # Doc <- Markdown, Sheet <- CSV
    default = imports.get(kind) if kind in EXPORTS else (kind if data is not None else "")
    mime = args.mime_type or default or args.content_type(args.from_path or current.get("name", ""))
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
class UpdateFacts(SharingFacts):
    """The file as the precheck found it, for the line the person reads and the handler."""

    current: dict[str, Any] | None = None
    upload: bytes | None = None  # the files-store file to upload (`from_path`), as `prepare` read it


async def precheck_update(service: DriveService, args: UpdateArgs, facts: UpdateFacts) -> None:
    facts.current = (await service.run(UPDATE_TOOL, _prepare_update, service, args, facts.upload))[0]


def describe_update(args: UpdateArgs, facts: UpdateFacts) -> str:
    name = (facts.current or {}).get("name", args.id)
    what = []
    if args.replaces:
        what.append(
            "replace the content"
            + (f" with {args.from_path} from the files store" if args.from_path else "")
            + ("" if args.version else " (not checked against a version read)")
        )
    if args.name:
        what.append(f"rename to {args.name!r}")
    return told(f"Drive file {name!r} (id {args.id}): " + " and ".join(what), facts)


def _update(service: DriveService, args: UpdateArgs, upload: bytes | None = None) -> WriteResult | Chunked:
    """The file updated; for content larger than a chunk, what to upload."""
    from mcp_tools.servers.drive.transfer import CHUNK_BYTES

    _, data, mime = _prepare_update(
        service, args, upload
    )  # again: the file may have changed while the person was asked
    metadata = {"name": args.name} if args.name else {}
    if data is not None and len(data) > CHUNK_BYTES:
        return metadata, data, mime
    return _written(service.update(args.id, metadata, data, mime))


async def update(service: DriveService, args: UpdateArgs, ctx: CallContext, facts: UpdateFacts) -> WriteResult:
    return await _write(
        service,
        UPDATE_TOOL,
        ctx,
        lambda files, metadata, media: files.update(
            fileId=args.id, body=metadata, media_body=media, fields=FILE_FIELDS, supportsAllDrives=True
        ),
        _update,
        args,
        facts.upload,
    )


# --- delete and share --------------------------------------------------------------------------


@dataclass
class DeleteFacts:
    """The file as the precheck found it, and whether it goes for good."""

    current: dict[str, Any] | None = None
    permanent: bool = False  # [drive] delete = "permanent": gone for good, not to the trash


async def precheck_delete(service: DriveService, args: DeleteArgs, facts: DeleteFacts) -> None:
    facts.current = await service.run(DELETE_TOOL, service.metadata, DELETE_TOOL, args.id)
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
    current = facts.current or service.metadata(DELETE_TOOL, args.id)
    if service.config.delete == "permanent":
        service.delete(args.id)
        return DeleteResult(id=args.id, name=current.get("name", ""), outcome="deleted")
    service.trash(args.id)
    return DeleteResult(id=args.id, name=current.get("name", ""), outcome="trashed")


async def delete(service: DriveService, args: DeleteArgs, ctx: CallContext, facts: DeleteFacts) -> DeleteResult:
    deleted: DeleteResult = await service.run(DELETE_TOOL, _delete, service, args, facts)
    return deleted


ROLES = {"reader": "view", "commenter": "comment", "writer": "edit"}


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
    current = await service.run(SHARE_TOOL, service.metadata, SHARE_TOOL, args.id)
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
    made = await service.run(SHARE_TOOL, service.share, args.id, permission, args.notify, args.message or "")
    return ShareResult(
        id=args.id,
        name=facts.name,
        permission_id=made.get("id", ""),
        type=made.get("type", args.type),
        role=made.get("role", args.role),
        email=made.get("emailAddress", args.email or ""),
    )


# Drive API argument names, as other systems' drive tools pass them.
_ALIAS_RENAMES = {
    **PAGING,
    "pageToken": "page_token",
    "fileId": "id",
    "file_id": "id",
    "folderId": "folder",
    "folder_id": "folder",
    "parentId": "folder",
    "mimeType": "mime_type",
    "title": "name",
}


TOOLS: list[ToolSpec[Any, Any, Any]] = [
    ToolSpec(
        name=SEARCH_TOOL,
        scopes=UpstreamScopes((DRIVE_FILE,), ("drive.files.list",), wider={"read": (DRIVE_READONLY,), "all": (DRIVE,)}),
        aliases=(ToolAlias("drive_list", _ALIAS_RENAMES), ToolAlias("drive_search", _ALIAS_RENAMES)),
        title="Search Google Drive",
        description="Find files; no filter lists a folder (root).",
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
        name=READ_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,),
            ("drive.files.get", "drive.files.export", "sheets.spreadsheets.get", "sheets.spreadsheets.values.get"),
            wider={"read": (DRIVE_READONLY,), "all": (DRIVE,)},
        ),
        aliases=(ToolAlias("drive_read", _ALIAS_RENAMES),),
        title="Read Drive file",
        description="Docs as Markdown, Sheets as CSV, text paged; binary as base64 or save_to.",
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
        task_support="optional",  # a large file saved to the files store downloads chunk by chunk
        long_call=lambda arguments: bool(arguments.get("save_to")),
    ),
    ToolSpec(
        name=CREATE_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,), ("drive.files.get", "drive.files.create"), wider={"read": (DRIVE_FILE,), "all": (DRIVE,)}
        ),
        aliases=(ToolAlias("drive_create", _ALIAS_RENAMES),),
        title="Create Drive file",
        description="A new Drive file or folder.",
        input_model=CreateArgs,
        output_model=WriteResult,
        handler=create,
        risk=Risk.MEDIUM,
        describe=lambda args, facts: told(f"create Drive {args.type} {args.name!r}", facts),
        dynamic_risk=create_risk,
        facts=CreateFacts,
        reaches={"from_path": "files.read"},
        prepare=load_upload,
        task_support="optional",  # an upload moves chunk by chunk, with progress
        long_call=is_upload,
        open_world=True,
        tier="extended",
        destructive=False,
    ),
    ToolSpec(
        name=UPDATE_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,), ("drive.files.get", "drive.files.update"), wider={"read": (DRIVE_FILE,), "all": (DRIVE,)}
        ),
        aliases=(ToolAlias("drive_update", _ALIAS_RENAMES),),
        title="Update Drive file",
        description="New content and/or name; version refuses a stale write.",
        input_model=UpdateArgs,
        output_model=WriteResult,
        handler=update,
        risk=Risk.MEDIUM,
        describe=describe_update,
        dynamic_risk=update_risk,
        precheck=precheck_update,
        facts=UpdateFacts,
        reaches={"from_path": "files.read"},
        prepare=load_upload,
        task_support="optional",  # an upload moves chunk by chunk, with progress
        long_call=is_upload,
        open_world=True,
        tier="extended",
        destructive=True,
    ),
    ToolSpec(
        name=DELETE_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,),
            ("drive.files.get", "drive.files.update", "drive.files.delete"),
            wider={"read": (DRIVE_FILE,), "all": (DRIVE,)},
        ),
        aliases=(ToolAlias("drive_delete", _ALIAS_RENAMES),),
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
        name=SHARE_TOOL,
        scopes=UpstreamScopes(
            (DRIVE_FILE,),
            ("drive.files.get", "drive.permissions.create"),
            wider={"read": (DRIVE_FILE,), "all": (DRIVE,)},
        ),
        aliases=(ToolAlias("drive_share", {**_ALIAS_RENAMES, "emailAddress": "email"}),),
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
