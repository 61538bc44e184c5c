"""Renaming a note without breaking a link: the plan of every file it rewrites, shown (dry run) or applied.

`NotesService` takes these methods from `Renaming`; they run under its write lock. What they use
of the service is the `RenameHost` protocol, so this module does not import the service.
"""

from __future__ import annotations

import posixpath
import threading
import unicodedata
from typing import Any, Protocol

from mcp_tools.core.tooling import ToolFailure
from mcp_tools.servers.notes import models as m
from mcp_tools.servers.notes.index import NoteIndex
from mcp_tools.servers.notes.keys import NOTE_SUFFIX, FragmentChecker, note_key, unified_diff
from mcp_tools.servers.notes.links import Resolution, Resolver, rewrite_link, splice, stem_of
from mcp_tools.servers.notes.markdown import Link, parse_note
from mcp_tools.util.sandbox import Sandbox


class RenameHost(Protocol):
    """What renaming uses of the notes service."""

    @property
    def index(self) -> NoteIndex: ...
    @property
    def sandbox(self) -> Sandbox: ...
    @property
    def write_lock(self) -> threading.RLock: ...

    def existing_key(self, path: str) -> str: ...
    def refresh(self) -> None: ...
    def read_text(self, key: str) -> tuple[str, str]: ...
    def index_path(self, key: str) -> str: ...
    def embed_pending(self, *, doc_path: str | None = None) -> int: ...
    def _check_expected(self, key: str, expected: str | None, current: str | None) -> None: ...
    def _current_hash(self, key: str) -> str | None: ...
    def _write(self, key: str, text: str) -> str: ...
    def _rename_keys(self, args: m.RenameArgs) -> tuple[str, str]: ...
    def _rename_plans(self, old: str, new: str) -> dict[str, tuple[str, str, str, int]]: ...
    def _plan_rename(self, old: str, new: str, sources: set[str]) -> dict[str, tuple[str, str, str, int]]: ...


class Renaming:
    """The rename methods of `NotesService` (typed as its methods: they use its index, sandbox and lock)."""

    def _rename_keys(self: RenameHost, args: m.RenameArgs) -> tuple[str, str]:
        """The note to rename and its new key; the note must exist and the new name be free."""
        old = self.existing_key(args.path)
        new = note_key(args.new_path)
        self.sandbox.check(new, field="new_path")
        if new == old:
            raise ToolFailure("invalid_arguments", "new_path is the same as path")
        if (
            self.sandbox.stat(new) is not None
            and unicodedata.normalize("NFC", new).casefold() != unicodedata.normalize("NFC", old).casefold()
        ):
            raise ToolFailure("conflict", f"{new} already exists", "choose another name or delete it first")
        return old, new

    def rename(self: RenameHost, args: m.RenameArgs) -> m.RenameOutput:
        with self.write_lock:
            old, new = self._rename_keys(args)
            self.refresh()  # links from notes edited a moment ago count too
            plans = self._rename_plans(old, new)
            start = rename_cursor(args.cursor, len(plans)) if args.dry_run else 0
            shown = sorted(plans.items())[start : start + (m.RENAME_PAGE if args.dry_run else m.LINKED_FROM_SHOWN)]
            changed = [
                m.FileChange(
                    path=new if source == old else source,
                    links=count,
                    diff=cut_diff(unified_diff(source, before, after)) if args.dry_run else None,
                )
                for source, (before, after, _, count) in shown
            ]
            totals: dict[str, Any] = {"files": len(plans), "links": sum(plan[3] for plan in plans.values())}
            end = start + len(shown)
            if args.dry_run:
                targets = FragmentChecker(self)
                warnings = [
                    f"{r.source_path}: {r.target}{r.fragment}: {problem}"
                    for r in self.index.links_to(old)
                    if (problem := targets.problem(old, r.fragment)) is not None
                ]
                return m.RenameOutput(
                    path=old,
                    new_path=new,
                    dry_run=True,
                    changed=changed,
                    warnings=warnings[:50],
                    **totals,
                    next_cursor=str(end) if end < len(plans) else None,
                )
            for source, (_, _, digest, _) in plans.items():  # nothing was edited in between
                self._check_expected(source, digest, self._current_hash(source))
            if old in plans:
                self.sandbox.write_bytes(old, plans[old][1].encode("utf-8"))
            parent = posixpath.dirname(new)
            if parent:
                self.sandbox.mkdir(parent, parents=True)
            self.sandbox.rename(old, new, overwrite=False)
            self.index.remove(old)
            self.index_path(new)
            for source, (_, after, _, _) in plans.items():
                if source != old:
                    self._write(source, after)
            self.embed_pending(doc_path=new)
        return m.RenameOutput(path=old, new_path=new, dry_run=False, changed=changed, **totals)

    def _rename_plans(self: RenameHost, old: str, new: str) -> dict[str, tuple[str, str, str, int]]:
        """Every file the rename of `old` to `new` rewrites; call under the write lock."""
        sources = {r.source_path for r in self.index.links_to(old)} | {old}
        # notes whose links the new name could capture (a closer or exact match) are checked too
        sources |= self.index.sources_linking_by_name(stem_of(new))
        with self.index.lock:  # the resolver must not change under the plan
            return self._plan_rename(old, new, sources)

    def _plan_rename(self: RenameHost, old: str, new: str, sources: set[str]) -> dict[str, tuple[str, str, str, int]]:
        """source -> (text before, text after, sha256 before, links changed) for every file to edit."""
        before_resolver = self.index.resolver
        documents = {path: self.index.document(path) for path in self.index.paths()}
        aliases = {path: doc.aliases for path, doc in documents.items() if doc}
        after_paths = [new if path == old else path for path in documents]
        after_aliases = {new if path == old else path: value for path, value in aliases.items()}
        after_resolver = Resolver(after_paths, after_aliases)
        plans: dict[str, tuple[str, str, str, int]] = {}
        for source in sorted(sources):
            text, digest = self.read_text(source)
            parsed = parse_note(text, posixpath.basename(source)[: -len(NOTE_SUFFIX)])
            source_after = new if source == old else source
            replacements = []
            for link in parsed.links:
                before = before_resolver.resolve(source, link)
                if before.path == old:
                    target_after = new
                elif before.path and moved_off(link, before, after_resolver.resolve(source_after, link)):
                    target_after = before.path  # keep it pointing where it did
                else:
                    continue
                rewritten = rewrite_link(link, source_after, target_after, before, after_resolver)
                if rewritten is not None and rewritten != link.raw:
                    replacements.append((link.start, link.end, rewritten))
            if replacements:
                plans[source] = (text, splice(text, replacements), digest, len(replacements))
        return plans


def moved_off(link: Link, before: Resolution, after: Resolution) -> bool:
    """Would this link point elsewhere after the rename (or, for a relative Markdown link, hold only by luck)?"""
    return after.path != before.path or (link.style == "markdown" and after.method != before.method)


def rename_cursor(cursor: str | None, total: int) -> int:
    """Where a dry run's page starts: the next_cursor of the last page (a file count)."""
    if cursor is None:
        return 0
    if not cursor.isdigit() or int(cursor) > total:
        raise ToolFailure("invalid_arguments", f"cursor {cursor!r} is not one this rename gave", "start without cursor")
    return int(cursor)


def cut_diff(diff: str) -> str:
    """A diff of at most `DIFF_MAX_CHARS` characters, saying how much more there is."""
    if len(diff) <= m.DIFF_MAX_CHARS:
        return diff
    rest = diff[m.DIFF_MAX_CHARS :]
    return diff[: m.DIFF_MAX_CHARS] + f"\n… {rest.count(chr(10)) + 1} more diff lines ({len(rest):,} characters)\n"
