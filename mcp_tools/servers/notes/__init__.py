"""notes: an Obsidian-style Markdown vault with a live index, hybrid search and rename-safe links."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from mcp_tools.sandbox import sweep_temp_files
from mcp_tools.servers.notes.models import NotesConfig
from mcp_tools.servers.notes.tools import TOOLS
from mcp_tools.tooling import CliCommand, Environment, Namespace, SearchHit, SearchHook

if TYPE_CHECKING:
    from mcp_tools.servers.notes.vault import NotesService


def create(config: NotesConfig, env: Environment) -> NotesService:
    from mcp_tools.servers.notes.vault import NotesService

    return NotesService(config, env)


async def _background(service: NotesService, stop: anyio.Event) -> None:
    """Start-up reconciliation, then embeddings, then (optionally) the watcher."""
    async with anyio.create_task_group() as group:
        if service.config.watch:
            from mcp_tools.servers.notes.watcher import watch

            group.start_soon(watch, service, stop)
        if service.embedder is not None and hasattr(service.embedder, "start_loading"):
            service.embedder.start_loading()  # in its own thread: searches answer lexically meanwhile
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
                service.stopping.set()
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


def _index_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-embed", action="store_true", help="skip computing embeddings")
    parser.add_argument("--reembed", action="store_true", help="drop all vectors and embed again (model change)")


def _embeddings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["pull", "status"],
        help="pull: download the configured fastembed model now; status: model, vectors and last error",
    )


def _bar(label: str, done: int, total: int, started: float) -> None:
    width = 30
    filled = int(width * done / total) if total else width
    rate = done / max(time.monotonic() - started, 1e-6)
    sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} ({rate:.0f}/s)")
    sys.stderr.flush()


async def _index_command(service: NotesService, args: argparse.Namespace) -> int:
    started = time.monotonic()
    if args.reembed:
        service.index.clear_vectors()
    state = await anyio.to_thread.run_sync(service.reconcile, lambda d, t: _bar("notes", d, t, started))
    sys.stderr.write("\n")
    embedded = 0
    if service.embedder is not None and not args.no_embed:
        embed_started = time.monotonic()
        embedded = await anyio.to_thread.run_sync(
            service.embed_pending, lambda d, t: _bar("chunks", d, t, embed_started)
        )
        sys.stderr.write("\n")
    elapsed = time.monotonic() - started
    index_state = service.index_state()
    print(
        f"{index_state.indexed} notes in the index: {state.indexed} indexed, {state.unchanged} unchanged, "
        f"{state.removed} removed, {len(state.skipped)} skipped (too large or not UTF-8) in {elapsed:.1f}s"
    )
    if service.embedder is not None:
        covered = f"{index_state.embedded_chunks}/{index_state.total_chunks}"
        print(f"embeddings: {embedded} chunks embedded; {covered} done")
        if service.progress.embedding_error:
            print(f"embedding error: {service.progress.embedding_error}")
    for key in state.skipped[:20]:
        print(f"skipped: {key}")
    service.close()
    return 1 if service.progress.embedding_error else 0


async def _embeddings_command(service: NotesService, args: argparse.Namespace) -> int:
    """`pull` fetches the model on a machine that can, so an offline one can use the folder later."""
    from mcp_tools.servers.notes.embeddings import EmbeddingError

    try:
        if args.action == "status":
            print("\n".join(service.embedding_status()))
            return 0
        if service.embedder is None:
            print('no embedding provider configured: set [notes] embeddings = "fastembed" first', file=sys.stderr)
            return 1
        if getattr(service.embedder, "needs_loading", True) is False or not hasattr(service.embedder, "load"):
            print(f"nothing to pull: {service.embedder.model_id} runs on the embedding service")
            return 0
        sys.stderr.write(f"loading {service.embedder.model_id} (downloads it when it is not cached yet)...\n")
        try:
            await anyio.to_thread.run_sync(service.embedder.load)
        except EmbeddingError as exc:
            print(f"mcp-tools: {exc}", file=sys.stderr)
            return 1
        print(f"{service.embedder.model_id} is ready in {service.state_dir / 'models'}")
        return 0
    finally:
        service.close()


NAMESPACE: Namespace[NotesService] = Namespace(
    name="notes",
    description="Read, search, write and reorganise the notes of a Markdown (Obsidian-style) vault.",
    config_model=NotesConfig,
    create=create,
    tools=TOOLS,
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
    search=SearchHook(find=_find, read_tool="notes.read"),
    status=lambda service: service.embedding_status(),
    instructions=(
        "Note paths are relative to the vault. Read a note before replacing it and pass its sha256 as "
        "expected_sha256; use notes_rename (not write+delete) to move notes so links stay intact."
    ),
)
