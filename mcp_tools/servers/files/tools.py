"""The files tools, declared as data: list and read here, the changes in `changes`, search in `grep`."""

from __future__ import annotations

import base64
from typing import Any, Literal

from mcp_tools.core.tooling import (
    INLINE_IMAGE_TYPES,
    MAX_INLINE_IMAGE_BYTES,
    CallContext,
    Risk,
    ToolAlias,
    ToolFailure,
    ToolSpec,
)
from mcp_tools.servers.files.aliases import IMPORT_ALIAS_RENAMES, edit_file_alias, files_aliases, filesystem_edit_alias
from mcp_tools.servers.files.backend import (
    MAX_LISTED,
    StoredEntry,
    compile_glob,
    decode_cursor,
    encode_cursor,
)
from mcp_tools.servers.files.changes import (
    delete_file,
    delete_info,
    delete_precheck,
    describe_delete,
    describe_edit,
    describe_import,
    describe_move,
    describe_write,
    edit_file,
    edit_precheck,
    import_file,
    import_precheck,
    import_risk,
    make_folder,
    move_file,
    move_precheck,
    move_risk,
    render_edit,
    write_file,
    write_precheck,
    write_risk,
)
from mcp_tools.servers.files.common import as_entry, decode_text, key_arg, mime_type_of, names_note
from mcp_tools.servers.files.copy import copy_file, copy_precheck, copy_risk, describe_copy
from mcp_tools.servers.files.grep import describe_search, render_search, search_files
from mcp_tools.servers.files.models import (
    CopyArgs,
    CopyFacts,
    CopyResult,
    DeleteArgs,
    DeleteFacts,
    DeleteResult,
    EditArgs,
    EditResult,
    ExistingFacts,
    ImportArgs,
    ImportResult,
    ListArgs,
    ListResult,
    MkdirArgs,
    MkdirResult,
    MoveArgs,
    MoveFacts,
    MoveResult,
    ReadArgs,
    ReadResult,
    SearchArgs,
    SearchResult,
    WriteArgs,
    WriteResult,
)
from mcp_tools.servers.files.service import FilesService

# -- files.list -----------------------------------------------------------------------------


async def list_files(service: FilesService, args: ListArgs, ctx: CallContext) -> ListResult:
    folder = key_arg(service, args.path, allow_empty=True)
    if folder:
        target = await service.run(service.store.stat, folder)
        if target is None:
            raise ToolFailure("not_found", f"folder {folder} does not exist")
        if target.type == "file":
            raise ToolFailure("conflict", f"{folder} is a file, not a folder", "read it with files.read")
    pattern = compile_glob(args.pattern) if args.pattern else None
    deep = args.recursive or "/" in (args.pattern or "")  # 'docs/*.md' and '**/*.pdf' look below the folder
    after = decode_cursor(args.cursor) if args.cursor else None

    def collect() -> tuple[list[StoredEntry], bool]:
        page: list[StoredEntry] = []
        for examined, stored in enumerate(service.store.entries(folder, recursive=deep, after=after), start=1):
            relative = stored.key[len(folder) + 1 :] if folder else stored.key
            if pattern is None or pattern.match(relative) is not None:
                if len(page) == args.limit:
                    return page, True
                page.append(stored)
            if examined > MAX_LISTED:
                raise ToolFailure("too_large", f"more than {MAX_LISTED} entries examined", "narrow the listing")
        return page, False

    page, more = await service.run(collect)
    next_cursor = encode_cursor(page[-1].sort_key) if more and page else None
    return ListResult(
        path=folder,
        entries=[as_entry(item) for item in page],
        next_cursor=next_cursor,
        note=names_note(service, page),
    )


def _render_list(result: ListResult) -> str:
    lines = [f"{result.path or '(root)'}: {len(result.entries)} entries"]
    for entry in result.entries:
        suffix = "/" if entry.type == "folder" else ""
        size = f"  {entry.size} B" if entry.size is not None else ""
        lines.append(f"{entry.path}{suffix}{size}")
    if result.next_cursor:
        lines.append(f"more: cursor={result.next_cursor}")
    if result.note:
        lines.append(f"({result.note})")
    if any("\\" in entry.path for entry in result.entries):
        lines.append(
            "(a name with \\xHH holds bytes that are not valid UTF-8, and \\\\ is a backslash; "
            "pass such a path back exactly as shown)"
        )
    return "\n".join(lines)


# -- files.read -----------------------------------------------------------------------------


async def read_file(service: FilesService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    """A window of at most `max_chars` characters (text) or base64 characters (binary) from `offset`.

    A small image comes back whole as image content. A read made for another tool
    (`ctx.call_tool`: a mail attaching the file) goes to that tool, not to a model, so it takes
    windows of the whole read limit.
    """
    key = key_arg(service, args.path)
    if ctx.via is not None:
        limit = service.max_read_bytes
    else:
        limit = min(args.limit or args.max_chars * 4, service.max_read_bytes)
    window = await service.run(service.store.read_window, key, args.offset, limit, sha256=args.sha256)
    if args.offset > window.size:
        raise ToolFailure("invalid_arguments", f"offset {args.offset} is past the end of {key} ({window.size} bytes)")
    truncated = args.offset + len(window.data) < window.size
    text = decode_text(window.data, truncated)
    mime_type = mime_type_of(key, text is not None)
    image = None
    encoding: Literal["text", "base64", "image"]
    if text is not None:
        if ctx.via is None and len(text) > args.max_chars:
            text = text[: args.max_chars]
        consumed = len(text.encode("utf-8"))
        content, encoding = text, "text"
    elif ctx.via is None and args.offset == 0 and not truncated and _inline_image(mime_type, window.size):
        consumed, content, encoding, image = len(window.data), "", "image", window.data
    else:
        data = window.data if ctx.via is not None else window.data[: args.max_chars // 4 * 3]
        consumed = len(data)
        content, encoding = base64.b64encode(data).decode("ascii"), "base64"
    end = args.offset + consumed
    more = end < window.size
    result = ReadResult(
        path=key,
        size=window.size,
        version=window.version,
        sha256=window.sha256,
        mime_type=mime_type,
        encoding=encoding,
        content=content,
        offset=args.offset,
        truncated=more,
        next_offset=end if more else None,
    )
    return result.with_image(image, mime_type) if image is not None else result


def _inline_image(mime_type: str, size: int) -> bool:
    return mime_type in INLINE_IMAGE_TYPES and size <= MAX_INLINE_IMAGE_BYTES


def _render_read(result: ReadResult) -> str:
    digest = f", sha256 {result.sha256}" if result.sha256 else ""
    header = f"{result.path} ({result.size:,} bytes, {result.mime_type}, version {result.version}{digest}"
    if result.encoding == "image":
        return header + "), shown as image content"
    if result.encoding == "base64":
        header += ", binary as base64"
    if result.truncated and result.next_offset is not None:
        header += (
            f"; bytes {result.offset:,}-{result.next_offset:,} shown, {result.size - result.next_offset:,} more,"
            f" call again with offset={result.next_offset}"
        )
    return f"{header})\n{result.content}"


TOOLS: list[ToolSpec[FilesService, Any, Any]] = [
    ToolSpec(
        name="files.list",
        aliases=files_aliases("list", ToolAlias("list_files"), list_directory=None),
        tier="core",
        title="List files",
        description="List a folder (type, size, modified), recursive or by glob.",
        input_model=ListArgs,
        output_model=ListResult,
        handler=list_files,
        risk=Risk.LOW,
        describe=lambda args: f"List {args.path or 'the root folder'}{' recursively' if args.recursive else ''}",
        read_only=True,
        idempotent=True,
        render_text=_render_list,
    ),
    READ := ToolSpec(
        name="files.read",
        aliases=files_aliases("read", ToolAlias("read_file"), read_text_file=None),
        tier="core",
        title="Read a file",
        description="Read a file (UTF-8 as text, else base64) with its version, in windows (next_offset).",
        input_model=ReadArgs,
        output_model=ReadResult,
        handler=read_file,
        risk=Risk.LOW,
        describe=lambda args: f"Read {args.path}",
        read_only=True,
        idempotent=True,
        render_text=_render_read,
    ),
    ToolSpec(
        name="files.write",
        aliases=files_aliases("write", ToolAlias("write_file"), ToolAlias("pilotwrite")),
        tier="core",
        title="Write a file",
        description="Create or replace a file atomically; pass expected_sha256 when replacing.",
        input_model=WriteArgs,
        output_model=WriteResult,
        handler=write_file,
        risk=Risk.MEDIUM,
        describe=describe_write,
        dynamic_risk=write_risk,
        precheck=write_precheck,
        facts=ExistingFacts,
    ),
    ToolSpec(
        name="files.edit",
        aliases=files_aliases(
            "edit",
            ToolAlias("edit_file", reshape=edit_file_alias),
            ToolAlias("pilotedit", reshape=edit_file_alias),
            edit_file=filesystem_edit_alias,
        ),
        tier="core",
        title="Edit a file",
        description="Replace exact text; each old_string must match once unless replace_all. Returns a diff "
        "and the new sha256.",
        input_model=EditArgs,
        output_model=EditResult,
        handler=edit_file,
        risk=Risk.MEDIUM,
        describe=describe_edit,
        render_text=render_edit,
        precheck=edit_precheck,
    ),
    ToolSpec(
        name="files.search",
        tier="core",
        title="Search files",
        description="Find lines with text (or a regex) in files, newest first.",
        input_model=SearchArgs,
        output_model=SearchResult,
        handler=search_files,
        risk=Risk.LOW,
        describe=describe_search,
        read_only=True,
        idempotent=True,
        render_text=render_search,
    ),
    ToolSpec(
        name="files.mkdir",
        aliases=files_aliases("mkdir", ToolAlias("create_directory")),
        tier="extended",
        title="Create a folder",
        description="Create a folder; fine if it exists.",
        input_model=MkdirArgs,
        output_model=MkdirResult,
        handler=make_folder,
        risk=Risk.MEDIUM,
        describe=lambda args: f"Create folder {args.path}",
        idempotent=True,
    ),
    ToolSpec(
        name="files.move",
        aliases=files_aliases("move", move_file=None),
        tier="extended",
        title="Move or rename",
        description="Move or rename a file or folder; replaces an existing destination only with overwrite.",
        input_model=MoveArgs,
        output_model=MoveResult,
        handler=move_file,
        risk=Risk.MEDIUM,
        describe=describe_move,
        dynamic_risk=move_risk,
        precheck=move_precheck,
        facts=MoveFacts,
    ),
    ToolSpec(
        name="files.delete",
        aliases=files_aliases("delete", ToolAlias("delete_file"), ToolAlias("pilotdelete")),
        tier="extended",
        title="Delete",
        description="Delete a file, or a folder and its contents.",
        input_model=DeleteArgs,
        output_model=DeleteResult,
        handler=delete_file,
        risk=Risk.HIGH,
        describe=describe_delete,
        dynamic_risk=delete_info,
        precheck=delete_precheck,
        facts=DeleteFacts,
    ),
    ToolSpec(
        name="files.import",
        aliases=files_aliases(
            "import", ToolAlias("file_ingest", IMPORT_ALIAS_RENAMES), ToolAlias("file_upload", IMPORT_ALIAS_RENAMES)
        ),
        title="Import a file",
        description="Bring a document into the store: download a URL (from hosts allowed for imports) or "
        "store base64 bytes.",
        input_model=ImportArgs,
        output_model=ImportResult,
        handler=import_file,
        risk=Risk.MEDIUM,
        describe=describe_import,
        dynamic_risk=import_risk,
        precheck=import_precheck,
        facts=ExistingFacts,
        open_world=True,
        tier="extended",
    ),
    ToolSpec(
        name="files.copy",
        aliases=files_aliases("copy", ToolAlias("copy_file")),
        tier="extended",
        title="Copy",
        description="Copy a file, or a folder with recursive, to a new path; replaces a file only with overwrite.",
        input_model=CopyArgs,
        output_model=CopyResult,
        handler=copy_file,
        risk=Risk.MEDIUM,
        describe=describe_copy,
        dynamic_risk=copy_risk,
        precheck=copy_precheck,
        facts=CopyFacts,
    ),
]
