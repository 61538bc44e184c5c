"""The files tools: handlers, risk escalation and the lines a person reads before confirming."""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
from collections.abc import Callable
from typing import Any, Literal

import anyio.from_thread
import anyio.to_thread

from mcp_tools.sandbox import check_key
from mcp_tools.servers.files.backend import (
    MAX_LISTED,
    StoredEntry,
    check_expected,
    compile_glob,
    decode_cursor,
    encode_cursor,
    matches,
)
from mcp_tools.servers.files.edit import EditRequest, apply_edits, unified_diff
from mcp_tools.servers.files.models import (
    DeleteArgs,
    DeleteFacts,
    DeleteResult,
    EditArgs,
    EditResult,
    Entry,
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
    WriteArgs,
    WriteResult,
)
from mcp_tools.servers.files.service import FilesService, _fits_unicode
from mcp_tools.tooling import (
    INLINE_IMAGE_TYPES,
    MAX_INLINE_IMAGE_BYTES,
    CallContext,
    Risk,
    ToolAlias,
    ToolFailure,
    ToolSpec,
    alias_error,
    json_type,
)
from mcp_tools.wording import human_size, plural

TEXT_SNIFF_BYTES = 8192


def _key(service: FilesService, value: str, field: str = "path", *, allow_empty: bool = False) -> str:
    return service.check_path(value, field, allow_empty=allow_empty)


def _names_note(service: FilesService, entries: list[StoredEntry]) -> str | None:
    """What to do about listed names that cannot be passed back as paths under the store's rule."""
    unusable = fixable = 0
    for entry in entries:
        try:
            check_key(entry.key, service.names)
        except ToolFailure:
            unusable += 1
            fixable += service.names == "strict" and _fits_unicode(entry.key)
    if not unusable:
        return None
    if fixable == unusable:
        return (
            f"{unusable} of these names have characters outside A-Z a-z 0-9 _ - . / (spaces, accents, other "
            "scripts), so they cannot be read, moved or deleted here; the person can allow them with "
            'names = "unicode" in the [files] section of the config'
        )
    return (
        f"{unusable} of these names hold control, bidi or invisible characters (or a look-alike of '/' or '.'), "
        "so they cannot be read, moved or deleted here; the person can rename them outside this tool"
        + ('; names = "unicode" in [files] would allow the others' if fixable else "")
    )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _as_entry(stored: StoredEntry) -> Entry:
    return Entry(path=stored.key, type=stored.type, size=stored.size, modified=stored.modified)


# -- preconditions: checked before the person is asked, so nobody approves a call bound to fail


async def _existing(service: FilesService, key: str, field: str = "path") -> StoredEntry:
    target = await service.run(service.store.stat, key)
    if target is None:
        raise ToolFailure("not_found", f"{key} does not exist", f"check {field} with files.list")
    return target


async def _check_unchanged(
    service: FilesService, key: str, expected_sha256: str | None, target: StoredEntry | None
) -> None:
    """expected_sha256 (a version or a sha256) against the file now; what is no file the store refuses."""
    if expected_sha256 is None and (target is None or target.type == "file"):
        return
    current = None if target is None else await service.version_now(key, expected_sha256 or "")
    check_expected(key, current, expected_sha256)


def _refuse_folder(key: str, target: StoredEntry | None) -> None:
    """A write or an import onto a folder could never run: nobody is asked to replace one."""
    if target is not None and target.type == "folder":
        raise ToolFailure(
            "conflict",
            f"{key} is a folder; it cannot be replaced by a file",
            "give a file path, e.g. 'folder/name.txt'",
        )


# -- files.list -----------------------------------------------------------------------------


async def list_files(service: FilesService, args: ListArgs, ctx: CallContext) -> ListResult:
    folder = _key(service, args.path, allow_empty=True)
    if folder:
        target = await service.run(service.store.stat, folder)
        if target is None:
            raise ToolFailure("not_found", f"folder {folder} does not exist")
        if target.type == "file":
            raise ToolFailure("conflict", f"{folder} is a file, not a folder", "read it with files.read")
    pattern = compile_glob(args.pattern) if args.pattern else None
    after = decode_cursor(args.cursor) if args.cursor else None

    def collect() -> tuple[list[StoredEntry], bool]:
        page: list[StoredEntry] = []
        for examined, stored in enumerate(
            service.store.entries(folder, recursive=args.recursive, after=after), start=1
        ):
            relative = stored.key[len(folder) + 1 :] if folder else stored.key
            if matches(pattern, relative):
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
        entries=[_as_entry(item) for item in page],
        next_cursor=next_cursor,
        note=_names_note(service, page),
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


def _decode_text(window: bytes, truncated: bool) -> str | None:
    """UTF-8 text, or None for binary; a window may end inside a character when truncated."""
    if b"\x00" in window[:TEXT_SNIFF_BYTES]:
        return None
    for trim in range(4 if truncated else 1):
        try:
            return window[: len(window) - trim].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def _mime_type(key: str, is_text: bool) -> str:
    guessed = mimetypes.guess_type(key, strict=False)[0]
    if guessed:
        return guessed
    return "text/plain" if is_text else "application/octet-stream"


async def read_file(service: FilesService, args: ReadArgs, ctx: CallContext) -> ReadResult:
    """A window of at most `max_chars` characters (text) or base64 characters (binary) from `offset`.

    A small image comes back whole as image content. A read made for another tool
    (`ctx.call_tool`: a mail attaching the file) goes to that tool, not to a model, so it takes
    windows of the whole read limit.
    """
    key = _key(service, args.path)
    if ctx.via is not None:
        limit = service.max_read_bytes
    else:
        limit = min(args.limit or args.max_chars * 4, service.max_read_bytes)
    window = await service.run(service.store.read_window, key, args.offset, limit, sha256=args.sha256)
    if args.offset > window.size:
        raise ToolFailure("invalid_arguments", f"offset {args.offset} is past the end of {key} ({window.size} bytes)")
    truncated = args.offset + len(window.data) < window.size
    text = _decode_text(window.data, truncated)
    mime_type = _mime_type(key, text is not None)
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
    key = _key(service, args.path)
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
    return WriteResult(path=key, size=len(data), sha256=_sha256(data), created=created)


async def write_precheck(service: FilesService, args: WriteArgs, facts: ExistingFacts) -> None:
    """Valid content within the limit, and the file still as it was read."""
    key = _key(service, args.path)
    size = len(_content_bytes(args))
    if size > service.max_write_bytes:
        raise ToolFailure("too_large", f"content is {size} bytes; the write limit is {service.max_write_bytes} bytes")
    sandbox = getattr(service.store, "sandbox", None)
    if sandbox is not None:  # a link leading out of the store is refused by the write: say so first
        await service.run(sandbox.resolve, key)
    target = await service.run(service.store.stat, key)
    _refuse_folder(key, target)
    if args.expected_sha256 is not None:
        await _check_unchanged(service, key, args.expected_sha256, target)


async def write_risk(service: FilesService, args: WriteArgs, facts: ExistingFacts) -> Risk:
    try:
        existing = await service.run(service.store.stat, _key(service, args.path))
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
    key = _key(service, args.path)
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
    current_sha256 = _sha256(data)
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
        sha256=current_sha256 if args.dry_run else _sha256(new_data),
        size=len(data) if args.dry_run else len(new_data),
        replacements=replacements,
        diff=diff,
        dry_run=args.dry_run,
    )


async def edit_precheck(service: FilesService, args: EditArgs) -> None:
    """The file exists, is within the edit limit, and is still as it was read."""
    key = _key(service, args.path)
    target = await _existing(service, key)
    if target.type == "file" and (target.size or 0) > service.max_write_bytes:
        raise ToolFailure(
            "too_large",
            f"{key} is larger than the edit limit of {service.max_write_bytes} bytes",
            "read it in windows with files.read; replace it with files.write if you must",
        )
    await _check_unchanged(service, key, args.expected_sha256, target)


def describe_edit(args: EditArgs) -> str:
    count = len(args.edits)
    verb = "Preview" if args.dry_run else "Apply"
    return f"{verb} {count} exact text replacement{'s' if count > 1 else ''} in {args.path}"


def _render_edit(result: EditResult) -> str:
    state = "Would change" if result.dry_run else "Changed"
    return f"{state} {result.path}: {result.replacements} replacement(s), sha256 {result.sha256}\n{result.diff}"


# -- files.mkdir, files.move, files.delete --------------------------------------------------


async def make_folder(service: FilesService, args: MkdirArgs, ctx: CallContext) -> MkdirResult:
    key = _key(service, args.path)
    created = await service.run(service.store.mkdir, key, parents=args.parents)
    return MkdirResult(path=key, created=created)


def _move_keys(service: FilesService, args: MoveArgs) -> tuple[str, str]:
    """Source and destination keys of a move that can make sense at all."""
    source = _key(service, args.source, "source")
    destination = _key(service, args.destination, "destination")
    if source == destination:
        raise ToolFailure("invalid_arguments", "source and destination are the same path")
    if destination.startswith(source + "/"):
        raise ToolFailure("invalid_arguments", "cannot move a folder into itself")
    return source, destination


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
    await _existing(service, source, "source")
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
        existing = await service.run(service.store.stat, _key(service, args.destination, "destination"))
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
    key = _key(service, args.path)
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
        key = _key(service, args.path)
        target = await service.run(service.store.stat, key)
        facts.target = None if target is None else _as_entry(target)
        facts.target_version = None if target is None else target.version
        if target is not None and target.type == "folder":
            facts.file_count, contents = await service.run(service.store.survey_below, key, 10_000)
            facts.target_version = f"{target.version}:{contents}"
    except ToolFailure:
        pass
    return Risk.LOW


async def delete_precheck(service: FilesService, args: DeleteArgs, facts: DeleteFacts) -> None:
    """The target exists, and a folder goes only with recursive."""
    key = _key(service, args.path)
    target = await _existing(service, key)
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
    key = _key(service, args.path)
    _refuse_folder(key, await service.run(service.store.stat, key))
    if args.url:
        from mcp_tools.outbound import check_url

        if not service.config.import_hosts:
            raise ToolFailure(
                "denied_by_policy",
                "importing from URLs is off",
                "pass content_base64 instead; the person can list hosts in [files] import_hosts",
            )
        check_url(args.url, service.import_policy())


async def _fetch_for_import(service: FilesService, url: str) -> tuple[bytes, str]:
    from mcp_tools.outbound import fetch, system_resolver

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
    key = _key(service, args.path)
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
        sha256=_sha256(data),
        created=created,
        content_type=content_type or _mime_type(key, _decode_text(data[:TEXT_SNIFF_BYTES], True) is not None),
    )


async def import_risk(service: FilesService, args: ImportArgs, facts: ExistingFacts) -> Risk:
    """Like a write: replacing an existing file without its hash asks first."""
    try:
        existing = await service.run(service.store.stat, _key(service, args.path))
    except ToolFailure:
        return Risk.LOW
    _note_existing(facts, existing)
    return Risk.HIGH if existing is not None and args.expected_sha256 is None else Risk.LOW


def describe_import(args: ImportArgs, facts: ExistingFacts) -> str:
    source = args.url or f"{human_size(len(args.content_base64) * 3 // 4)} of uploaded data"
    if facts.known and facts.size is not None:
        return f"Import {source} into {args.path}, replacing it ({human_size(facts.size)})"
    return f"Import {source} into {args.path}"


def _edit_file_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """`search_replace` (one object or a list) becomes `edits`; a top-level replace_all applies to each."""
    rest = {key: value for key, value in arguments.items() if key not in ("search_replace", "replace_all")}
    if "search_replace" not in arguments:
        if "edits" in arguments:
            return dict(arguments)  # already in files.edit's own terms
        raise alias_error("edit_file needs search_replace: {old_string, new_string} or a list of them")
    value = arguments["search_replace"]
    if isinstance(value, dict):
        entries, paths = [value], ["search_replace"]
    elif isinstance(value, list) and value:
        entries, paths = value, [f"search_replace[{index}]" for index in range(len(value))]
    elif isinstance(value, list):
        raise alias_error("edit_file needs at least one entry in search_replace")
    else:
        raise alias_error(f"edit_file search_replace must be an object or a list of objects, got {json_type(value)}")
    edits: list[dict[str, Any]] = []
    for entry, path in zip(entries, paths, strict=True):
        if not isinstance(entry, dict):
            raise alias_error(f"edit_file {path} must be an object {{old_string, new_string}}, got {json_type(entry)}")
        for key in ("old_string", "new_string"):
            if key not in entry:
                raise alias_error(
                    f"edit_file needs {path}.{key}" if path == "search_replace" else f"edit_file {path} needs {key}"
                )
        edit = dict(entry)
        if "replace_all" in arguments and "replace_all" not in edit:
            edit["replace_all"] = arguments["replace_all"]
        edits.append(edit)
    return {**rest, "edits": edits}


def _filesystem_edit_alias(arguments: dict[str, Any]) -> dict[str, Any]:
    """The reference filesystem server's `edits: [{oldText, newText}]` and `dryRun`."""
    out = {key: value for key, value in arguments.items() if key != "dryRun"}
    if "dryRun" in arguments:
        out["dry_run"] = arguments["dryRun"]
    edits = arguments.get("edits")
    if isinstance(edits, list):
        out["edits"] = [
            {{"oldText": "old_string", "newText": "new_string"}.get(key, key): value for key, value in edit.items()}
            if isinstance(edit, dict)
            else edit
            for edit in edits
        ]
    return _edit_file_alias(out)


_IMPORT_ALIAS_RENAMES = {"filename": "path", "destination": "path", "file_path": "path", "data": "content_base64"}


def _files_aliases(
    method: str, *aliases: ToolAlias, **reference: Callable[[dict[str, Any]], dict[str, Any]] | None
) -> tuple[ToolAlias, ...]:
    """A files tool's aliases, each also after the server names other systems' examples put before
    a file tool (`fs.write`, `filesystem.read_file`), and the reference filesystem server's own
    names for it, which are written only after a server name (`reference`: name -> reshaping)."""
    out = list(aliases)
    for server in ("filesystem", "fs"):
        out += [ToolAlias(f"{server}.{name}", reshape=reshape or dict) for name, reshape in reference.items()]
        out += [
            ToolAlias(f"{server}.{alias.name}", alias.renames, alias.reshape)
            for alias in aliases
            if alias.name not in reference
        ]
        out.append(ToolAlias(f"{server}.{method}"))
    return tuple(out)


TOOLS: list[ToolSpec[FilesService, Any, Any]] = [
    ToolSpec(
        name="files.list",
        aliases=_files_aliases("list", ToolAlias("list_files"), list_directory=None),
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
    ToolSpec(
        name="files.read",
        aliases=_files_aliases("read", ToolAlias("read_file"), read_text_file=None),
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
        aliases=_files_aliases("write", ToolAlias("write_file"), ToolAlias("pilotwrite")),
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
        aliases=_files_aliases(
            "edit",
            ToolAlias("edit_file", reshape=_edit_file_alias),
            ToolAlias("pilotedit", reshape=_edit_file_alias),
            edit_file=_filesystem_edit_alias,
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
        render_text=_render_edit,
        precheck=edit_precheck,
    ),
    ToolSpec(
        name="files.mkdir",
        aliases=_files_aliases("mkdir", ToolAlias("create_directory")),
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
        aliases=_files_aliases("move", move_file=None),
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
        aliases=_files_aliases("delete", ToolAlias("delete_file"), ToolAlias("pilotdelete")),
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
        aliases=_files_aliases(
            "import", ToolAlias("file_ingest", _IMPORT_ALIAS_RENAMES), ToolAlias("file_upload", _IMPORT_ALIAS_RENAMES)
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
]
