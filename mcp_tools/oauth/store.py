"""What the embedded authorization server keeps: clients, consent requests, codes and tokens.

A narrow interface over one SQLite file (`<state_dir>/oauth.sqlite3`, mode 0600) so it can move
behind a shared store later. Codes and tokens are stored only as sha256 hashes: a copy of the
file signs nobody in. Taking a code or rotating a refresh token is one conditional statement,
so of two racing uses exactly one wins.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS clients (
    client_id TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS requests (
    id_sha256 TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS grants (
    sha256 TEXT PRIMARY KEY,
    kind TEXT NOT NULL,          -- code, access, refresh
    client_id TEXT NOT NULL,
    family TEXT NOT NULL,        -- every token descended from one consent
    data TEXT NOT NULL,
    expires REAL NOT NULL,
    used REAL,                   -- a code exchanged, a refresh token rotated
    revoked REAL
);
CREATE INDEX IF NOT EXISTS grants_family ON grants (family);
"""


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class OAuthStore:
    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    # -- clients ---------------------------------------------------------------------------------

    def put_client(self, client_id: str, info: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO clients VALUES (?, ?, ?)", (client_id, json.dumps(info), self.clock())
            )

    def get_client(self, client_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT info FROM clients WHERE client_id=?", (client_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def count_clients(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM clients").fetchone()[0])

    def clients_in_use(self) -> list[tuple[str, dict[str, Any] | None]]:
        """Registered clients and clients holding live tokens, with what they registered."""
        now = self.clock()
        with self._lock:
            registered = dict(self._db.execute("SELECT client_id, info FROM clients").fetchall())
            holding = [
                row[0]
                for row in self._db.execute(
                    "SELECT DISTINCT client_id FROM grants WHERE kind!='code' AND revoked IS NULL AND expires>?", (now,)
                ).fetchall()
            ]
        ids = list(dict.fromkeys([*registered, *holding]))
        return [
            (client_id, json.loads(registered[client_id]) if client_id in registered else None) for client_id in ids
        ]

    def forget_client(self, client_id: str) -> None:
        """The client is gone and every token it holds stops working."""
        now = self.clock()
        with self._lock:
            self._db.execute("DELETE FROM clients WHERE client_id=?", (client_id,))
            self._db.execute("UPDATE grants SET revoked=? WHERE client_id=? AND revoked IS NULL", (now, client_id))

    # -- consent requests --------------------------------------------------------------------------

    def put_request(self, request_id: str, data: dict[str, Any], ttl_seconds: float) -> None:
        now = self.clock()
        with self._lock:
            self._db.execute("DELETE FROM requests WHERE expires<?", (now,))
            self._db.execute(
                "INSERT INTO requests VALUES (?, ?, ?)", (digest(request_id), json.dumps(data), now + ttl_seconds)
            )

    def get_request(self, request_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT data FROM requests WHERE id_sha256=? AND expires>?", (digest(request_id), self.clock())
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def take_request(self, request_id: str) -> dict[str, Any] | None:
        """The request, once: answering it twice is not possible."""
        with self._lock:
            row = self._db.execute(
                "DELETE FROM requests WHERE id_sha256=? AND expires>? RETURNING data",
                (digest(request_id), self.clock()),
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    # -- codes and tokens --------------------------------------------------------------------------

    def put_grant(
        self, secret: str, kind: str, client_id: str, family: str, data: dict[str, Any], ttl_seconds: float
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO grants VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)",
                (digest(secret), kind, client_id, family, json.dumps(data), self.clock() + ttl_seconds),
            )

    def get_grant(self, secret: str, kind: str) -> tuple[dict[str, Any], str, bool] | None:
        """(data, family, used) of a live grant; None when unknown, expired or revoked."""
        with self._lock:
            row = self._db.execute(
                "SELECT data, family, used FROM grants WHERE sha256=? AND kind=? AND expires>? AND revoked IS NULL",
                (digest(secret), kind, self.clock()),
            ).fetchone()
        return None if row is None else (dict(json.loads(row[0])), str(row[1]), row[2] is not None)

    def use_grant(self, secret: str, kind: str) -> bool:
        """Marks a live, unused grant used; True for exactly one caller."""
        now = self.clock()
        with self._lock:
            changed = self._db.execute(
                "UPDATE grants SET used=? WHERE sha256=? AND kind=? AND used IS NULL AND revoked IS NULL AND expires>?",
                (now, digest(secret), kind, now),
            ).rowcount
        return changed == 1

    def family_of(self, secret: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT family FROM grants WHERE sha256=?", (digest(secret),)).fetchone()
        return None if row is None else str(row[0])

    def revoke_family(self, family: str) -> None:
        with self._lock:
            self._db.execute("UPDATE grants SET revoked=? WHERE family=? AND revoked IS NULL", (self.clock(), family))
