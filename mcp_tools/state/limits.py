"""Limits every process counts together: tool calls per principal and minute, and the nonces of
requestState answers (each counts once)."""

from __future__ import annotations

import hashlib

from mcp_tools.state.base import StoreBase


class Limits(StoreBase):
    """The counters part of the state store."""

    def spend_calls(self, principal: str, calls: int, limit: int, window_seconds: float = 60.0) -> float | None:
        """Count `calls` tool calls against the principal's `limit` per sliding window, for every
        process sharing the store; None when they fit (and are counted), else the seconds until
        they would (nothing is counted)."""
        now = float(self.clock())
        with self._keyed_transaction("rate_calls\n" + principal) as db:
            db.execute("DELETE FROM rate_calls WHERE ts<=?", (now - window_seconds,))
            count, oldest = db.execute(
                "SELECT COUNT(*), MIN(ts) FROM rate_calls WHERE principal=? AND ts>?", (principal, now - window_seconds)
            ).fetchone()
            if count + calls > limit:
                return float(max(1, int(window_seconds - (now - oldest)) + 1)) if count else window_seconds
            db.execute(
                "INSERT INTO rate_calls (principal, ts) VALUES " + ",".join(["(?, ?)"] * calls),
                [value for _ in range(calls) for value in (principal, now)],
            )
        return None

    # -- requestState nonces ----------------------------------------------------------------

    def use_nonce(self, nonce: str, ttl_seconds: float) -> bool:
        """True the first time any process sees `nonce` within `ttl_seconds`; False for a replay."""
        now = self.clock()
        digest = hashlib.sha256(nonce.encode("utf-8", "surrogatepass")).hexdigest()
        with self._appending() as db:
            db.execute("DELETE FROM request_state_nonces WHERE expires<?", (now,))
            inserted = db.execute(
                "INSERT INTO request_state_nonces (nonce_sha256, expires) VALUES (?, ?) "
                "ON CONFLICT (nonce_sha256) DO NOTHING",
                (digest, now + ttl_seconds),
            ).rowcount
        return inserted == 1
