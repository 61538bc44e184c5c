"""Keeping the notes index in step with the vault: the full pass, the quick refresh, embeddings, status.

`NotesService` is built on `NoteIndexing`: it holds the vault, its sandbox and the index, opened on
first use; everything else of the service reads notes through it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import posixpath
import stat as stat_module
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mcp_tools.core.tooling import Environment, NotConfigured, ToolFailure
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.embeddings import EmbeddingError, VectorMatrix, build_embedder
from mcp_tools.servers.notes.index import FileState, NoteIndex, sha256_hex
from mcp_tools.servers.notes.keys import NOTE_SUFFIX
from mcp_tools.servers.notes.markdown import parse_note
from mcp_tools.util.sandbox import TEMP_SUFFIX, Sandbox, escape_name, read_nofollow

EMBED_BATCH = 64
# A reconcile commits in large batches (a commit flushes and merges the full-text index, so fewer
# is faster) but never makes anyone wait long: a batch ends when a tool of this process waits for
# the index, and lasts at most COMMIT_SECONDS, well inside the 5 s another process sharing the
# index waits to write.
RECONCILE_BATCH = 5000
COMMIT_SECONDS = 1.0
clock = time.monotonic  # how a batch tells its age (a test's fake clock may stand in)
CHECKPOINT_AFTER = 100  # notes changed by a reconcile before it folds the write-ahead log back
BUILT_KEY = "built_for_vault"  # meta: the vault a full pass finished for

Progress = Callable[[int, int], None]


@dataclass
class IndexProgress:
    total: int = 0
    done: int = 0
    running: bool = False
    finished_once: bool = False
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: list[str] = field(default_factory=list)
    embedding_error: str | None = None


SKIPPED_SHOWN = 20  # notes.search and the CLI name this many skipped notes (with why); the count is whole


def iso_from_ns(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.UTC).isoformat(timespec="seconds")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


class FolderReader:
    """Reads notes `scan` found, opening each folder once (walked without following links) instead
    of walking and resolving every note's path: a cold index reads thousands of notes in a few
    hundred folders. The note itself is opened with O_NOFOLLOW; a name the sandbox refuses is
    refused here too."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.stack = contextlib.ExitStack()
        self.folders: dict[str, int] = {}

    def __enter__(self) -> FolderReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stack.close()

    def read(self, key: str, max_bytes: int) -> bytes:
        *_, name = self.sandbox.check(key)
        folder = key.rpartition("/")[0]
        fd = self.folders.get(folder)
        if fd is None:
            fd = self.folders[folder] = self.stack.enter_context(self.sandbox.open_dir(folder))
        return read_nofollow(fd, name, max_bytes, key=key)


class NoteIndexing:
    """The vault and its index: opening, scanning, reconciling, embedding, and what state they are in."""

    def __init__(self, config: NotesConfig, env: Environment) -> None:
        if not config.vault:
            raise NotConfigured('set [notes] vault = "/path/to/vault"')
        root = Path(config.vault).expanduser()
        if not root.is_dir():
            raise NotConfigured(f"[notes] vault {config.vault!r} is not a folder; create it or fix the path")
        self.config = config
        self.sandbox = Sandbox(root, policy="unicode", create=False)
        self.root = self.sandbox.root
        self.state_dir = env.namespace_state_dir("notes")
        self.embedder = build_embedder(config, env, self.state_dir)
        self._index: NoteIndex | None = None
        self._index_lock = threading.Lock()
        self.vectors = VectorMatrix()
        self.progress = IndexProgress()
        self.skipped: dict[str, str] = {}  # notes found but not indexed, and why
        self._skipped_lock = threading.Lock()
        self._built = False  # a full pass over this vault has finished (recorded in the index)
        self.stopping = threading.Event()
        self.write_lock = threading.RLock()

    # -- index lifecycle ----------------------------------------------------------------------

    @property
    def index(self) -> NoteIndex:
        """Opened on first use, so that `create` stays free of I/O."""
        with self._index_lock:
            if self._index is None:
                self._index = NoteIndex(self.state_dir / "index.sqlite3")
                model_id = self.embedder.model_id if self.embedder else ""
                if self._index.get_meta("embedding_model") not in (None, model_id):
                    self._index.clear_vectors()
                self._index.set_meta("embedding_model", model_id)
            return self._index

    def close(self) -> None:
        with self._index_lock:
            if self._index is not None:
                self._index.close()
                self._index = None

    def scan(self) -> Iterator[tuple[str, os.stat_result]]:
        """Every Markdown file in the vault (no hidden folders, no symlinks), with its lstat."""
        stack = [("", str(self.root))]
        while stack:
            prefix, folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith(".") or name.endswith(TEMP_SUFFIX):
                    continue
                key = f"{prefix}{escape_name(name)}"  # a name that is not UTF-8 gets \\xHH escapes
                if entry.is_dir(follow_symlinks=False):
                    stack.append((key + "/", entry.path))
                elif entry.is_file(follow_symlinks=False) and name.lower().endswith(NOTE_SUFFIX):
                    try:
                        yield key, entry.stat(follow_symlinks=False)
                    except OSError:
                        continue

    def index_path(
        self,
        key: str,
        known: FileState | None = None,
        *,
        info: os.stat_result | None = None,
        new: bool = False,
        folders: FolderReader | None = None,
    ) -> str:
        """Bring one note's index entry up to date: 'indexed', 'unchanged', 'removed' or 'skipped'.

        `known` is the indexed state when the caller has it; `new` says the note is not indexed;
        `folders` reads notes found by `scan` through one open descriptor per folder. Why a note
        was skipped is kept in `skipped`, for the index status and notes.search."""
        try:
            outcome, reason = self._index_one(key, known, info=info, new=new, folders=folders)
        except ToolFailure as exc:  # a name the sandbox refuses: too long, control characters
            outcome, reason = "skipped", f"cannot be read: {exc.message}"
        with self._skipped_lock:
            if reason is None:
                self.skipped.pop(key, None)
            else:
                self.skipped[key] = reason
        return outcome

    def _index_one(
        self,
        key: str,
        known: FileState | None,
        *,
        info: os.stat_result | None,
        new: bool,
        folders: FolderReader | None,
    ) -> tuple[str, str | None]:
        index = self.index
        if info is None:
            info = self.sandbox.stat(key)
        if info is None or not stat_module.S_ISREG(info.st_mode):
            return ("removed" if index.remove(key) else "unchanged"), None
        if known is None and not new:
            known = self._state_of(key)
        if known and known.mtime_ns == info.st_mtime_ns and known.size == info.st_size:
            return "unchanged", None
        if info.st_size > self.config.max_note_bytes:
            index.remove(key)
            return "skipped", f"{info.st_size} bytes, over [notes] max_note_bytes ({self.config.max_note_bytes})"
        try:
            if folders is None:
                data = self.sandbox.read_bytes(key, max_bytes=self.config.max_note_bytes)
            else:
                data = folders.read(key, self.config.max_note_bytes)
            text = data.decode("utf-8")
        except ToolFailure as exc:
            index.remove(key)
            return "skipped", f"cannot be read: {exc.message}"
        except UnicodeDecodeError as exc:
            index.remove(key)
            return "skipped", f"not UTF-8 (byte {exc.start})"
        state = FileState(info.st_mtime_ns, len(data), sha256_hex(data))
        if known and known.hash == state.hash:
            index.touch(key, state)
            return "unchanged", None
        parsed = parse_note(text, posixpath.basename(key)[: -len(NOTE_SUFFIX)])
        index.upsert(key, text, parsed, state, created=info.st_mtime_ns / 1e9, new=new)
        return "indexed", None

    def _state_of(self, key: str) -> FileState | None:
        doc = self.index.document(key)
        return FileState(doc.mtime_ns, doc.size, doc.hash) if doc else None

    def reconcile(self, progress: Progress | None = None) -> IndexProgress:
        """Compare the vault with the index by mtime, size and hash; re-index only what changed."""
        state = self.progress
        state.running = True
        state.indexed = state.unchanged = state.removed = 0
        state.skipped = []
        try:
            known = self.index.file_states()
            files = list(self.scan())
            state.total = len(files)
            state.done = 0
            present = self._reconcile_files(files, known, progress)
            if self.stopping.is_set():
                return state
            for key in set(known) - present:
                if self.index.remove(key):
                    state.removed += 1
            with self._skipped_lock:  # notes gone since they were skipped
                for key in set(self.skipped) - present:
                    del self.skipped[key]
            state.finished_once = True
            if not self._built:
                self.index.set_meta(BUILT_KEY, str(self.root))
                self._built = True
            if state.indexed + state.removed > CHECKPOINT_AFTER:
                self.index.checkpoint()
            return state
        finally:
            state.running = False

    def _reconcile_files(
        self,
        files: list[tuple[str, os.stat_result]],
        known: dict[str, FileState],
        progress: Progress | None,
    ) -> set[str]:
        """Index what changed among `files`, in batches, until done or stopping; the notes it saw."""
        state = self.progress
        present: set[str] = set()
        lock = self.index.lock
        waited_for = lock.waiting.is_set
        position = 0
        while position < len(files) and not self.stopping.is_set():
            # One commit per batch. A batch ends as soon as a tool waits for the index, so tools
            # wait at most one note; otherwise after COMMIT_SECONDS or RECONCILE_BATCH notes.
            ends = clock() + COMMIT_SECONDS
            with self.index.transaction(), FolderReader(self.sandbox) as folders:
                for key, info in files[position : position + RECONCILE_BATCH]:
                    position += 1
                    present.add(key)
                    outcome = self.index_path(key, known.get(key), info=info, new=key not in known, folders=folders)
                    if outcome == "skipped":
                        state.skipped.append(key)
                    else:
                        setattr(state, outcome, getattr(state, outcome) + 1)
                    state.done += 1
                    if waited_for() or clock() > ends or self.stopping.is_set():
                        break
            if waited_for():  # let the tool in before the next batch takes the index again
                lock.let_waiters_in(COMMIT_SECONDS)
            if progress:
                progress(state.done, state.total)
        return present

    def refresh(self) -> None:
        """A quick pass for edits the watcher has not reported yet (only stat calls for unchanged notes)."""
        known = self.index.file_states()
        present = set()
        for key, info in self.scan():
            present.add(key)
            state = known.get(key)
            if state is None or state.mtime_ns != info.st_mtime_ns or state.size != info.st_size:
                self.index_path(key, state, info=info)
        for key in set(known) - present:
            self.index.remove(key)
        with self._skipped_lock:
            for key in set(self.skipped) - present:
                del self.skipped[key]

    def embed_pending(self, progress: Progress | None = None, doc_path: str | None = None) -> int:
        """Embed chunks without vectors; returns how many were embedded."""
        if self.embedder is None:
            return 0
        done = 0
        last_id = 0
        total = self.index.vector_counts()
        while not self.stopping.is_set():
            pending = self.index.pending_chunks(EMBED_BATCH, doc_path, after=last_id)
            if not pending:
                break
            last_id = pending[-1].id
            try:
                vectors = self.embedder.embed([p.text for p in pending])
            except EmbeddingError as exc:
                self.progress.embedding_error = str(exc)
                self.index.set_meta("embedding_error", str(exc))  # for `mcp-tools doctor` in another process
                break
            if self.progress.embedding_error is not None or done == 0:
                self.progress.embedding_error = None
                self.index.set_meta("embedding_error", "")
            self.index.store_vectors([(p.id, v) for p, v in zip(pending, vectors, strict=True)])
            done += len(pending)
            if progress:
                progress(total[0] + done, total[1])
        if done > EMBED_BATCH * 4:
            self.index.checkpoint()
        return done

    def apply_changes(self, keys: set[str], rescan: bool) -> None:
        """What the watcher saw: re-index these notes (or everything when folders moved)."""
        if rescan:
            self.reconcile()
        else:
            for key in keys:
                self.index_path(key)
        self.embed_pending()

    def embedding_status(self) -> list[str]:
        """What `mcp-tools doctor` says about semantic search: model, vectors, dimension, last error."""
        if self.embedder is None:
            return ["embeddings: off (lexical search only; set [notes] embeddings to turn them on)"]
        embedded, chunks = self.index.vector_counts()
        dimensions = self.index.vector_dimensions()
        lines = [
            f"embeddings: {self.embedder.model_id}",
            f"vectors:    {embedded}/{chunks} chunks" + (f", {dimensions} dimensions" if dimensions else ""),
        ]
        error = self.index.get_meta("embedding_error")
        if error:
            lines.append(f"last error: {error}")
        return lines

    def index_state(self) -> m.IndexState:
        """Complete once a full pass over the vault has finished, in this process or an earlier one.

        Later passes (at start-up, after folder moves) only catch up with edits made meanwhile, so
        they do not make a built index partial; only a first build in progress does.
        """
        indexed = self.index.count()
        embedded, chunks = self.index.vector_counts() if self.embedder else (0, 0)
        state = self.progress
        if not self._built:
            self._built = self.index.get_meta(BUILT_KEY) == str(self.root)
        complete = self._built
        total = indexed if complete else max(state.total, indexed)
        with self._skipped_lock:
            skipped = sorted(self.skipped.items())
        return m.IndexState(
            indexed=min(state.done, total) if state.running and not complete else indexed,
            total=total,
            complete=complete,
            embedded_chunks=embedded,
            total_chunks=chunks,
            skipped=len(skipped),
            skipped_notes=[m.SkippedNote(path=key, reason=reason) for key, reason in skipped[:SKIPPED_SHOWN]],
        )
