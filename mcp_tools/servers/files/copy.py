"""files.copy: a file or a folder to a new path inside the store, each file written atomically."""

from __future__ import annotations

from mcp_tools.core.tooling import CallContext, Risk, ToolFailure
from mcp_tools.servers.files.backend import MAX_COPIED
from mcp_tools.servers.files.common import existing_entry, source_and_destination
from mcp_tools.servers.files.models import CopyArgs, CopyFacts, CopyResult
from mcp_tools.servers.files.service import FilesService
from mcp_tools.util.wording import human_size, plural


def copy_keys(service: FilesService, args: CopyArgs) -> tuple[str, str]:
    return source_and_destination(service, args.source, args.destination, "copy")


async def copy_file(service: FilesService, args: CopyArgs, ctx: CallContext, facts: CopyFacts) -> CopyResult:
    source, destination = copy_keys(service, args)
    origin = await existing_entry(service, source, "source")
    if origin.type == "folder" and not args.recursive:
        raise ToolFailure("invalid_arguments", f"{source} is a folder", "pass recursive: true to copy it whole")
    replaced = origin.type == "file" and await service.run(service.store.stat, destination) is not None
    if origin.type == "folder":
        await ctx.report_progress(0, None, f"copying {source}")
    copied = await service.run(
        service.store.copy,
        source,
        destination,
        overwrite=args.overwrite,
        create_parents=args.create_parents,
        max_bytes=service.max_write_bytes,
    )
    return CopyResult(source=source, destination=destination, copied=copied, replaced=replaced)


async def copy_precheck(service: FilesService, args: CopyArgs, facts: CopyFacts) -> None:
    """The source exists (a folder only with recursive, a file within the write limit); the
    destination is a new path, or a file that overwrite may replace."""
    source, destination = copy_keys(service, args)
    origin = await existing_entry(service, source, "source")
    if origin.type == "folder" and not args.recursive:
        raise ToolFailure("invalid_arguments", f"{source} is a folder", "pass recursive: true to copy it whole")
    if origin.type not in ("file", "folder"):
        raise ToolFailure("invalid_arguments", f"{source} is a {origin.type}, not a file or a folder")
    if origin.type == "file" and (origin.size or 0) > service.max_write_bytes:
        raise ToolFailure("too_large", f"{source} is larger than the write limit of {service.max_write_bytes} bytes")
    target = await service.run(service.store.stat, destination)
    if target is None:
        return
    if target.type == "folder":
        raise ToolFailure(
            "conflict", f"{destination} is a folder", "give the full new path, e.g. destination: 'folder/name.txt'"
        )
    if origin.type == "folder":
        raise ToolFailure("conflict", f"{destination} already exists", "copy the folder to a new path")
    if not args.overwrite:
        raise ToolFailure("conflict", f"{destination} already exists", "pass overwrite: true to replace it")


async def copy_risk(service: FilesService, args: CopyArgs, facts: CopyFacts) -> Risk:
    """Replacing an existing file is an overwrite, as files.write's is: the person is asked."""
    try:
        source, destination = copy_keys(service, args)
        origin = await service.run(service.store.stat, source)
        if origin is not None and origin.type == "folder":
            facts.file_count, _ = await service.run(service.store.survey_below, source, MAX_COPIED)
        existing = await service.run(service.store.stat, destination)
    except ToolFailure:
        return Risk.LOW  # the configured level stands; the precheck says what is wrong
    if existing is None or existing.type != "file" or not args.overwrite:
        return Risk.LOW
    facts.destination_size = existing.size or 0
    facts.target_version = existing.version
    return Risk.HIGH


def describe_copy(args: CopyArgs, facts: CopyFacts) -> str:
    if facts.file_count is not None:
        count = facts.file_count
        inside = f"the {count} {plural(count, 'entry', 'entries')} in it"
        return f"Copy folder {args.source} and {inside} to {args.destination}"
    line = f"Copy {args.source} to {args.destination}"
    if facts.destination_size is not None:
        return f"{line}, replacing the existing {args.destination} ({human_size(facts.destination_size)})"
    return line + (f", replacing {args.destination} if it exists" if args.overwrite else "")
