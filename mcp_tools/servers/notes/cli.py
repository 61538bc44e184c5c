"""`mcp-tools notes index` (with a progress bar) and `mcp-tools notes embeddings` (pull the model ahead of time)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from mcp_tools.servers.notes.service import NotesService


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
        f"{state.removed} removed, {len(state.skipped)} skipped in {elapsed:.1f}s"
    )
    if service.embedder is not None:
        covered = f"{index_state.embedded_chunks}/{index_state.total_chunks}"
        print(f"embeddings: {embedded} chunks embedded; {covered} done")
        if service.progress.embedding_error:
            print(f"embedding error: {service.progress.embedding_error}")
    for skipped in index_state.skipped_notes:
        print(f"skipped: {skipped.path}: {skipped.reason}")
    if index_state.skipped > len(index_state.skipped_notes):
        print(f"... and {index_state.skipped - len(index_state.skipped_notes)} more skipped")
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
