"""The Google accounts each principal signed in: one token per (principal, label), shared by every process.

The store keeps the text it is given; `SealedTokens` seals each token under `[state] secret`
before it is stored (a PostgreSQL state always has one; a SQLite state without one keeps the token
as JSON in its mode-0600 file, as the token files did). `version` grows with every write, so a
process that holds an older copy of a token (a refreshed access token, a new sign-in on another
replica) loads the new one.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from mcp_tools.state.base import StoreBase
from mcp_tools.state.sealed import is_sealed, seal, unseal

OWNER = ""  # the principal of the person who runs the server: stdio, bearer tokens, no [http.oauth]
logger = logging.getLogger("mcp_tools.google")


class GoogleTokens(StoreBase):
    """The Google-token part of the state store (the stored text, sealed or not, and its version)."""

    def google_token(self, principal: str, label: str) -> tuple[str, int] | None:
        with self._reading() as db:
            row = db.execute(
                "SELECT data, version FROM google_tokens WHERE principal=? AND label=?", (principal, label)
            ).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def google_token_version(self, principal: str, label: str) -> int | None:
        with self._reading() as db:
            row = db.execute(
                "SELECT version FROM google_tokens WHERE principal=? AND label=?", (principal, label)
            ).fetchone()
        return None if row is None else int(row[0])

    def put_google_token(self, principal: str, label: str, data: str, *, only_new: bool = False) -> int | None:
        """Store a token (one statement, atomic on its own); its new version. With `only_new`, a
        token already there wins and None says nothing was written."""
        now = self.clock()
        conflict = (
            "DO NOTHING"
            if only_new
            else "DO UPDATE SET data=excluded.data, version=google_tokens.version+1, updated=excluded.updated"
        )
        with self._reading() as db:
            row = db.execute(
                "INSERT INTO google_tokens (principal, label, data, version, updated) VALUES (?, ?, ?, 1, ?) "
                f"ON CONFLICT (principal, label) {conflict} RETURNING version",
                (principal, label, data, now),
            ).fetchone()
        return None if row is None else int(row[0])

    def google_labels(self, principal: str) -> list[str]:
        with self._reading() as db:
            rows = db.execute("SELECT label FROM google_tokens WHERE principal=? ORDER BY label", (principal,))
            return [str(row[0]) for row in rows.fetchall()]

    def forget_google_token(self, principal: str, label: str) -> bool:
        with self._reading() as db:
            changed = db.execute("DELETE FROM google_tokens WHERE principal=? AND label=?", (principal, label))
            return changed.rowcount == 1

    def begin_google_sign_in(
        self, state_sha256: str, principal: str, label: str, data: str, ttl_seconds: float, most: int = 5
    ) -> None:
        """Keep a sign-in in progress; beyond `most` waiting for one principal, its oldest go."""
        now = self.clock()
        with self._transaction() as db:
            db.execute("DELETE FROM google_sign_ins WHERE expires<?", (now,))
            count = int(
                db.execute("SELECT COUNT(*) FROM google_sign_ins WHERE principal=?", (principal,)).fetchone()[0]
            )
            if count >= most:
                db.execute(
                    "DELETE FROM google_sign_ins WHERE state_sha256 IN (SELECT state_sha256 FROM google_sign_ins "
                    "WHERE principal=? ORDER BY expires LIMIT ?)",
                    (principal, count - most + 1),
                )
            db.execute(
                "INSERT INTO google_sign_ins (state_sha256, principal, label, data, expires) VALUES (?, ?, ?, ?, ?)",
                (state_sha256, principal, label, data, now + ttl_seconds),
            )

    def google_sign_ins_of(self, principal: str) -> list[tuple[str, str, float]]:
        """(label, data, expires) of `principal`'s live sign-ins, the newest first; nothing is used up."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT label, data, expires FROM google_sign_ins WHERE principal=? AND expires>? "
                "ORDER BY expires DESC",
                (principal, self.clock()),
            ).fetchall()
        return [(str(row[0]), str(row[1]), float(row[2])) for row in rows]

    def take_google_sign_in(self, state_sha256: str) -> tuple[str, str, str] | None:
        """(principal, label, data) of a live sign-in, once: a second use (on any replica) finds nothing."""
        with self._reading() as db:
            row = db.execute(
                "DELETE FROM google_sign_ins WHERE state_sha256=? AND expires>? RETURNING principal, label, data",
                (state_sha256, self.clock()),
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]), str(row[2]))


class SealedTokens:
    """Tokens as dicts: sealed under `key` (from `[state] secret`) on the way in, opened on the way out."""

    def __init__(self, store: GoogleTokens, key: bytes | None) -> None:
        self.store = store
        self.key = key

    def sealed_text(self, data: dict[str, Any]) -> str:
        return self._sealed(data)

    def _sealed(self, data: dict[str, Any]) -> str:
        return json.dumps(seal(data, self.key) if self.key is not None else data)

    def open(self, text: str) -> dict[str, Any]:
        """A stored token's contents; ValueError when it is sealed under another secret or none here."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("the stored Google token is not an object")
        if not is_sealed(data):
            return data
        if self.key is None:
            raise ValueError(
                "the stored Google token is encrypted: set the same [state] secret as the one that wrote it"
            )
        return unseal(data, self.key)

    def read(self, principal: str, label: str) -> tuple[dict[str, Any], int] | None:
        """(contents, version), or None when the account is not signed in; ValueError when it does not open."""
        found = self.store.google_token(principal, label)
        return None if found is None else (self.open(found[0]), found[1])

    def write(self, principal: str, label: str, data: dict[str, Any]) -> int:
        version = self.store.put_google_token(principal, label, self._sealed(data))
        assert version is not None
        return version

    def adopt(self, principal: str, label: str, path: Path) -> bool:
        """Move a token file of an older version into the store, then delete it: it is read once.
        A file still there is newer than what the store holds (the store deleted what it took
        before), so it replaces the stored token. Whether the file was there."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except (OSError, ValueError) as error:
            logger.warning(
                "the Google token file %s cannot be read (%s); it is left where it is", path, type(error).__name__
            )
            return False
        if not isinstance(data, dict):
            logger.warning("the Google token file %s is not a token; it is left where it is", path)
            return False
        text = json.dumps(data if is_sealed(data) or self.key is None else seal(data, self.key))
        self.store.put_google_token(principal, label, text)
        logger.info("moved the Google account %r from %s into the state store", label, path.name)
        try:
            path.unlink()
        except OSError as error:
            logger.warning("%s was copied into the state store but cannot be deleted: %s", path, error)
        return True
