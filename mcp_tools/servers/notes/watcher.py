"""Picks up edits made outside the server (an editor, a sync client) with a short debounce."""

from __future__ import annotations

import os
from collections.abc import Iterable

import anyio

from mcp_tools.servers.notes.keys import NOTE_SUFFIX
from mcp_tools.servers.notes.service import NotesService
from mcp_tools.util.sandbox import TEMP_SUFFIX, escape_name


def classify(root: str, changed: Iterable[str]) -> tuple[set[str], bool]:
    """Note keys to re-index, and whether a folder changed (then a full reconciliation is cheaper)."""
    keys: set[str] = set()
    rescan = False
    for path in changed:
        relative = os.path.relpath(path, root)
        if relative.startswith(".."):
            continue
        parts = relative.split(os.sep)
        if any(part.startswith(".") for part in parts) or relative.endswith(TEMP_SUFFIX):
            continue
        if relative.lower().endswith(NOTE_SUFFIX):
            keys.add(escape_name("/".join(parts)))
        else:
            rescan = True  # a folder was created, moved or deleted
    return keys, rescan


async def watch(service: NotesService, stop: anyio.Event) -> None:
    from watchfiles import awatch

    root = str(service.root)
    async for changes in awatch(
        root,
        debounce=service.config.watch_debounce_ms,
        step=50,
        stop_event=stop,
        recursive=True,
        ignore_permission_denied=True,
    ):
        keys, rescan = classify(root, (path for _, path in changes))
        if keys or rescan:
            await anyio.to_thread.run_sync(service.apply_changes, keys, rescan)
