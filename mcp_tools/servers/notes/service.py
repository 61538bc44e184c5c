"""The notes service: a vault on disk, its index, and every operation the tools expose.

Methods are synchronous (SQLite and file I/O); tools run them in worker threads. All file
access goes through the shared `Sandbox` with the `unicode` key policy.

The service is composed by concern: `NoteIndexing` (indexing.py) holds the vault and keeps its
index in step, `NoteReading` (reading.py) reads, lists and searches, `Editing` (edit.py) and
`Renaming` (rename.py) change notes in place; writing, front matter, daily notes and deletion are
here.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import posixpath
import stat as stat_module

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.dates import format_day, render_template
from mcp_tools.servers.notes.edit import Editing
from mcp_tools.servers.notes.frontmatter import merge_frontmatter
from mcp_tools.servers.notes.index import sha256_hex
from mcp_tools.servers.notes.keys import NOTE_SUFFIX, note_key
from mcp_tools.servers.notes.paging import text_page
from mcp_tools.servers.notes.reading import NoteReading
from mcp_tools.servers.notes.rename import Renaming
from mcp_tools.util.sandbox import stat_version


class NotesService(Renaming, Editing, NoteReading):
    """Every operation the notes tools expose; writes run under `write_lock`."""

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

    def write_target(self, path: str) -> tuple[str, int | None, str | None]:
        """What a write to `path` meets, from one look: the key it writes, and the size and
        `stat_version` of the note there (None, None: no note yet). A refused path raises ToolFailure."""
        key = note_key(path)
        info = self.sandbox.stat(key)
        return (key, None, None) if info is None else (key, info.st_size, stat_version(info))

    # -- tools --------------------------------------------------------------------------------

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
