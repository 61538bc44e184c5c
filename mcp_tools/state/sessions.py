"""The approvals page's and the approval cards' sign-ins: one-time login links, signed-in
browsers, and the tickets of the cards shown in MCP Apps hosts. Only hashes are stored."""

from __future__ import annotations

import hmac

from mcp_tools.state.approvals import Approval, approval_of_row
from mcp_tools.state.base import Connection, StoreBase
from mcp_tools.state.storable import storable_text

MAX_LIVE_TICKETS = 20  # approval cards issued for one approval that still work


class TicketRefused(Exception):
    """An approval card's ticket that opens nothing; the message says why, without the ticket."""


class Sessions(StoreBase):
    """Tickets, page logins and page sessions: the sessions part of the state store."""

    def issue_ticket(self, approval: Approval, ticket_sha256: str, ttl_seconds: float) -> None:
        """Bind a new ticket (by its hash) to one pending approval, its principal, tool and arguments.

        Each card shown for the approval (the model may call again before the person answers)
        has its own ticket; any of them answers it, once. The oldest beyond `MAX_LIVE_TICKETS` go.
        """
        now = self.clock()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO approval_tickets VALUES (?,?,?,?,?,?,?,NULL)",
                (
                    ticket_sha256,
                    approval.id,
                    approval.principal,
                    approval.tool,
                    approval.args_sha256,
                    now,
                    min(approval.expires, now + ttl_seconds),
                ),
            )
            db.execute(
                "DELETE FROM approval_tickets WHERE approval_id=? AND ticket_sha256 NOT IN (SELECT ticket_sha256 "
                "FROM approval_tickets WHERE approval_id=? ORDER BY created DESC LIMIT ?)",
                (approval.id, approval.id, MAX_LIVE_TICKETS),
            )
            db.execute("DELETE FROM approval_tickets WHERE expires<?", (now - 86400,))

    def check_ticket(
        self, approval_id: str, ticket_sha256: str, principal: str, *, use: bool, max_failures: int
    ) -> Approval:
        """The pending approval a presented ticket opens; raises `TicketRefused` saying why not.

        One transaction: the hash is compared in constant time with each of the approval's
        tickets, a wrong one counts against the approval (after `max_failures` no ticket opens
        it), and with `use` every ticket of the approval is spent.
        """
        now = self.clock()
        with self._transaction() as db:
            refused, approval = self._open_ticket(db, approval_id, ticket_sha256, principal, now, max_failures)
            if refused is None and use:
                db.execute(
                    "UPDATE approval_tickets SET used=? WHERE approval_id=? AND used IS NULL", (now, approval_id)
                )
        if refused is not None or approval is None:  # raised after the commit, so a failure stays counted
            raise TicketRefused(refused)
        return approval

    def _open_ticket(
        self, db: Connection, approval_id: str, ticket_sha256: str, principal: str, now: float, limit: int
    ) -> tuple[str | None, Approval | None]:
        ticket_sha256, principal = storable_text(ticket_sha256), storable_text(principal)  # as stored
        failed = db.execute("SELECT failures FROM approval_ticket_failures WHERE approval_id=?", (approval_id,))
        failures = (failed.fetchone() or (0,))[0]
        if failures >= limit:
            return "too many wrong tickets for this approval; answer it on another channel", None
        rows = db.execute(
            "SELECT ticket_sha256, principal, tool, args_sha256, expires, used FROM approval_tickets "
            "WHERE approval_id=?",
            (approval_id,),
        ).fetchall()
        if not rows:
            return "no approval card was issued for this approval", None
        match = None
        for row in rows:  # every ticket is compared, so timing says nothing about which one matched
            if hmac.compare_digest(row[0].encode(), ticket_sha256.encode()):
                match = row
        if match is None or match[1] != principal:
            db.execute(
                "INSERT INTO approval_ticket_failures VALUES (?, 1) "
                "ON CONFLICT (approval_id) DO UPDATE SET failures=approval_ticket_failures.failures+1",
                (approval_id,),
            )
            return "the ticket does not match this approval", None
        _, _, tool, args_sha256, expires, used = match
        if used is not None:
            return "the ticket was used already", None
        if now >= expires:
            return "the ticket has expired", None
        found = db.execute("SELECT * FROM approvals WHERE id=?", (approval_id,)).fetchone()
        approval = approval_of_row(found) if found is not None else None
        if approval is None or approval.tool != tool or approval.args_sha256 != args_sha256:
            return "the ticket does not match this approval", None
        status = approval.effective_status(now)
        if status != "pending":
            return f"the approval is {status}, no longer pending", None
        return None, approval

    def add_page_login(self, token_sha256: str, ttl_seconds: float) -> None:
        """A one-time login for the approvals page; only the token's hash is stored."""
        now = self.clock()
        with self._transaction() as db:
            db.execute("DELETE FROM page_logins WHERE expires<?", (now,))
            db.execute("INSERT INTO page_logins VALUES (?, ?, NULL)", (token_sha256, now + ttl_seconds))

    def use_page_login(self, token_sha256: str) -> bool:
        """True once for an unexpired login token; never again."""
        now = self.clock()
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE page_logins SET used=? WHERE token_sha256=? AND used IS NULL AND expires>?",
                    (now, token_sha256, now),
                ).rowcount
                == 1
            )

    def add_page_session(self, cookie_sha256: str, ttl_seconds: float, principal: str | None = None) -> float:
        """A signed-in browser (only its cookie's hash is stored), of one principal or (None) the
        owner; when it expires."""
        now = self.clock()
        with self._appending() as db:
            db.execute("DELETE FROM page_sessions WHERE expires<=?", (now,))
            db.execute(
                "INSERT INTO page_sessions (cookie_sha256, expires, principal) VALUES (?, ?, ?)",
                (cookie_sha256, now + ttl_seconds, principal),
            )
        return float(now + ttl_seconds)

    def page_session(self, cookie_sha256: str) -> tuple[float, str | None] | None:
        """`(expires, principal)` of the signed-in browser's session; None when it ended or never was."""
        with self._reading() as db:
            row = db.execute(
                "SELECT expires, principal FROM page_sessions WHERE cookie_sha256=? AND expires>?",
                (cookie_sha256, self.clock()),
            ).fetchone()
        return None if row is None else (float(row[0]), row[1])

    def end_page_session(self, cookie_sha256: str) -> None:
        with self._appending() as db:
            db.execute("DELETE FROM page_sessions WHERE cookie_sha256=?", (cookie_sha256,))
