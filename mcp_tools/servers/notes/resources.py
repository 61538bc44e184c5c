"""The notes vaults as MCP resources (`notes:///<path>`, `notes://<vault>/<path>`): listed and watched
here, read through notes.read."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from mcp_tools.core.tooling import MAX_PAGE_CHARS, ResourceBody, ResourceHook, ResourceItem, ToolFailure
from mcp_tools.servers.notes.config import DEFAULT_VAULT
from mcp_tools.servers.notes.tools import READ

if TYPE_CHECKING:  # the service loads with the namespace's first use, not at start-up
    from mcp_tools.servers.notes.service import NotesService


def roots(service: NotesService) -> list[str]:
    """`""` for the default vault, then the other vaults' labels."""
    from mcp_tools.servers.notes.vaults import all_vaults

    return ["" if label == DEFAULT_VAULT else label for label in all_vaults(service)]


def _vault(service: NotesService, root: str) -> NotesService | None:
    from mcp_tools.servers.notes.vaults import all_vaults

    return all_vaults(service).get(root or DEFAULT_VAULT)


def _page(vault: NotesService, after: str | None, limit: int) -> tuple[list[ResourceItem], bool]:
    """The vault's notes as the index sees them (no hidden folders, no symlinks), in key order."""
    found = sorted((key, info.st_size) for key, info in vault.scan() if after is None or key > after)
    page = [ResourceItem(key, size, "text/markdown") for key, size in found[:limit]]
    return page, len(found) > limit


async def items(service: NotesService, root: str, after: str | None, limit: int) -> tuple[list[ResourceItem], bool]:
    vault = _vault(service, root)
    if vault is None:
        return [], False
    return await anyio.to_thread.run_sync(partial(_page, vault, after, limit), abandon_on_cancel=True)


async def version(service: NotesService, root: str, path: str) -> str | None:
    """The note's `stat_version`, found as notes.read finds it (a link leading out of the vault,
    a hidden folder or a missing note: None)."""
    vault = _vault(service, root)
    if vault is None:
        return None

    def look() -> str | None:
        try:
            return vault.version_of(vault.existing_key(path))
        except ToolFailure:
            return None

    return await anyio.to_thread.run_sync(look)


def body(structured: dict[str, Any], images: list[tuple[str, str]]) -> ResourceBody:
    """notes.read's result: the note's Markdown (its first page when it is longer)."""
    truncated = structured.get("next_offset") is not None
    return ResourceBody("text/markdown", text=str(structured.get("content", "")), truncated=truncated)


RESOURCES: ResourceHook[NotesService] = ResourceHook(
    roots=roots,
    items=items,
    version=version,
    read_tool=READ.name,
    body=body,
    read_arguments={"max_chars": MAX_PAGE_CHARS},
    root_argument="vault",
    title="A note of the vault",
)
