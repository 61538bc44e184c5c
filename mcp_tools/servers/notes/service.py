"""The notes service: a vault on disk, its index, and every operation the tools expose.

Methods are synchronous (SQLite and file I/O); tools run them in worker threads. All file
access goes through the shared `Sandbox` with the `unicode` key policy.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import posixpath
import random
import stat as stat_module
import threading
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcp_tools.core.tooling import Environment, NotConfigured, ToolFailure
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.config import NotesConfig
from mcp_tools.servers.notes.dates import format_day, render_template
from mcp_tools.servers.notes.edit import Editing
from mcp_tools.servers.notes.embeddings import EmbeddingError, VectorMatrix, build_embedder
from mcp_tools.servers.notes.frontmatter import merge_frontmatter
from mcp_tools.servers.notes.index import FileState, NoteIndex, sha256_hex
from mcp_tools.servers.notes.keys import NOTE_SUFFIX, FragmentChecker, note_key
from mcp_tools.servers.notes.links import has_foreign_extension
from mcp_tools.servers.notes.markdown import parse_note, section_span
from mcp_tools.servers.notes.paging import paginate, text_page
from mcp_tools.servers.notes.rename import Renaming
from mcp_tools.servers.notes.search import lexical_hits, name_matches, rank, vector_hits
from mcp_tools.util.sandbox import TEMP_SUFFIX, Sandbox, escape_name, read_nofollow, stat_version

EMBED_BATCH = 64
RECONCILE_BATCH = 100
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


class NotesService(Renaming, Editing):
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
        index.upsert(key, text, parsed, state, created=info.st_mtime_ns / 1e9)
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
            present = set()
            for start in range(0, len(files), RECONCILE_BATCH):
                if self.stopping.is_set():
                    return state
                # one commit per batch; tools wait at most one batch
                with self.index.transaction(), FolderReader(self.sandbox) as folders:
                    for key, info in files[start : start + RECONCILE_BATCH]:
                        present.add(key)
                        outcome = self.index_path(key, known.get(key), info=info, new=key not in known, folders=folders)
                        if outcome == "skipped":
                            state.skipped.append(key)
                        else:
                            setattr(state, outcome, getattr(state, outcome) + 1)
                        state.done += 1
                if progress:
                    progress(state.done, state.total)
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
            if state.indexed + state.removed > RECONCILE_BATCH:
                self.index.checkpoint()
            return state
        finally:
            state.running = False

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

    # -- helpers ------------------------------------------------------------------------------

    def existing_key(self, path: str) -> str:
        """The key of an existing note, accepting the other Unicode normalisation of its name."""
        key = note_key(path)
        candidates = [key, unicodedata.normalize("NFC", key), unicodedata.normalize("NFD", key)]
        for candidate in dict.fromkeys(candidates):
            info = self.sandbox.stat(candidate)
            if info is not None and stat_module.S_ISREG(info.st_mode):
                return candidate
            if info is not None and stat_module.S_ISLNK(info.st_mode):
                self.sandbox.resolve(candidate)  # refuses a link leading out of the vault
                return candidate
        self.sandbox.check(key)
        raise ToolFailure("not_found", f"note {key} does not exist", "use notes_search to find the right path")

    def read_text(self, key: str) -> tuple[str, str]:
        data = self.sandbox.read_bytes(key, max_bytes=self.config.max_note_bytes)
        try:
            return data.decode("utf-8"), sha256_hex(data)
        except UnicodeDecodeError:
            raise ToolFailure("invalid_arguments", f"{key} is not UTF-8 text") from None

    def _write(self, key: str, text: str) -> str:
        data = text.encode("utf-8")
        if len(data) > self.config.max_note_bytes:
            raise ToolFailure(
                "too_large", f"the note would be {len(data)} bytes; the limit is {self.config.max_note_bytes}"
            )
        self.sandbox.write_bytes(key, data, create_parents=True)
        self.index_path(key)
        with contextlib.suppress(Exception):  # written and searchable lexically; vectors follow later
            self.embed_pending(doc_path=key)
        return sha256_hex(data)

    def _check_expected(self, key: str, expected: str | None, current: str | None) -> None:
        if expected is None:
            return
        if current is None:
            raise ToolFailure("conflict", f"{key} no longer exists", "read it again or write without expected_sha256")
        if expected.lower() != current:
            raise ToolFailure(
                "conflict",
                f"{key} changed since it was read (sha256 is now {current})",
                "read the note again, merge your change, and retry with the new sha256",
            )

    # -- preconditions: checked before the person is asked, so nobody approves a call bound to fail

    def precheck_write(self, args: m.WriteArgs) -> None:
        """A valid note path, no folder in the way, and the note still as it was read."""
        key = note_key(args.path)
        self.sandbox.resolve(key)  # also refuses a link leading out of the vault, which the write would
        current = self._current_hash(key) if args.expected_sha256 is not None else None
        self._check_expected(key, args.expected_sha256, current)

    def precheck_update_frontmatter(self, args: m.UpdateFrontmatterArgs) -> None:
        if not args.set:
            raise ToolFailure("invalid_arguments", "set needs at least one key", 'e.g. {"status": "done"}')
        key = self.existing_key(args.path)
        if args.expected_sha256 is not None:
            self._check_expected(key, args.expected_sha256, self.read_text(key)[1])

    def precheck_rename(self, args: m.RenameArgs, facts: m.RenameFacts) -> None:
        """The names must work; for a real rename, how many files and links it will rewrite (for the confirmation)."""
        old, new = self._rename_keys(args)
        if args.dry_run:
            return
        with self.write_lock:
            self.refresh()
            plans = self._rename_plans(old, new)
        facts.rewrites = (len(plans), sum(plan[3] for plan in plans.values()))

    def precheck_delete(self, args: m.DeleteArgs, facts: m.DeleteFacts) -> None:
        key = self.existing_key(args.path)
        facts.target_version = self.version_of(key)
        if not args.permanent:
            facts.trash_to = self._trash_key(key)

    def version_of(self, key: str) -> str | None:
        """The `stat_version` of the note at `key`; None: no note there."""
        try:
            info = self.sandbox.stat(key)
        except ToolFailure:
            return None
        return None if info is None else stat_version(info)

    def write_target(self, path: str) -> tuple[str, int | None, str | None]:
        """What a write to `path` meets, from one look: the key it writes, and the size and
        `stat_version` of the note there (None, None: no note yet). A refused path raises ToolFailure."""
        key = note_key(path)
        info = self.sandbox.stat(key)
        return (key, None, None) if info is None else (key, info.st_size, stat_version(info))

    # -- tools --------------------------------------------------------------------------------

    def read(self, args: m.ReadArgs) -> m.ReadOutput:
        key = self.existing_key(args.path)
        text, digest = self.read_text(key)
        parsed = parse_note(text, posixpath.basename(key)[: -len(NOTE_SUFFIX)])
        content = text
        if args.heading:
            span = section_span(text, parsed.headings, args.heading)
            if span is None:
                known = ", ".join(h.text for h in parsed.headings[:20]) or "none"
                raise ToolFailure("not_found", f"{key} has no heading {args.heading!r}", f"headings: {known}")
            content = text[span[0] : span[1]]
        self.index_path(key)
        targets = FragmentChecker(self, {key: parsed})
        broken = []
        for row in self.index.links_from(key):
            if row.resolved_path is None and not has_foreign_extension(row.target):
                broken.append(f"{row.target}{row.fragment}: no such note")
            elif (problem := targets.problem(row.resolved_path, row.fragment)) is not None:
                broken.append(f"{row.target}{row.fragment}: {problem}")
        chunk, next_offset = text_page(content, args.offset, args.max_chars)
        return m.ReadOutput(
            path=key,
            content=chunk,
            frontmatter=parsed.frontmatter,
            tags=parsed.tags,
            sha256=digest,
            heading=args.heading,
            broken_links=broken[:50],
            offset=args.offset,
            total_chars=len(content),
            next_offset=next_offset,
        )

    def search(self, args: m.SearchArgs) -> m.SearchOutput:
        for name in ("date_after", "date_before"):
            value = getattr(args, name)
            try:
                if value is not None:
                    dt.datetime.fromisoformat(value)
            except ValueError:
                raise ToolFailure(
                    "invalid_arguments", f"{name} {value!r} is not an ISO 8601 date", "e.g. 2024-03-01"
                ) from None
        index = self.index
        tags = [t.strip().lstrip("#").casefold() for t in args.tags if t.strip()]
        allowed = index.filtered_doc_ids(
            tags=tags, folder=args.folder, date_after=args.date_after, date_before=args.date_before
        )
        depth = 2000 if allowed is not None else max(args.top_k * 20, 200)
        lexical = lexical_hits(index, args.query, args.top_k * 3, allowed, depth)
        names = name_matches(index, args.query, allowed, args.top_k * 3)
        semantic: list[tuple[int, int, float]] = []
        mode: Literal["hybrid", "lexical"] = "lexical"
        note = None
        if self.embedder is None:
            note = "no embedding provider configured ([notes] embeddings); lexical search only"
        else:
            embedded, total_chunks = index.vector_counts()
            try:
                query_vector = self.embedder.embed_query(args.query)
            except EmbeddingError as exc:
                note = f"semantic search unavailable: {exc}; lexical search only"
            else:
                if index.generation != self.vectors.generation:
                    generation, changes, rows = index.vector_snapshot(self.vectors.generation)
                    if changes is None:
                        self.vectors.refresh(generation, rows)
                    else:
                        self.vectors.apply(generation, [op for change in changes for op in change.ops])
                if self.vectors.dimensions and len(query_vector) // 4 != self.vectors.dimensions:
                    note = (
                        f"semantic search unavailable: the model gives {len(query_vector) // 4}-dimensional "
                        f"vectors but the index holds {self.vectors.dimensions}-dimensional ones; run "
                        "`mcp-tools notes index --reembed` after changing the model; lexical search only"
                    )
                else:
                    semantic = vector_hits(self.vectors, query_vector, args.top_k * 3, allowed)
                    mode = "hybrid"
                if mode == "hybrid" and embedded < total_chunks:
                    note = f"embeddings cover {embedded} of {total_chunks} chunks; indexing continues"
        hits = rank(args.query, lexical, names, semantic, index, args.top_k)
        state = self.index_state()
        if not state.complete:
            progress = f"{state.indexed}/{state.total} notes" if state.indexed < state.total else "being built"
            note = (note + "; " if note else "") + f"the index is {progress}; results may be partial"
        if state.skipped:
            some = "1 note is" if state.skipped == 1 else f"{state.skipped} notes are"
            note = (note + "; " if note else "") + f"{some} not indexed, so never found (index.skipped_notes says why)"
        docs = index.documents_by_id(h.doc_id for h in hits)
        results = [
            m.SearchHit(
                path=docs[h.doc_id].path,
                title=docs[h.doc_id].title,
                heading=h.passages[0].heading if h.passages else "",
                snippet=h.passages[0].snippet if h.passages else "",
                more=[m.Passage(heading=p.heading, snippet=p.snippet) for p in h.passages[1:]],
                score=round(h.score, 6),
            )
            for h in hits
            if h.doc_id in docs
        ]
        return m.SearchOutput(mode=mode, results=results, index=state, note=note)

    def write(self, args: m.WriteArgs) -> m.WriteOutput:
        key = note_key(args.path)
        self.sandbox.check(key)
        with self.write_lock:
            current = self._current_hash(key)
            self._check_expected(key, args.expected_sha256, current)
            digest = self._write(key, args.content)
        return m.WriteOutput(path=key, sha256=digest, created=current is None, bytes=len(args.content.encode("utf-8")))

    def _current_hash(self, key: str) -> str | None:
        info = self.sandbox.stat(key)
        if info is None:
            return None
        if stat_module.S_ISDIR(info.st_mode):
            raise ToolFailure("conflict", f"{key} is a folder")
        return self.read_text(key)[1]

    def exists(self, path: str) -> bool:
        try:
            return self.sandbox.stat(note_key(path)) is not None
        except ToolFailure:
            return False

    def update_frontmatter(self, args: m.UpdateFrontmatterArgs) -> m.FrontmatterOutput:
        if not args.set:
            raise ToolFailure("invalid_arguments", "set needs at least one key", 'e.g. {"status": "done"}')
        with self.write_lock:
            key = self.existing_key(args.path)
            text, digest = self.read_text(key)
            self._check_expected(key, args.expected_sha256, digest)
            new_text, frontmatter = merge_frontmatter(text, args.set)
            new_digest = self._write(key, new_text) if new_text != text else digest
        return m.FrontmatterOutput(path=key, sha256=new_digest, frontmatter=frontmatter)

    def backlinks(self, args: m.LinksArgs) -> m.BacklinksOutput:
        key = self.existing_key(args.path)
        self.index_path(key)
        rows = self.index.links_to(key)
        _, page, next_cursor = paginate(rows, args.limit, args.cursor)
        lines = self._line_numbers({r.source_path for r in page})
        return m.BacklinksOutput(
            path=key,
            backlinks=[
                m.Backlink(
                    source=r.source_path,
                    kind=r.kind,
                    text=r.text,
                    fragment=r.fragment,
                    line=lines(r.source_path, r.start),
                )
                for r in page
            ],
            total=len(rows),
            next_cursor=next_cursor,
        )

    def forward_links(self, args: m.LinksArgs) -> m.ForwardLinksOutput:
        key = self.existing_key(args.path)
        self.index_path(key)
        rows = self.index.links_from(key)
        _, page, next_cursor = paginate(rows, args.limit, args.cursor)
        lines = self._line_numbers({key})
        targets = FragmentChecker(self)
        return m.ForwardLinksOutput(
            path=key,
            links=[
                m.ForwardLink(
                    target=r.target,
                    resolved_path=r.resolved_path,
                    kind=r.kind,
                    fragment=r.fragment,
                    text=r.text,
                    line=lines(key, r.start),
                    missing=targets.problem(r.resolved_path, r.fragment),
                )
                for r in page
            ],
            total=len(rows),
            unresolved=sum(1 for r in rows if r.resolved_path is None),
            next_cursor=next_cursor,
        )

    def _line_numbers(self, keys: set[str]) -> Callable[[str, int], int]:
        texts: dict[str, str] = {}
        for key in keys:
            try:
                texts[key] = self.read_text(key)[0]
            except ToolFailure:
                texts[key] = ""
        return lambda key, offset: line_of(texts.get(key, ""), offset)

    def daily_settings(self) -> tuple[str, str, str | None]:
        folder, fmt, template = self.config.daily_folder, self.config.daily_format, self.config.daily_template
        try:
            raw = self.sandbox.read_bytes(".obsidian/daily-notes.json", max_bytes=100_000)
            settings = json.loads(raw.decode("utf-8"))
        except (ToolFailure, ValueError, UnicodeDecodeError):
            settings = None
        if isinstance(settings, dict):
            folder = str(settings.get("folder") or folder)
            fmt = str(settings.get("format") or fmt)
            template = str(settings.get("template") or "") or template
        return folder.strip("/"), fmt, template

    def daily_key(self, date: str | None) -> tuple[str, dt.date]:
        try:
            day = dt.date.fromisoformat(date) if date else dt.date.today()
        except ValueError:
            raise ToolFailure("invalid_arguments", f"date {date!r} is not an ISO date", "use YYYY-MM-DD") from None
        folder, fmt, _ = self.daily_settings()
        name = format_day(day, fmt)
        return note_key(f"{folder}/{name}" if folder else name), day

    def daily(self, args: m.DailyArgs) -> m.DailyOutput:
        key, day = self.daily_key(args.date)
        with self.write_lock:
            if self.sandbox.stat(key) is not None:
                text, digest = self.read_text(key)
                self.index_path(key)
                chunk, next_offset = text_page(text, args.offset, args.max_chars)
                return m.DailyOutput(
                    path=key,
                    date=day.isoformat(),
                    created=False,
                    content=chunk,
                    sha256=digest,
                    offset=args.offset,
                    total_chars=len(text),
                    next_offset=next_offset,
                )
            if not args.create:
                raise ToolFailure("not_found", f"no daily note for {day.isoformat()} ({key})", "pass create: true")
            _, fmt, template = self.daily_settings()
            text = ""
            if template:
                try:
                    template_text, _ = self.read_text(self.existing_key(template))
                    text = render_template(template_text, day, posixpath.basename(key)[: -len(NOTE_SUFFIX)], fmt)
                except ToolFailure:
                    text = ""
            digest = self._write(key, text)
        chunk, next_offset = text_page(text, 0, args.max_chars)
        return m.DailyOutput(
            path=key,
            date=day.isoformat(),
            created=True,
            content=chunk,
            sha256=digest,
            total_chars=len(text),
            next_offset=next_offset,
        )

    def search_by_tag(self, args: m.TagArgs) -> m.TagOutput:
        tag = args.tag.strip().lstrip("#").casefold().strip("/")
        if not tag:
            raise ToolFailure("invalid_arguments", "tag is empty", "e.g. 'project' or 'project/alpha'")
        grouped: dict[str, list[str]] = {}
        for path, matched in self.index.tag_counts(unicodedata.normalize("NFC", tag)):
            grouped.setdefault(path, []).append(matched)
        items = sorted(grouped.items())
        _, page, next_cursor = paginate(items, args.limit, args.cursor)
        return m.TagOutput(
            tag=tag,
            notes=[m.TaggedNote(path=p, tags=t) for p, t in page],
            total=len(items),
            next_cursor=next_cursor,
        )

    def metadata(self, args: m.PathArgs) -> m.MetadataOutput:
        key = self.existing_key(args.path)
        text, digest = self.read_text(key)
        self.index_path(key)
        parsed = parse_note(text, posixpath.basename(key)[: -len(NOTE_SUFFIX)])
        doc = self.index.document(key)
        links_out = self.index.links_from(key)
        info = self.sandbox.stat(key)
        created = parsed.frontmatter.get("created") or parsed.frontmatter.get("date")
        if not created and doc and doc.created:
            created = dt.datetime.fromtimestamp(doc.created, tz=dt.UTC).isoformat(timespec="seconds")
        return m.MetadataOutput(
            path=key,
            title=parsed.title,
            frontmatter=parsed.frontmatter,
            tags=parsed.tags,
            aliases=parsed.aliases,
            headings=[h.text for h in parsed.headings],
            words=parsed.words,
            links_out=len(links_out),
            links_unresolved=sum(1 for r in links_out if r.resolved_path is None),
            backlinks=len(self.index.links_to(key)),
            created=str(created) if created else None,
            modified=iso_from_ns(info.st_mtime_ns if info else 0),
            size=len(text.encode("utf-8")),
            sha256=digest,
        )

    def random_note(self, args: m.RandomArgs) -> m.RandomOutput:
        tags = [args.tag.strip().lstrip("#").casefold()] if args.tag else []
        allowed = self.index.filtered_doc_ids(tags=tags, folder=args.folder)
        path = self.index.random_path(allowed, random.random())
        if path is None:
            raise ToolFailure("not_found", "no note matches", "drop the tag or folder filter")
        doc = self.index.document(path)
        assert doc is not None
        return m.RandomOutput(path=path, title=doc.title, tags=doc.tags)

    def delete(self, args: m.DeleteArgs) -> m.DeleteOutput:
        with self.write_lock:
            key = self.existing_key(args.path)
            self.index_path(key)
            linked_from = sorted({r.source_path for r in self.index.links_to(key) if r.source_path != key})
            trashed_to = None
            if args.permanent:
                self.sandbox.unlink(key)
            else:
                trashed_to = self._trash_key(key)
                self.sandbox.mkdir(posixpath.dirname(trashed_to), parents=True)
                self.sandbox.rename(key, trashed_to)
            self.index.remove(key)
        return m.DeleteOutput(
            path=key,
            trashed_to=trashed_to,
            linked_from=linked_from[: m.LINKED_FROM_SHOWN],
            linked_from_total=len(linked_from),
        )

    def _trash_key(self, key: str) -> str:
        folder = self.config.trash_folder.strip("/") or ".trash"
        stem = posixpath.basename(key)[: -len(NOTE_SUFFIX)]
        candidate = f"{folder}/{stem}{NOTE_SUFFIX}"
        number = 1
        while self.sandbox.stat(candidate) is not None:
            candidate = f"{folder}/{stem} {number}{NOTE_SUFFIX}"
            number += 1
        return candidate
