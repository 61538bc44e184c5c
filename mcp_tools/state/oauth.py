"""What the embedded authorization server keeps: clients, consent requests, codes and tokens.

A narrow interface over the state store (`oauth_*` tables of the SQLite state file, or of the
PostgreSQL database every replica shares), so a client registered, a code or a token issued
through one replica is known to all of them. Codes and tokens are stored only as sha256 hashes:
a copy of the database signs nobody in. A registered client's metadata (which holds its
client_secret, if it has one) is sealed under `[state] secret` when one is set. Taking a code or
rotating a refresh token is one conditional statement, so of two racing uses (on any replica)
exactly one wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_tools.state.sealed import is_sealed, seal, unseal
from mcp_tools.state.store import StateStore

logger = logging.getLogger("mcp_tools.oauth")


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class OAuthStore:
    def __init__(self, state: StateStore, key: bytes | None = None, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.key = key  # seals registered clients; None keeps them as JSON (a SQLite state without a secret)
        self.clock = clock

    def close(self) -> None:
        """The state store belongs to the app, which closes it."""

    # -- clients ---------------------------------------------------------------------------------

    def _seal(self, info: dict[str, Any]) -> str:
        return json.dumps(seal(info, self.key) if self.key is not None else info)

    def _open(self, stored: str) -> dict[str, Any] | None:
        """A stored client's metadata; None when it is sealed under a key this server lacks."""
        data = json.loads(stored)
        if not is_sealed(data):
            return dict(data)
        if self.key is None:
            return None
        try:
            return unseal(data, self.key)
        except ValueError:
            logger.warning("a registered OAuth client does not open with this [state] secret; it is ignored")
            return None

    def put_client(self, client_id: str, info: dict[str, Any]) -> None:
        with self.state.reading() as db:  # one statement: atomic on its own
            db.execute(
                "INSERT INTO oauth_clients (client_id, info, created) VALUES (?, ?, ?) "
                "ON CONFLICT (client_id) DO UPDATE SET info=excluded.info, created=excluded.created",
                (client_id, self._seal(info), self.clock()),
            )

    def add_client(self, client_id: str, info: dict[str, Any], most: int, unconsented_seconds: float) -> int:
        """Registers a client in a table of at most `most`: registrations that never completed a
        consent in `unconsented_seconds` go, then, when it is full, the oldest that holds no
        live token (never-consented ones first). How many were evicted; LookupError when every
        registered client holds tokens."""
        now = self.clock()
        with self.state.transaction() as db:
            db.execute("DELETE FROM oauth_clients WHERE consented IS NULL AND created<?", (now - unconsented_seconds,))
            count = int(db.execute("SELECT COUNT(*) FROM oauth_clients").fetchone()[0])
            evicted = []
            if count >= most:
                evicted = [
                    row[0]
                    for row in db.execute(
                        "SELECT client_id FROM oauth_clients WHERE NOT EXISTS (SELECT 1 FROM oauth_grants "
                        "WHERE oauth_grants.client_id=oauth_clients.client_id AND kind<>'code' "
                        "AND revoked IS NULL AND expires>?) "
                        "ORDER BY CASE WHEN consented IS NULL THEN 0 ELSE 1 END, created LIMIT ?",
                        (now, count - most + 1),
                    ).fetchall()
                ]
                if count - len(evicted) >= most:
                    raise LookupError("every registered client holds tokens")
                for victim in evicted:
                    db.execute("DELETE FROM oauth_clients WHERE client_id=?", (victim,))
                    db.execute("DELETE FROM oauth_requests WHERE client_id=?", (victim,))
            db.execute(
                "INSERT INTO oauth_clients (client_id, info, created) VALUES (?, ?, ?)",
                (client_id, self._seal(info), now),
            )
        return len(evicted)

    def get_client(self, client_id: str, unconsented_seconds: float | None = None) -> dict[str, Any] | None:
        """A registered client; with `unconsented_seconds`, None for a registration that never
        completed a consent and is older than that."""
        since = -1.0 if unconsented_seconds is None else self.clock() - unconsented_seconds
        with self.state.reading() as db:
            row = db.execute(
                "SELECT info FROM oauth_clients WHERE client_id=? AND (consented IS NOT NULL OR created>=?)",
                (client_id, since),
            ).fetchone()
        return None if row is None else self._open(row[0])

    def mark_consented(self, client_id: str) -> None:
        with self.state.reading() as db:
            db.execute(
                "UPDATE oauth_clients SET consented=? WHERE client_id=? AND consented IS NULL",
                (self.clock(), client_id),
            )

    def has_consented(self, client_id: str) -> bool:
        """Whether the person ever let this client in: a registration marked so, or (a client
        named by its metadata document) a code or token it holds."""
        with self.state.reading() as db:
            row = db.execute(
                "SELECT 1 FROM oauth_clients WHERE client_id=? AND consented IS NOT NULL "
                "UNION ALL SELECT 1 FROM oauth_grants WHERE client_id=? AND revoked IS NULL AND expires>? LIMIT 1",
                (client_id, client_id, self.clock()),
            ).fetchone()
        return row is not None

    def count_clients(self) -> int:
        with self.state.reading() as db:
            return int(db.execute("SELECT COUNT(*) FROM oauth_clients").fetchone()[0])

    def clients_in_use(self) -> list[tuple[str, dict[str, Any] | None]]:
        """Registered clients the person consented to and clients holding live tokens, with what
        they registered (a registration nobody consented to signed nobody in: it is not listed)."""
        now = self.clock()
        with self.state.reading() as db:
            consented = db.execute("SELECT client_id, info FROM oauth_clients WHERE consented IS NOT NULL")
            registered = {row[0]: row[1] for row in consented.fetchall()}
            holding = [
                row[0]
                for row in db.execute(
                    "SELECT DISTINCT client_id FROM oauth_grants WHERE kind<>'code' AND revoked IS NULL AND expires>?",
                    (now,),
                ).fetchall()
            ]
        ids = list(dict.fromkeys([*registered, *holding]))
        return [
            (client_id, self._open(registered[client_id]) if client_id in registered else None) for client_id in ids
        ]

    def forget_client(self, client_id: str) -> None:
        """The client is gone and every token it holds stops working."""
        now = self.clock()
        with self.state.transaction() as db:
            db.execute("DELETE FROM oauth_clients WHERE client_id=?", (client_id,))
            db.execute("UPDATE oauth_grants SET revoked=? WHERE client_id=? AND revoked IS NULL", (now, client_id))

    # -- consent requests --------------------------------------------------------------------------

    def put_request(
        self, request_id: str, data: dict[str, Any], ttl_seconds: float, most: int = 500, most_per_client: int = 10
    ) -> None:
        """Keeps a consent request; beyond `most_per_client` waiting for its client, or `most` in
        all, the oldest waiting go (an expired one is gone already)."""
        now = self.clock()
        client_id = str(data["client_id"])
        with self.state.transaction() as db:
            db.execute("DELETE FROM oauth_requests WHERE expires<?", (now,))
            for where, params, keep in (
                ("WHERE client_id=?", (client_id,), most_per_client),
                ("", (), most),
            ):
                count = int(db.execute(f"SELECT COUNT(*) FROM oauth_requests {where}", params).fetchone()[0])
                if count >= keep:
                    db.execute(
                        "DELETE FROM oauth_requests WHERE id_sha256 IN "
                        f"(SELECT id_sha256 FROM oauth_requests {where} ORDER BY expires LIMIT ?)",
                        (*params, count - keep + 1),
                    )
            db.execute(
                "INSERT INTO oauth_requests (id_sha256, data, expires, client_id) VALUES (?, ?, ?, ?)",
                (digest(request_id), json.dumps(data), now + ttl_seconds, client_id),
            )

    def get_request(self, request_id: str) -> dict[str, Any] | None:
        with self.state.reading() as db:
            row = db.execute(
                "SELECT data FROM oauth_requests WHERE id_sha256=? AND expires>?", (digest(request_id), self.clock())
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def take_request(self, request_id: str) -> dict[str, Any] | None:
        """The request, once: answering it twice (on any replica) is not possible."""
        with self.state.reading() as db:
            row = db.execute(
                "DELETE FROM oauth_requests WHERE id_sha256=? AND expires>? RETURNING data",
                (digest(request_id), self.clock()),
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    # -- codes and tokens --------------------------------------------------------------------------

    def put_grant(
        self, secret: str, kind: str, client_id: str, family: str, data: dict[str, Any], ttl_seconds: float
    ) -> None:
        with self.state.reading() as db:
            if kind == "code":  # once a consent: what expired can no longer be used, nor tell anything
                db.execute("DELETE FROM oauth_grants WHERE expires<?", (self.clock(),))
            db.execute(
                "INSERT INTO oauth_grants (sha256, kind, client_id, family, data, expires) VALUES (?, ?, ?, ?, ?, ?)",
                (digest(secret), kind, client_id, family, json.dumps(data), self.clock() + ttl_seconds),
            )

    def get_grant(self, secret: str, kind: str) -> tuple[dict[str, Any], str, bool] | None:
        """(data, family, used) of a live grant; None when unknown, expired or revoked."""
        with self.state.reading() as db:
            row = db.execute(
                "SELECT data, family, used FROM oauth_grants "
                "WHERE sha256=? AND kind=? AND expires>? AND revoked IS NULL",
                (digest(secret), kind, self.clock()),
            ).fetchone()
        return None if row is None else (dict(json.loads(row[0])), str(row[1]), row[2] is not None)

    def use_grant(self, secret: str, kind: str) -> bool:
        """Marks a live, unused grant used; True for exactly one caller, on any replica."""
        now = self.clock()
        with self.state.reading() as db:
            changed = db.execute(
                "UPDATE oauth_grants SET used=? "
                "WHERE sha256=? AND kind=? AND used IS NULL AND revoked IS NULL AND expires>?",
                (now, digest(secret), kind, now),
            ).rowcount
        return changed == 1

    def family_of(self, secret: str) -> str | None:
        with self.state.reading() as db:
            row = db.execute("SELECT family FROM oauth_grants WHERE sha256=?", (digest(secret),)).fetchone()
        return None if row is None else str(row[0])

    def revoke_family(self, family: str) -> None:
        with self.state.reading() as db:
            db.execute("UPDATE oauth_grants SET revoked=? WHERE family=? AND revoked IS NULL", (self.clock(), family))

    # -- a file from before the state store held these ------------------------------------------

    def import_file(self, path: Path) -> int:
        """Move the clients, requests and grants of an `oauth.sqlite3` of an older version into the
        state store (rows already there win), then rename the file so this happens once; how many
        rows were copied. Clients registered and tokens issued before the upgrade keep working."""
        if not path.exists():
            return 0
        try:
            copied = self._copy_from(path)
        except sqlite3.Error as exc:  # an unreadable file: its clients register again
            logger.warning("%s could not be read (%s); its clients must sign in again", path.name, exc)
            return 0
        try:
            path.rename(path.with_name(path.name + ".imported"))
        except OSError as exc:  # copied again at the next start, changing nothing
            logger.warning("%s was copied but could not be renamed: %s", path.name, exc)
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(OSError):
                path.with_name(path.name + suffix).unlink()
        logger.info("moved %d rows of %s into the state store", copied, path.name)
        return copied

    def _copy_from(self, path: Path) -> int:
        copied = 0
        with contextlib.closing(sqlite3.connect(path, timeout=10)) as old, self.state.transaction() as db:
            tables = {row[0] for row in old.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "clients" in tables:
                for client_id, info, created in old.execute("SELECT client_id, info, created FROM clients"):
                    opened = self._open(info)
                    if opened is None:
                        continue
                    copied += db.execute(
                        "INSERT INTO oauth_clients (client_id, info, created) VALUES (?, ?, ?) "
                        "ON CONFLICT (client_id) DO NOTHING",
                        (client_id, self._seal(opened), created),
                    ).rowcount
            if "requests" in tables:
                for row in old.execute("SELECT id_sha256, data, expires FROM requests"):
                    copied += db.execute(
                        "INSERT INTO oauth_requests (id_sha256, data, expires) VALUES (?, ?, ?) "
                        "ON CONFLICT (id_sha256) DO NOTHING",
                        row,
                    ).rowcount
            if "grants" in tables:
                for row in old.execute(
                    "SELECT sha256, kind, client_id, family, data, expires, used, revoked FROM grants"
                ):
                    copied += db.execute(
                        "INSERT INTO oauth_grants (sha256, kind, client_id, family, data, expires, used, revoked) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
                        row,
                    ).rowcount
            db.execute(  # a client that holds tokens was consented to
                "UPDATE oauth_clients SET consented=created WHERE consented IS NULL "
                "AND client_id IN (SELECT client_id FROM oauth_grants)"
            )
        return copied
