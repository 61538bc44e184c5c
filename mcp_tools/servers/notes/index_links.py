"""Storing a note's links and keeping their resolution right as notes come and go.

A link is stored with the note it resolves to. Inside a bulk transaction (a reconcile batch) the
links of the notes it stores wait for its commit and are resolved once, against the notes as the
batch leaves them; links stored earlier that the batch's notes may change are resolved again,
once, at the same commit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from mcp_tools.servers.notes.links import Resolver

LINK_INSERT = (
    "INSERT INTO links (source_id, source_path, kind, style, target, target_key, fragment, text, start, end, "
    "resolved_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


LinkRow = tuple[Any, ...]  # (source id, source path, kind, style, target, target key, fragment, text, start, end)


class LinkWriting:
    """The link bookkeeping of `NoteIndex` (typed by the resolver and transaction depth it provides)."""

    resolver: Resolver
    _depth: int  # transaction nesting: above 1 inside a bulk transaction

    def _init_links(self) -> None:
        # names and paths whose links a bulk transaction re-resolves once, when it commits
        self._stale_keys: set[str] = set()
        self._stale_paths: set[str] = set()
        # a bulk transaction's new links by note id, resolved and stored once, when it commits
        self._new_links: dict[int, list[LinkRow]] = {}

    def _keep_links(self, db: sqlite3.Connection, doc_id: int, links: list[LinkRow]) -> None:
        """Store a note's new links now, or at the bulk transaction's commit."""
        if self._depth > 1:  # a bulk transaction: resolved once against its final notes (see _reresolve_links)
            self._new_links[doc_id] = links
        else:
            self._insert_resolved(db, {doc_id: links})

    def _forget_links(self, doc_id: int) -> None:
        """A note's links waiting to be stored, dropped with the note (its stored ones are deleted)."""
        self._new_links.pop(doc_id, None)

    def _links_at_commit(self, db: sqlite3.Connection) -> None:
        if self._stale_keys or self._stale_paths:
            keys, paths = self._stale_keys, self._stale_paths
            self._stale_keys, self._stale_paths = set(), set()
            self._reresolve(db, keys, paths)
        if not self._new_links:
            return
        batch, self._new_links = self._new_links, {}
        self._insert_resolved(db, batch)

    def _links_at_rollback(self) -> None:
        self._stale_keys, self._stale_paths, self._new_links = set(), set(), {}

    def _insert_resolved(self, db: sqlite3.Connection, by_note: dict[int, list[LinkRow]]) -> None:
        """Store links, each resolved against the notes as they are now."""
        rows = [row for links in by_note.values() for row in links]
        paths = self.resolver.resolve_paths([(row[1], row[3], row[4]) for row in rows])
        db.executemany(LINK_INSERT, [(*row, path) for row, path in zip(rows, paths, strict=True)])

    def _reresolve_links(self, db: sqlite3.Connection, keys: Iterable[str], path: str) -> None:
        """Links that may now resolve differently: named like the note, or pointing at it.

        Inside a bulk transaction (a reconcile batch) this waits for the commit and runs once for
        every note the batch touched: a link resolves by the notes its name can mean, so resolving
        it against the batch's final state gives what resolving it after each note would."""
        if self._depth > 1:
            self._stale_keys.update(keys)
            self._stale_paths.add(path)
            return
        self._reresolve(db, set(keys), {path})

    def _reresolve(self, db: sqlite3.Connection, keys: set[str], paths: set[str]) -> None:
        rows: dict[int, tuple[str, str, str, str | None]] = {}
        for column, values in (("target_key", sorted(keys)), ("resolved_path", sorted(paths))):
            for start in range(0, len(values), 500):
                part = values[start : start + 500]
                marks = ",".join("?" * len(part))
                for link_id, *rest in db.execute(
                    f"SELECT id, source_path, style, target, resolved_path FROM links WHERE {column} IN ({marks})",
                    part,
                ):
                    rows[link_id] = tuple(rest)
        ids = sorted(rows)
        answers = self.resolver.resolve_paths([rows[link_id][:3] for link_id in ids])
        updates = [(path, link_id) for link_id, path in zip(ids, answers, strict=True) if path != rows[link_id][3]]
        db.executemany("UPDATE links SET resolved_path = ? WHERE id = ?", updates)
