"""The files tools that change the store: write, edit, mkdir, move, delete and import."""

from __future__ import annotations

import base64
import binascii

import anyio.from_thread

from mcp_tools.core.tooling import CallContext, Risk, ToolFailure
from mcp_tools.servers.files.backend import StoredEntry, check_expected
from mcp_tools.servers.files.common import (
    TEXT_SNIFF_BYTES,
    as_entry,
    check_unchanged,
    decode_text,
    existing_entry,
    key_arg,
    mime_type_of,
    refuse_folder,
    sha256_of,
    source_and_destination,
)
from mcp_tools.servers.files.edit import EditRequest, apply_edits, unified_diff
from mcp_tools.servers.files.models import (
    DeleteArgs,
    DeleteFacts,
    DeleteResult,
    EditArgs,
    EditResult,
    ExistingFacts,
    ImportArgs,
    ImportResult,
    MkdirArgs,
    MkdirResult,
    MoveArgs,
    MoveFacts,
    MoveResult,
    WriteArgs,
    WriteResult,
)
from mcp_tools.servers.files.service import FilesService
from mcp_tools.util.wording import human_size, plural

# -- files.write ----------------------------------------------------------------------------


def _content_bytes(args: WriteArgs) -> bytes:
    if args.encoding == "text":
        return args.content.encode("utf-8")
    try:
        return base64.b64decode(args.content, validate=True)
    except (binascii.Error, ValueError):
        raise ToolFailure(
            "invalid_arguments", "content is not valid base64", "use encoding: 'text' for plain text"
        ) from None


async def write_file(service: FilesService, args: WriteArgs, ctx: CallContext, facts: ExistingFacts) -> WriteResult:
    key = key_arg(service, args.path)
    data = _content_bytes(args)
    if len(data) > service.max_write_bytes:
        raise ToolFailure(
            "too_large", f"content is {len(data)} bytes; the write limit is {service.max_write_bytes} bytes"
        )
    created = await service.run(
        service.store.write,
        key,
        data,
        create_parents=args.create_parents,
        expected_sha256=args.expected_sha256,
    )
    return WriteResult(path=key, size=len(data), sha256=sha256_of(data), created=created)


async def write_precheck(service: FilesService, args: WriteArgs, facts: ExistingFacts) -> None:
    """Valid content within the limit, and the file still as it was read."""
    key = key_arg(service, args.path)
    size = len(_content_bytes(args))
    if size > service.max_write_bytes:
        raise ToolFailure("too_large", f"content is {size} bytes; the write limit is {service.max_write_bytes} bytes")
    sandbox = getattr(service.store, "sandbox", None)
    if sandbox is not None:  # a link leading out of the store is refused by the write: say so first
        await service.run(sandbox.resolve, key)
    target = await service.run(service.store.stat, key)
    refuse_folder(key, target)
    if args.expected_sha256 is not None:
        await check_unchanged(service, key, args.expected_sha256, target)


async def write_risk(service: FilesService, args: WriteArgs, facts: ExistingFacts) -> Risk:
    try:
        existing = await service.run(service.store.stat, key_arg(service, args.path))
    except ToolFailure:
        return Risk.LOW  # no escalation: the handler refuses the call with the reason
    _note_existing(facts, existing)
    if existing is not None and args.expected_sha256 is None:
        return Risk.HIGH
    return Risk.LOW  # the configured level stands


def _note_existing(facts: ExistingFacts, existing: StoredEntry | None) -> None:
    """What a write or an import would replace, for the person's question and its approval."""
    facts.known = True
    facts.size = None if existing is None else (existing.size or 0)
    facts.target_version = None if existing is None else existing.version


def _approx_content_size(args: WriteArgs) -> int:
    if args.encoding == "text":
        return len(args.content.encode("utf-8", "replace"))
    return len(args.content) * 3 // 4


def describe_write(args: WriteArgs, facts: ExistingFacts) -> str:
    kind = "text" if args.encoding == "text" else "binary data"
    size = human_size(_approx_content_size(args))
    if not facts.known:
        return f"Write {size} of {kind} to {args.path}, replacing it if it exists"
    if facts.size is None:
        return f"Create {args.path} with {size} of {kind}"
    checked = " (only if unchanged since it was read)" if args.expected_sha256 else ""
    return f"Replace {args.path} ({human_size(facts.size)}) with {size} of new {kind}{checked}"


# -- files.edit -----------------------------------------------------------------------------


async def edit_file(service: FilesService, args: EditArgs, ctx: CallContext) -> EditResult:
    key = key_arg(service, args.path)
    try:
        data = await service.run(service.store.read_all, key, service.max_write_bytes)
    except ToolFailure as failure:
        if failure.kind != "too_large":
            raise
        raise ToolFailure(
            "too_large",
            f"{key} is larger than the edit limit of {service.max_write_bytes} bytes",
            "read it in windows with files.read; replace it with files.write if you must",
        ) from None
    current_sha256 = sha256_of(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure("invalid_arguments", f"{key} is not UTF-8 text", "replace it with files.write") from None
    check_expected(key, await service.version_now(key, args.expected_sha256, current_sha256), args.expected_sha256)
    requests = [EditRequest(edit.old_string, edit.new_string, edit.replace_all) for edit in args.edits]
    new_text, replacements = apply_edits(text, requests)
    new_data = new_text.encode("utf-8")
    if len(new_data) > service.max_write_bytes:
        raise ToolFailure(
            "too_large",
            f"the edited file would be {len(new_data)} bytes; the limit is {service.max_write_bytes}",
        )
    diff = unified_diff(text, new_text, key)
    if not args.dry_run:
        await service.run(service.store.write, key, new_data, create_parents=False, expected_sha256=current_sha256)
    return EditResult(
        path=key,
        sha256=current_sha256 if args.dry_run else sha256_of(new_data),
        size=len(data) if args.dry_run else len(new_data),
        replacements=replacements,
        diff=diff,
        dry_run=args.dry_run,
    )


async def edit_precheck(service: FilesService, args: EditArgs) -> None:
    """The file exists, is within the edit limit, and is still as it was read."""
    key = key_arg(service, args.path)
    target = await existing_entry(service, key)
    if target.type == "file" and (target.size or 0) > service.max_write_bytes:
        raise ToolFailure(
            "too_large",
            f"{key} is larger than the edit limit of {service.max_write_bytes} bytes",
            "read it in windows with files.read; replace it with files.write if you must",
        )
    await check_unchanged(service, key, args.expected_sha256, target)


def describe_edit(args: EditArgs) -> str:
    count = len(args.edits)
    verb = "Preview" if args.dry_run else "Apply"
    return f"{verb} {count} exact text replacement{'s' if count > 1 else ''} in {args.path}"


def render_edit(result: EditResult) -> str:
    state = "Would change" if result.dry_run else "Changed"
    return f"{state} {result.path}: {result.replacements} replacement(s), sha256 {result.sha256}\n{result.diff}"


# -- files.mkdir, files.move, files.delete --------------------------------------------------


async def make_folder(service: FilesService, args: MkdirArgs, ctx: CallContext) -> MkdirResult:
    key = key_arg(service, args.path)
    created = await service.run(service.store.mkdir, key, parents=args.parents)
    return MkdirResult(path=key, created=created)


def _move_keys(service: FilesService, args: MoveArgs) -> tuple[str, str]:
    return source_and_destination(service, args.source, args.destination, "move")


async def move_file(service: FilesService, args: MoveArgs, ctx: CallContext, facts: MoveFacts) -> MoveResult:
    source, destination = _move_keys(service, args)
    replaced = await service.run(
        service.store.move,
        source,
        destination,
        overwrite=args.overwrite,
        create_parents=args.create_parents,
    )
    return MoveResult(source=source, destination=destination, replaced=replaced)


async def move_precheck(service: FilesService, args: MoveArgs, facts: MoveFacts) -> None:
    """The source exists; the destination is a new path, or a file that overwrite may replace."""
    source, destination = _move_keys(service, args)
    await existing_entry(service, source, "source")
    target = await service.run(service.store.stat, destination)
    if target is None:
        return
    if target.type == "folder":
        raise ToolFailure(
            "conflict", f"{destination} is a folder", "give the full new path, e.g. destination: 'folder/name.txt'"
        )
    if not args.overwrite:
        raise ToolFailure("conflict", f"{destination} already exists", "pass overwrite: true to replace it")


async def move_risk(service: FilesService, args: MoveArgs, facts: MoveFacts) -> Risk:
    if not args.overwrite:
        return Risk.LOW  # the configured level stands
    try:
        existing = await service.run(service.store.stat, key_arg(service, args.destination, "destination"))
    except ToolFailure:
        return Risk.HIGH
    facts.destination_size = None if existing is None else (existing.size or 0)
    facts.target_version = None if existing is None else existing.version
    return Risk.HIGH


def describe_move(args: MoveArgs, facts: MoveFacts) -> str:
    line = f"Move {args.source} to {args.destination}"
    if args.overwrite:
        if facts.destination_size is not None:
            return f"{line}, replacing the existing {args.destination} ({human_size(facts.destination_size)})"
        return f"{line}, replacing {args.destination} if it exists"
    return line


async def delete_file(service: FilesService, args: DeleteArgs, ctx: CallContext, facts: DeleteFacts) -> DeleteResult:
    key = key_arg(service, args.path)
    target = await service.run(service.store.stat, key)
    if target is None:
        raise ToolFailure("not_found", f"{key} does not exist")
    folder = target.type == "folder" and args.recursive
    progress = None
    if folder:
        await ctx.report_progress(0, None, f"deleting {key}")
        if service.store.blocking:

            def progress(done: int, total: int) -> None:
                anyio.from_thread.run(ctx.report_progress, done, total, f"deleted {done} of {total}")

    removed = await service.run(service.store.delete, key, recursive=args.recursive, progress=progress)
    if folder:
        await ctx.report_progress(removed, removed, f"deleted {removed} entries")
    return DeleteResult(path=key, type=target.type, removed=removed)


async def delete_info(service: FilesService, args: DeleteArgs, facts: DeleteFacts) -> Risk:
    """Never escalates (delete is high by default); notes what will go, for the line people read.

    The gate calls this only when the configured risk is below high, so a lowered level still
    gets an exact "Action performed" notice.
    """
    try:
        key = key_arg(service, args.path)
        target = await service.run(service.store.stat, key)
        facts.target = None if target is None else as_entry(target)
        facts.target_version = None if target is None else target.version
        if target is not None and target.type == "folder":
            facts.file_count, contents = await service.run(service.store.survey_below, key, 10_000)
            facts.target_version = f"{target.version}:{contents}"
    except ToolFailure:
        pass
    return Risk.LOW


async def delete_precheck(service: FilesService, args: DeleteArgs, facts: DeleteFacts) -> None:
    """The target exists, and a folder goes only with recursive."""
    key = key_arg(service, args.path)
    target = await existing_entry(service, key)
    if target.type == "folder" and not args.recursive:
        raise ToolFailure(
            "invalid_arguments", f"{key} is a folder", "pass recursive: true to delete it and everything in it"
        )


def describe_delete(args: DeleteArgs, facts: DeleteFacts) -> str:
    target = facts.target
    if target is None:
        extra = " and everything in it" if args.recursive else ""
        return f"Delete {args.path}{extra}"
    if target.type == "folder":
        count = facts.file_count
        inside = (
            ""
            if count is None
            else f" and the {count}{'+' if count >= 10_000 else ''} {plural(count, 'entry', 'entries')} in it"
        )
        return f"Delete folder {args.path}{inside}"
    if target.type == "file":
        return f"Delete file {args.path} ({human_size(target.size)})"
    return f"Delete {target.type} {args.path}"


# -- files.import ---------------------------------------------------------------------------


async def import_precheck(service: FilesService, args: ImportArgs, facts: ExistingFacts) -> None:
    """The path's form, a folder in the way and the URL's host, refused before anyone is asked."""
    key = key_arg(service, args.path)
    refuse_folder(key, await service.run(service.store.stat, key))
    if args.url:
        from mcp_tools.util.outbound import check_url

        if not service.config.import_hosts:
            raise ToolFailure(
                "denied_by_policy",
                "importing from URLs is off",
                "pass content_base64 instead; the person can list hosts in [files] import_hosts",
            )
        check_url(args.url, service.import_policy())


async def _fetch_for_import(service: FilesService, url: str) -> tuple[bytes, str]:
    from mcp_tools.util.outbound import fetch, system_resolver

    result = await fetch(
        method="GET",
        url=url,
        headers={},
        body=None,
        policy=service.import_policy(),
        resolver=service.resolver or system_resolver,
        max_bytes=service.max_write_bytes + 1,
        timeout=service.config.import_timeout_seconds,
        max_redirects=3,
    )
    if not 200 <= result.status < 300:
        raise ToolFailure("upstream_error", f"{url} answered HTTP {result.status}; nothing was imported")
    if len(result.body) > service.max_write_bytes:
        raise ToolFailure("too_large", f"{url} is larger than the write limit of {service.max_write_bytes} bytes")
    content_type = dict((name.lower(), value) for name, value in result.headers).get("content-type", "")
    return result.body, content_type.split(";")[0].strip()


async def import_file(service: FilesService, args: ImportArgs, ctx: CallContext, facts: ExistingFacts) -> ImportResult:
    key = key_arg(service, args.path)
    if args.url:
        await ctx.report_progress(0, None, f"downloading {args.url}")
        data, content_type = await _fetch_for_import(service, args.url)
    else:
        try:
            data = base64.b64decode(args.content_base64, validate=True)
        except (binascii.Error, ValueError):
            raise ToolFailure("invalid_arguments", "content_base64 is not valid base64") from None
        if len(data) > service.max_write_bytes:
            raise ToolFailure("too_large", f"content is {len(data)} bytes; the limit is {service.max_write_bytes}")
        content_type = ""
    created = await service.run(
        service.store.write, key, data, create_parents=True, expected_sha256=args.expected_sha256
    )
    return ImportResult(
        path=key,
        size=len(data),
        sha256=sha256_of(data),
        created=created,
        content_type=content_type or mime_type_of(key, decode_text(data[:TEXT_SNIFF_BYTES], True) is not None),
    )


async def import_risk(service: FilesService, args: ImportArgs, facts: ExistingFacts) -> Risk:
    """Like a write: replacing an existing file without its hash asks first."""
    try:
        existing = await service.run(service.store.stat, key_arg(service, args.path))
    except ToolFailure:
        return Risk.LOW
    _note_existing(facts, existing)
    return Risk.HIGH if existing is not None and args.expected_sha256 is None else Risk.LOW


def describe_import(args: ImportArgs, facts: ExistingFacts) -> str:
    source = args.url or f"{human_size(len(args.content_base64) * 3 // 4)} of uploaded data"
    if facts.known and facts.size is not None:
        return f"Import {source} into {args.path}, replacing it ({human_size(facts.size)})"
    return f"Import {source} into {args.path}"
