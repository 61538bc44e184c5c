"""notes: an Obsidian-style Markdown vault with a live index, hybrid search and rename-safe links."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from mcp_tools.core.tooling import CliCommand, Environment, Namespace, SearchHit, SearchHook
from mcp_tools.servers.notes.cli import _embeddings_arguments, _embeddings_command, _index_arguments, _index_command
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.resources import RESOURCES
from mcp_tools.servers.notes.tools import READ, TOOLS
from mcp_tools.util.sandbox import sweep_temp_files

if TYPE_CHECKING:
    from mcp_tools.servers.notes.service import NotesService


def create(config: NotesConfig, env: Environment) -> NotesService:
    from mcp_tools.servers.notes.vaults import VaultedNotes

    return VaultedNotes(config, env)


def _withheld(service: NotesService | None) -> tuple[str, ...]:
    """With one vault (or none built yet), `vault` is neither offered nor reported: the tools read
    as they always have."""
    if service is None:
        return ("vault",)
    from mcp_tools.servers.notes.vaults import several

    return () if several(service) else ("vault",)


async def _background(service: NotesService, stop: anyio.Event) -> None:
    """For each vault: start-up reconciliation, then embeddings, then (optionally) the watcher."""
    from mcp_tools.servers.notes.vaults import all_vaults

    if service.embedder is not None and hasattr(service.embedder, "start_loading"):
        service.embedder.start_loading()  # in its own thread: searches answer lexically meanwhile
    async with anyio.create_task_group() as group:
        for vault in all_vaults(service).values():
            group.start_soon(_vault_background, vault, stop)


async def _vault_background(service: NotesService, stop: anyio.Event) -> None:
    async with anyio.create_task_group() as group:
        if service.config.watch:
            from mcp_tools.servers.notes.watcher import watch

            group.start_soon(watch, service, stop)
        await anyio.to_thread.run_sync(sweep_temp_files, service.root, abandon_on_cancel=True)
        await anyio.to_thread.run_sync(service.reconcile)
        await anyio.to_thread.run_sync(service.embed_pending)


@asynccontextmanager
async def lifespan(service: NotesService) -> AsyncIterator[None]:
    stop = anyio.Event()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_background, service, stop)
            try:
                yield
            finally:
                from mcp_tools.servers.notes.vaults import all_vaults

                for vault in all_vaults(service).values():
                    vault.stopping.set()
                stop.set()
                group.cancel_scope.cancel()
    finally:
        service.close()


async def _find(service: NotesService, query: str, limit: int) -> list[SearchHit]:
    """The notes part of `search.all`: the same ranked search as notes.search."""
    from functools import partial

    from mcp_tools.servers.notes.models import SearchArgs

    args = SearchArgs(query=query[:2000], top_k=min(limit, 50))
    output = await anyio.to_thread.run_sync(partial(service.search, args), abandon_on_cancel=True)
    return [
        SearchHit(title=hit.title or hit.path, snippet=hit.snippet, ref=hit.path, score=hit.score)
        for hit in output.results
    ]


NAMESPACE: Namespace[NotesService] = Namespace(
    name="notes",
    description="Read, search, write and reorganise the notes of a Markdown (Obsidian-style) vault.",
    config_model=NotesConfig,
    create=create,
    tools=TOOLS,
    withheld=_withheld,
    lifespan=lifespan,
    requires=("yaml", "watchfiles"),
    commands=(
        CliCommand(
            name="index",
            help="index the vault now (with a progress bar) and print a summary",
            add_arguments=_index_arguments,
            run=_index_command,
        ),
        CliCommand(
            name="embeddings",
            help="pull the embedding model ahead of time, or show the embedding status",
            add_arguments=_embeddings_arguments,
            run=_embeddings_command,
        ),
    ),
    search=SearchHook(find=_find, read_tool=READ.name),
    resources=RESOURCES,
    status=lambda service: service.embedding_status(),
    instructions=(
        "Note paths are relative to the vault. Read a note before replacing it and pass its sha256 as "
        "expected_sha256; use notes_rename (not write+delete) to move notes so links stay intact."
    ),
)
