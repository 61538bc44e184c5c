"""The files store as MCP resources (`files:///<path>`): listed and watched here, read through files.read."""

from __future__ import annotations

from typing import Any

from mcp_tools.core.tooling import MAX_PAGE_CHARS, ResourceBody, ResourceHook, ResourceItem, ToolFailure
from mcp_tools.servers.files.backend import MAX_LISTED
from mcp_tools.servers.files.common import mime_type_of
from mcp_tools.servers.files.service import FilesService
from mcp_tools.servers.files.tools import READ


async def items(service: FilesService, root: str, after: str | None, limit: int) -> tuple[list[ResourceItem], bool]:
    """The files (not folders) of the whole store in key order, after `after`."""

    def collect() -> tuple[list[ResourceItem], bool]:
        page: list[ResourceItem] = []
        for examined, stored in enumerate(service.store.entries("", recursive=True, after=after), start=1):
            if examined > MAX_LISTED:
                break
            if stored.type != "file":
                continue
            if len(page) == limit:
                return page, True
            page.append(ResourceItem(stored.key, stored.size, mime_type_of(stored.key, False)))
        return page, False

    return await service.run(collect)


async def version(service: FilesService, root: str, path: str) -> str | None:
    """What changes with the file (size, time, the backend's tag); None when no file is there."""
    try:
        key = service.check_path(path)
        entry = await service.run(service.store.stat, key)
    except ToolFailure:
        return None
    return entry.version if entry is not None and entry.type == "file" else None


def body(structured: dict[str, Any], images: list[tuple[str, str]]) -> ResourceBody:
    """files.read's result: text as text, base64 and a small image as a blob."""
    mime = str(structured.get("mime_type") or "application/octet-stream")
    truncated = bool(structured.get("truncated"))
    if structured.get("encoding") == "text":
        return ResourceBody(mime, text=str(structured.get("content", "")), truncated=truncated)
    if structured.get("encoding") == "image" and images:
        return ResourceBody(images[0][1], blob=images[0][0], truncated=truncated)
    return ResourceBody(mime, blob=str(structured.get("content", "")), truncated=truncated)


RESOURCES: ResourceHook[FilesService] = ResourceHook(
    roots=lambda service: ("",),
    items=items,
    version=version,
    read_tool=READ.name,
    body=body,
    read_arguments={"max_chars": MAX_PAGE_CHARS},
    title="A file of the files store",
)
