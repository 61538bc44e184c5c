"""Storing a note's links and keeping their resolution right as notes come and go.

A link is stored with the note it resolves to. Inside a bulk transaction (a reconcile batch) the
links of the notes it stores wait for its commit and are resolved once, against the notes as the
batch leaves them. A whole reconcile can wait longer still (`links_deferred`): the links of the
notes it adds are stored once, when it ends, instead of being stored at one batch's commit and
resolved again at every later batch that adds a note they name.

Links held in memory die with their process. While it holds them, a reconcile keeps a mark in
the index (the first note id whose links it holds) and an exclusive lock on a file beside it.
A mark nobody holds the lock for was left by a process that died: `recover_lost_links` has
those notes indexed again. One process at a time holds links; another reconcile, meanwhile,
stores its own at each commit. Where the platform has no `flock` (Windows), none are held.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from mcp_tools.servers.notes.links import Resolver
from mcp_tools.util.locks import WaitAwareLock

LINK_INSERT = (
    "INSERT INTO links (source_id, source_path, kind, style, target, target_key, fragment, text, start, end, "
    "resolved_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

# meta: while a reconcile defers links, the first note id whose links it holds
DEFERRED_FROM_KEY = "links_deferred_from"
HOLDER_SUFFIX = ".links-held"  # the file beside the index whose lock the holder keeps

LinkRow = tuple[Any, ...]  # (source id, source path, kind, style, target, target key, fragment, text, start, end)


class LinkWriting:
    """The link bookkeeping of `NoteIndex` (typed by the connection, lock and resolver it provides)."""

    path: str  # the index database's file
    db: sqlite3.Connection
    lock: WaitAwareLock
    resolver: Resolver
    _depth: int  # transaction nesting: above 1 inside a bulk transaction

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _init_links(self) -> None:
        # names and paths whose links a bulk transaction re-resolves once, when it commits
        self._stale_keys: set[str] = set()
        self._stale_paths: set[str] = set()
        # a bulk transaction's new links by note id, resolved and stored once, when it commits
        self._new_links: dict[int, list[LinkRow]] = {}
        # links held back by `links_deferred`: of notes with ids from `_deferred_from` on
        self._deferred: dict[int, list[LinkRow]] = {}
        self._deferred_from: int | None = None

    def recover_lost_links(self) -> bool:
        """Links a dead process held: have its notes indexed again (their text is needed).

        True when there were some; the notes look changed to the next reconcile."""
        with self.lock:  # the common case, no mark: no write transaction
            if self.db.execute("SELECT 1 FROM meta WHERE key = ?", (DEFERRED_FROM_KEY,)).fetchone() is None:
                return False
        with self.transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (DEFERRED_FROM_KEY,)).fetchone()
            if row is None:
                return False
            holder = _hold(self.path + HOLDER_SUFFIX)
            if holder is None:  # its process is alive and still holds them
                return False
            try:
                db.execute("UPDATE documents SET mtime_ns = -1, hash = '' WHERE id >= ?", (int(row[0]),))
                db.execute("DELETE FROM meta WHERE key = ?", (DEFERRED_FROM_KEY,))
            finally:
                os.close(holder)
            return True

    @contextmanager
    def links_deferred(self) -> Iterator[None]:
        """Hold back the links of the notes added inside, and store them once, when it ends."""
        holder = _hold(self.path + HOLDER_SUFFIX)
        if holder is None:  # another process holds links now (or no flock here): store at each commit
            yield
            return
        try:
            with self.transaction() as db:
                first = int(db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM documents").fetchone()[0])
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (DEFERRED_FROM_KEY, str(first)))
            self._deferred_from = first
            try:
                yield
            finally:
                self._deferred_from = None
                with self.transaction() as db:
                    if self._deferred:
                        self._insert_resolved(db, self._deferred)
                        self._deferred = {}
                    db.execute("DELETE FROM meta WHERE key = ?", (DEFERRED_FROM_KEY,))
        finally:
            os.close(holder)  # the lock goes with it

    def _keep_links(self, db: sqlite3.Connection, doc_id: int, path: str, links: list[LinkRow]) -> None:
        """Store a note's new links now, or at the bulk transaction's commit."""
        if self._depth > 1:  # a bulk transaction: resolved once against its final notes (see _reresolve_links)
            self._new_links[doc_id] = links
        else:
            self._insert_resolved(db, {doc_id: links})

    def _forget_links(self, doc_id: int) -> None:
        """A note's links waiting to be stored, dropped with the note (its stored ones are deleted)."""
        self._new_links.pop(doc_id, None)
        self._deferred.pop(doc_id, None)

    def _links_at_commit(self, db: sqlite3.Connection) -> None:
        if self._stale_keys or self._stale_paths:
            keys, paths = self._stale_keys, self._stale_paths
            self._stale_keys, self._stale_paths = set(), set()
            self._reresolve(db, keys, paths)
        if not self._new_links:
            return
        batch, self._new_links = self._new_links, {}
        if self._deferred_from is not None:
            held = {doc_id: links for doc_id, links in batch.items() if doc_id >= self._deferred_from}
            self._deferred.update(held)
            batch = {doc_id: links for doc_id, links in batch.items() if doc_id not in held}
        if batch:
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
        updates = []
        for link_id in sorted(rows):
            source, style, target, current = rows[link_id]
            resolved = self.resolver.resolve_target(source, style, target).path
            if resolved != current:
                updates.append((resolved, link_id))
        db.executemany("UPDATE links SET resolved_path = ? WHERE id = ?", updates)


def _hold(path: str) -> int | None:
    """A descriptor holding `path`'s exclusive lock, or None when another holds it or there is no flock."""
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd
