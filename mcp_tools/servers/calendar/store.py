"""Which event UIDs the assistant created: the basis of the calendar's read permission."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path


class CreatedEvents:
    """A tiny SQLite table of UIDs; a connection per call keeps it safe across threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=10)
        if not self._ready:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS created_events (uid TEXT PRIMARY KEY, created_at TEXT NOT NULL)"
            )
            connection.commit()
            self._ready = True
        return connection

    def add(self, uid: str) -> None:
        now = dt.datetime.now(dt.UTC).isoformat()
        with closing(self._connect()) as connection, connection:
            connection.execute("INSERT OR IGNORE INTO created_events (uid, created_at) VALUES (?, ?)", (uid, now))

    def remove(self, uid: str) -> None:
        with closing(self._connect()) as connection, connection:
            connection.execute("DELETE FROM created_events WHERE uid = ?", (uid,))

    def known(self, uids: Iterable[str]) -> set[str]:
        """The subset of `uids` the assistant created."""
        wanted = sorted(set(uids))
        if not wanted:
            return set()
        found: set[str] = set()
        with closing(self._connect()) as connection:
            for offset in range(0, len(wanted), 500):
                chunk = wanted[offset : offset + 500]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(f"SELECT uid FROM created_events WHERE uid IN ({marks})", chunk)
                found.update(row[0] for row in rows)
        return found
