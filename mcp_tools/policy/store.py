"""The policy's state: pending approvals, decisions and their events, the audit log.

`StateStore` is the interface and holds every query; `PolicyStore` keeps it in one SQLite file in
the state dir (the default), `mcp_tools.state.postgres.PostgresStateStore` in a PostgreSQL
database that several replicas share. Several processes share either (a server, and
`mcp-tools approvals approve` run by the person), so every change is one short transaction.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from mcp_tools import metrics
from mcp_tools.state.audit import AuditLog, AuditRow, iso_time
from mcp_tools.state.errors import StateStoreError, StateStoreUnavailable
from mcp_tools.state.spool import SPOOL_FILE, AuditSpool
from mcp_tools.state.storable import storable_params, storable_text

__all__ = ["AuditRow", "StateStoreError", "StateStoreUnavailable", "iso_time"]

ApprovalStatus = Literal["pending", "approved", "denied", "consumed", "expired", "withdrawn"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    args_display TEXT NOT NULL,
    summary TEXT NOT NULL,
    risk TEXT NOT NULL,
    principal TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    status TEXT NOT NULL,
    decided REAL,
    consumed REAL
);
CREATE INDEX IF NOT EXISTS approvals_lookup ON approvals (tool, args_sha256, status);
CREATE INDEX IF NOT EXISTS approvals_open ON approvals (tool, status);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    transport TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    risk TEXT,
    decision TEXT NOT NULL,
    approval_id TEXT,
    duration_ms REAL NOT NULL,
    outcome TEXT NOT NULL,
    answered_by TEXT
);
"""
# Who asked over what and who answered live beside `approvals`, and every change of an approval's
# status leaves a numbered event (written by triggers, so no code path and no process can skip
# it): servers, the page and Telegram follow the events to learn what another process decided.
APPROVAL_EVENTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS approval_meta (
    approval_id TEXT PRIMARY KEY,
    transport TEXT,
    decided_by TEXT,
    client TEXT
);
CREATE TABLE IF NOT EXISTS approval_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS approval_created AFTER INSERT ON approvals BEGIN
    INSERT INTO approval_events (approval_id, status) VALUES (NEW.id, NEW.status);
END;
CREATE TRIGGER IF NOT EXISTS approval_status_changed AFTER UPDATE OF status ON approvals
WHEN NEW.status != OLD.status BEGIN
    INSERT INTO approval_events (approval_id, status) VALUES (NEW.id, NEW.status);
END;
CREATE TABLE IF NOT EXISTS approval_tickets (
    ticket_sha256 TEXT PRIMARY KEY,
    approval_id TEXT NOT NULL,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_sha256 TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL,
    used REAL
);
CREATE INDEX IF NOT EXISTS approval_tickets_of ON approval_tickets (approval_id);
CREATE TABLE IF NOT EXISTS approval_ticket_failures (
    approval_id TEXT PRIMARY KEY,
    failures INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS page_logins (
    token_sha256 TEXT PRIMARY KEY,
    expires REAL NOT NULL,
    used REAL
);
CREATE TABLE IF NOT EXISTS page_sessions (
    cookie_sha256 TEXT PRIMARY KEY,
    expires REAL NOT NULL,
    principal TEXT
);
CREATE TABLE IF NOT EXISTS enabled_tools (
    principal TEXT NOT NULL,
    namespace TEXT NOT NULL DEFAULT '',
    tool TEXT NOT NULL,
    PRIMARY KEY (principal, namespace, tool)
);
CREATE TABLE IF NOT EXISTS request_state_nonces (
    nonce_sha256 TEXT PRIMARY KEY,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS rate_calls (
    principal TEXT NOT NULL,
    ts REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS rate_calls_by_principal ON rate_calls (principal, ts);
CREATE INDEX IF NOT EXISTS rate_calls_ts ON rate_calls (ts);
"""
# The embedded OAuth authorization server's clients, consent requests, codes and tokens
# (`mcp_tools.oauth.store` holds the queries).
OAUTH_SCHEMA = """
CREATE TABLE IF NOT EXISTS oauth_clients (
    client_id TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS oauth_requests (
    id_sha256 TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS oauth_grants (
    sha256 TEXT PRIMARY KEY,
    kind TEXT NOT NULL,          -- code, access, refresh
    client_id TEXT NOT NULL,
    family TEXT NOT NULL,        -- every token descended from one consent
    data TEXT NOT NULL,
    expires REAL NOT NULL,
    used REAL,                   -- a code exchanged, a refresh token rotated
    revoked REAL
);
CREATE INDEX IF NOT EXISTS oauth_grants_family ON oauth_grants (family);
CREATE INDEX IF NOT EXISTS oauth_grants_client ON oauth_grants (client_id);
"""
APPROVED_FOR_CALL = (
    "SELECT {columns} FROM approvals WHERE tool=? AND args_sha256=? AND principal=? AND status='approved' "
    "AND expires>? ORDER BY created LIMIT 1"
)
DECIDED_BY_OF_ROW = "(SELECT decided_by FROM approval_meta WHERE approval_meta.approval_id=approvals.id)"
NOTE_ORIGIN = (
    "INSERT INTO approval_meta (approval_id, transport, client) VALUES (?, ?, ?) "
    "ON CONFLICT (approval_id) DO UPDATE SET transport=excluded.transport, client=excluded.client"
)
PENDING_SAME = "tool=? AND principal=? AND status='pending' AND expires>? AND args_sha256=?"
# The approval a call's principal may use (the oldest) and the newest denial of the same call,
# each with who answered; one read for the two questions every high-risk call asks first.
PRIOR_ANSWERS = (
    f"SELECT * FROM (SELECT approvals.*, {DECIDED_BY_OF_ROW} FROM approvals WHERE tool=? AND args_sha256=? "
    "AND principal=? AND status='approved' AND expires>? ORDER BY created LIMIT 1) AS ready UNION ALL "
    f"SELECT * FROM (SELECT approvals.*, {DECIDED_BY_OF_ROW} FROM approvals WHERE tool=? AND args_sha256=? "
    "AND status='denied' AND expires>? ORDER BY decided DESC LIMIT 1) AS denied"
)
MAX_LIVE_TICKETS = 20  # approval cards issued for one approval that still work
APPROVAL_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


class TicketRefused(Exception):
    """An approval card's ticket that opens nothing; the message says why, without the ticket."""


@dataclass(frozen=True)
class Approval:
    id: str
    tool: str
    args_sha256: str
    args_display: dict[str, Any]
    summary: str
    risk: str
    principal: str
    created: float
    expires: float
    status: ApprovalStatus
    decided: float | None
    consumed: float | None
    # Set on a new request only: an earlier approval of the same principal for the same arguments
    # whose target has changed since (another summary or version), so it no longer covers the call.
    superseded: Approval | None = None
    # Set by `consume_approval`: who answered (`approval_meta.decided_by`), read with the check.
    decided_by: str | None = None

    def effective_status(self, now: float) -> ApprovalStatus:
        if self.status in ("pending", "approved") and now >= self.expires:
            return "expired"
        return self.status

    def as_dict(self, now: float) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "summary": self.summary,
            "arguments": self.args_display,
            "risk": self.risk,
            "principal": self.principal,
            "created": iso_time(self.created),
            "expires": iso_time(self.expires),
            "status": self.effective_status(now),
        }


@dataclass(frozen=True)
class PriorAnswers:
    """What the person already said about one exact call (`StateStore.prior_answers`)."""

    ready_id: str | None  # an approved approval the call's principal may use
    ready_decided_by: str | None
    denial: Approval | None  # the newest unexpired denial, with who gave it


def new_approval_id() -> str:
    return "apr-" + "".join(secrets.choice(APPROVAL_ID_ALPHABET) for _ in range(10))


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Connection(Protocol):
    def execute(self, sql: str, params: Any = (), /) -> Cursor: ...


class StateStore(AuditLog):
    """Approvals and audit rows; safe to share between threads and processes.

    Queries are written once, with `?` placeholders; an implementation supplies connections
    through `_transaction` (writes: one at a time across every process) and `_reading`. The
    cursors of a transaction can be read after it commits: a transaction that reads only then
    is one round trip to a database server.
    """

    clock: Any
    engine: str = "sqlite"

    def close(self) -> None:
        raise NotImplementedError

    def ping(self) -> None:
        """Raise StateStoreUnavailable unless the store answers now (the SQLite file always does)."""

    def listen(self, callback: Any) -> bool:
        """Call `callback()` (from another thread) when another process changes an approval.

        False where the store cannot tell (SQLite): followers then poll."""
        return False

    def _transaction(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def _reading(self) -> contextlib.AbstractContextManager[Connection]:
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        """For the state other modules keep here (the Telegram ledger): one writer at a time."""
        return self._transaction()

    def reading(self) -> contextlib.AbstractContextManager[Connection]:
        return self._reading()

    def _appending(self) -> contextlib.AbstractContextManager[Connection]:
        """For inserts that race with nothing (audit rows): no lock beyond the row's own."""
        return self._reading()

    # -- approvals -------------------------------------------------------------------------

    def request_approval(
        self,
        *,
        tool: str,
        args_sha256: str,
        args_display: dict[str, Any],
        summary: str,
        risk: str,
        principal: str,
        ttl_seconds: float,
        origin: tuple[str, str | None] | None = None,
    ) -> Approval:
        """A pending approval for exactly this call; the principal's unexpired pending one is reused.

        The same read (one round trip) finds an open approval for the same arguments shown but
        another binding (the target changed since): the new one says it supersedes it. `origin`,
        (transport, client), is noted as `note_origin` would, in the same transaction."""
        now = self.clock()
        shown = json.dumps(args_display, ensure_ascii=False)
        approval_id = new_approval_id()
        pending_same = (tool, principal, now, args_sha256)
        # Every statement is written so that none depends on what an earlier one read: a database
        # server gets them, and the COMMIT, in one round trip, and they are read once committed.
        with self._transaction() as db:
            open_ones = db.execute(
                "SELECT * FROM approvals WHERE tool=? AND principal=? AND status IN ('pending','approved') "
                "AND expires>? AND (args_sha256=? OR args_display=?) ORDER BY created DESC LIMIT 8",
                (tool, principal, now, args_sha256, shown),
            )
            reusable = db.execute(
                f"SELECT * FROM approvals WHERE {PENDING_SAME} ORDER BY created DESC LIMIT 1", pending_same
            )
            db.execute(
                "INSERT INTO approvals SELECT ?,?,?,?,?,?,?,?,?,'pending',NULL,NULL "
                f"WHERE NOT EXISTS (SELECT 1 FROM approvals WHERE {PENDING_SAME})",
                (
                    approval_id,
                    tool,
                    args_sha256,
                    shown,
                    summary,
                    risk,
                    principal,
                    now,
                    now + ttl_seconds,
                    *pending_same,
                ),
            )
            if origin is not None:
                db.execute(
                    "INSERT INTO approval_meta (approval_id, transport, client) SELECT id, ?, ? FROM approvals "
                    f"WHERE {PENDING_SAME} ORDER BY created DESC LIMIT 1 ON CONFLICT (approval_id) DO UPDATE "
                    "SET transport=excluded.transport, client=excluded.client",
                    (*origin, *pending_same),
                )
        found = [_approval(row) for row in open_ones.fetchall()]
        superseded = next((a for a in found if a.args_sha256 != args_sha256), None)
        reused = reusable.fetchone()
        if reused is not None:
            return dataclasses.replace(_approval(reused), superseded=superseded)
        # What was written, without reading it back (a round trip to a database server).
        return Approval(
            approval_id,
            tool,
            args_sha256,
            json.loads(shown),
            summary,
            risk,
            principal,
            now,
            now + ttl_seconds,
            "pending",
            None,
            None,
            superseded,
        )

    def prior_answers(self, tool: str, args_sha256: str, principal: str) -> PriorAnswers:
        """What the person already said about this exact call, in one read: the approval its
        principal may use, and the latest unexpired denial."""
        now = self.clock()
        with self._reading() as db:
            rows = db.execute(PRIOR_ANSWERS, (tool, args_sha256, principal, now, tool, args_sha256, now)).fetchall()
        ready = next((row for row in rows if row[9] == "approved"), None)
        denied = next((row for row in rows if row[9] == "denied"), None)
        return PriorAnswers(
            ready_id=None if ready is None else ready[0],
            ready_decided_by=None if ready is None else ready[12],
            denial=None if denied is None else dataclasses.replace(_approval(denied), decided_by=denied[12]),
        )

    def consume_approval(
        self, tool: str, args_sha256: str, principal: str, prior: PriorAnswers | None = None
    ) -> Approval | None:
        """Atomically mark one approved, unexpired approval for this exact call as used.

        Only the principal that asked for it may use it: an approval asked for over HTTP with
        one token is no use to a session holding another. With `prior` (read just before), a call
        that has none takes no further look.
        """
        if prior is None:  # most calls have none: a read, without the write lock
            prior = self.prior_answers(tool, args_sha256, principal)
        if prior.ready_id is None:
            return None
        now = self.clock()
        with self._transaction() as db:  # one statement under the write lock: the check and the use
            used = db.execute(
                "UPDATE approvals SET status='consumed', consumed=? "
                f"WHERE id=({APPROVED_FOR_CALL.format(columns='id')}) AND status='approved' RETURNING *",
                (now, tool, args_sha256, principal, now),
            )
        row = used.fetchone()  # read once committed: the COMMIT goes with the statement
        if row is None:
            return None
        consumed = _approval(row)
        # Who answered cannot change once decided: the check read it, unless a race used that one
        # and this call another.
        decided_by = prior.ready_decided_by if consumed.id == prior.ready_id else self.decided_by(consumed.id)
        return dataclasses.replace(consumed, decided_by=decided_by)

    def decide_approval(self, approval_id: str, approve: bool, ttl_seconds: float) -> Approval:
        """The person's answer; only a pending, unexpired approval can be decided."""
        return self.decide(approval_id, approve, ttl_seconds, decided_by=None)

    def decide(self, approval_id: str, approve: bool, ttl_seconds: float, decided_by: str | None) -> Approval:
        """Like `decide_approval`, recording who answered in the same transaction.

        The write lock makes the check and the update one step across threads and processes:
        when the page, Telegram and the CLI answer at once, exactly one of them wins.
        """
        now = self.clock()
        status = "approved" if approve else "denied"
        with self._transaction() as db:  # the check is the update's own: one round trip with its COMMIT
            changed = db.execute(
                "UPDATE approvals SET status=?, decided=?, expires=CASE WHEN expires>? THEN expires ELSE ? END "
                "WHERE id=? AND status='pending' AND expires>? RETURNING *",
                (status, now, now + ttl_seconds, now + ttl_seconds, approval_id, now),
            )
            if decided_by is not None:
                db.execute(
                    "INSERT INTO approval_meta (approval_id, decided_by) SELECT id, ? FROM approvals "
                    "WHERE id=? AND status=? AND decided=? "
                    "ON CONFLICT (approval_id) DO UPDATE SET decided_by=excluded.decided_by",
                    (decided_by, approval_id, status, now),
                )
        row = changed.fetchone()
        if row is not None:
            return _approval(row)
        current = self.get_approval(approval_id)  # nothing changed: say why
        if current is None:
            raise LookupError(f"no approval with id {approval_id}")
        found = current.effective_status(now)
        raise ValueError(f"approval {approval_id} is {found}; only a pending approval can be decided")

    def consume_approval_id(self, approval_id: str) -> Approval | None:
        """Use one approved, unexpired approval by its id (the call that asked for it waited)."""
        now = self.clock()
        with self._transaction() as db:
            used = db.execute(
                "UPDATE approvals SET status='consumed', consumed=? WHERE id=? AND status='approved' AND expires>? "
                "RETURNING *",
                (now, approval_id, now),
            )
        row = used.fetchone()
        return None if row is None else _approval(row)

    def withdraw_approval(self, approval_id: str) -> bool:
        """The call that asked went away (cancelled): its pending approval can no longer be decided."""
        with self._transaction() as db:
            return (
                db.execute(
                    "UPDATE approvals SET status='withdrawn', decided=? WHERE id=? AND status='pending'",
                    (self.clock(), approval_id),
                ).rowcount
                == 1
            )

    def note_origin(self, approval_id: str, transport: str, client: str | None = None) -> None:
        """Remember over which transport, and from which client, the call that asked came."""
        with self._appending() as db:  # one statement: atomic without the approvals lock
            db.execute(NOTE_ORIGIN, (approval_id, transport, client))

    def decided_by(self, approval_id: str) -> str | None:
        """Who answered an approval (`page`, `cli`, `telegram:@ada (42)`), if that was recorded."""
        return self.approval_meta([approval_id]).get(approval_id, {}).get("decided_by")

    def approval_meta(self, approval_ids: list[str]) -> dict[str, dict[str, str | None]]:
        """`{id: {"transport", "decided_by", "client"}}` for the approvals that have any."""
        if not approval_ids:
            return {}
        marks = ",".join("?" * len(approval_ids))
        with self._reading() as db:
            rows = db.execute(
                f"SELECT approval_id, transport, decided_by, client FROM approval_meta WHERE approval_id IN ({marks})",
                approval_ids,
            ).fetchall()
        return {row[0]: {"transport": row[1], "decided_by": row[2], "client": row[3]} for row in rows}

    def events_since(self, seq: int, limit: int = 200) -> list[tuple[int, str, str]]:
        """`(seq, approval_id, status)` for every status change after `seq`, oldest first."""
        with self._reading() as db:
            return [
                (row[0], row[1], row[2])
                for row in db.execute(
                    "SELECT seq, approval_id, status FROM approval_events WHERE seq>? ORDER BY seq LIMIT ?",
                    (seq, limit),
                ).fetchall()
            ]

    def last_event(self) -> int:
        with self._reading() as db:
            row = db.execute("SELECT MAX(seq) FROM approval_events").fetchone()
        return int(row[0] or 0)

    # -- page logins -----------------------------------------------------------------------

    # -- approval card tickets -------------------------------------------------------------

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
        approval = _approval(found) if found is not None else None
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

    # -- toolsets a principal enabled (dynamic discovery) -----------------------------------

    def enabled_tools(self, principal: str, namespace: str | None = None) -> set[str]:
        """The canonical names the principal enabled (on one mounted namespace's endpoint, if given)."""
        principal, namespace = _principal_and_namespace(principal, namespace)
        with self._reading() as db:
            rows = db.execute(
                "SELECT tool FROM enabled_tools WHERE principal=? AND namespace=?", (principal, namespace)
            ).fetchall()
        return {row[0] for row in rows}

    def enable_tools(self, principal: str, tools: set[str], namespace: str | None = None) -> None:
        """Add to the principal's enabled tools (canonical names); enabling only ever grows the set."""
        principal, namespace = _principal_and_namespace(principal, namespace)
        with self._appending() as db:
            for tool in sorted(tools):
                db.execute(
                    "INSERT INTO enabled_tools (principal, namespace, tool) VALUES (?, ?, ?) "
                    "ON CONFLICT (principal, namespace, tool) DO NOTHING",
                    (principal, namespace, tool),
                )

    # -- calls per minute ---------------------------------------------------------------------

    def _keyed_transaction(self, key: str) -> contextlib.AbstractContextManager[Connection]:
        """A transaction that is the only one holding `key` (SQLite: the only writer at all)."""
        return self._transaction()

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

    def get_approval(self, approval_id: str) -> Approval | None:
        with self._reading() as db:
            row = db.execute("SELECT * FROM approvals WHERE id=?", (approval_id,)).fetchone()
        return None if row is None else _approval(row)

    def count_pending(self, principal: str | None = None) -> int:
        """How many approvals wait for an answer (pending and unexpired), of one principal if given."""
        with self._reading() as db:
            row = db.execute(
                "SELECT COUNT(*) FROM approvals WHERE status='pending' AND expires>? "
                "AND (CAST(? AS TEXT) IS NULL OR principal=?)",
                (self.clock(), principal, principal),
            ).fetchone()
        return int(row[0])

    def pending_approvals(self, offset: int = 0, limit: int = 25, principal: str | None = None) -> list[Approval]:
        """One page of the approvals that wait for an answer, newest first, of one principal if given."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT * FROM approvals WHERE status='pending' AND expires>? "
                "AND (CAST(? AS TEXT) IS NULL OR principal=?) "
                "ORDER BY created DESC, id LIMIT ? OFFSET ?",
                (self.clock(), principal, principal, limit, offset),
            ).fetchall()
        return [_approval(row) for row in rows]

    def list_approvals(self, include_done: bool = False, limit: int = 50) -> list[Approval]:
        now = self.clock()
        with self._reading() as db:
            if include_done:
                rows = db.execute("SELECT * FROM approvals ORDER BY created DESC LIMIT ?", (limit,))
            else:
                rows = db.execute(
                    "SELECT * FROM approvals WHERE status IN ('pending','approved') AND expires>? "
                    "ORDER BY created DESC LIMIT ?",
                    (now, limit),
                )
            return [_approval(row) for row in rows.fetchall()]


class FetchedRows:
    """A statement's rows, read off its cursor as it ran, so they can be read after its
    transaction committed: SQLite commits no transaction while a statement of it is still being
    read, and a database server gets the COMMIT with the statements, in one round trip."""

    __slots__ = ("_rows", "description", "rowcount")

    def __init__(self, cursor: Any) -> None:
        self.description = cursor.description
        self._rows = cursor.fetchall() if cursor.description else []
        self.rowcount = cursor.rowcount  # after the rows: a RETURNING statement counts as it is read

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class _ReadAsItRuns:
    """The connection of an SQLite transaction, each statement's rows read as it runs."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Any = (), /) -> FetchedRows:
        return FetchedRows(self._db.execute(sql, storable_params(params)))


class _Storable:
    """The SQLite connection outside a transaction, every value bound made storable."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Any = (), /) -> sqlite3.Cursor:
        return self._db.execute(sql, storable_params(params))


class SqliteFile:
    """One SQLite file of the state dir, shared by threads and processes: WAL, and one writer at a
    time through BEGIN IMMEDIATE."""

    def __init__(self, path: Path, schema: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(schema)
        with contextlib.suppress(OSError):  # not every file system keeps modes
            path.chmod(0o600)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        started = time.perf_counter()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield _ReadAsItRuns(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        metrics.current().store("sqlite", time.perf_counter() - started)

    @contextmanager
    def _reading(self) -> Iterator[_Storable]:
        started = time.perf_counter()
        with self._lock:
            yield _Storable(self._db)
        metrics.current().store("sqlite", time.perf_counter() - started)

    def transaction(self) -> contextlib.AbstractContextManager[Connection]:
        return self._transaction()

    def reading(self) -> contextlib.AbstractContextManager[Connection]:
        return self._reading()


class PolicyStore(SqliteFile, StateStore):
    """The state in one SQLite file: the default, for one machine."""

    def __init__(self, path: Path, clock: Any = time.time) -> None:
        super().__init__(path, SCHEMA + APPROVAL_EVENTS_SCHEMA + OAUTH_SCHEMA)
        self.clock = clock
        self.audit_spool = AuditSpool(path.parent / SPOOL_FILE)
        self._migrate()

    def _migrate(self) -> None:
        """Bring a file written by an older version up to this schema; old rows keep their values."""
        with self._transaction() as db:  # one process adds the column; the others then see it
            columns = {row[1] for row in db.execute("PRAGMA table_info(audit)").fetchall()}
            if "answered_by" not in columns:
                db.execute("ALTER TABLE audit ADD COLUMN answered_by TEXT")
            columns = {row[1] for row in db.execute("PRAGMA table_info(page_sessions)").fetchall()}
            if "principal" not in columns:  # sessions signed in before a link could be for one principal
                db.execute("ALTER TABLE page_sessions ADD COLUMN principal TEXT")
            columns = {row[1] for row in db.execute("PRAGMA table_info(approval_meta)").fetchall()}
            if "client" not in columns:  # a state file from before clients were remembered
                db.execute("ALTER TABLE approval_meta ADD COLUMN client TEXT")
            columns = {row[1] for row in db.execute("PRAGMA table_info(enabled_tools)").fetchall()}
            if "namespace" not in columns:  # principal and namespace were one "\n"-joined key
                rows = db.execute("SELECT principal, tool FROM enabled_tools").fetchall()
                db.execute("DROP TABLE enabled_tools")
                db.execute(
                    "CREATE TABLE enabled_tools (principal TEXT NOT NULL, namespace TEXT NOT NULL DEFAULT '', "
                    "tool TEXT NOT NULL, PRIMARY KEY (principal, namespace, tool))"
                )
                for key, tool in rows:
                    db.execute(
                        "INSERT OR IGNORE INTO enabled_tools VALUES (?, ?, ?)",
                        (*_split_combined_key(key), tool),
                    )


def _principal_and_namespace(principal: str, namespace: str | None) -> tuple[str, str]:
    """The two columns of an enabled-tools key; `""` is the endpoint of every namespace. A principal
    is taken whole, newlines and all: it never names a namespace."""
    return principal, namespace or ""


def _split_combined_key(key: str) -> tuple[str, str]:
    """A row stored before principal and namespace were two columns: `principal + "\\n" + namespace`,
    split at its last newline (a namespace name has none)."""
    head, newline, tail = key.rpartition("\n")
    return (head, tail) if newline else (key, "")


def _approval(row: tuple[Any, ...]) -> Approval:
    return Approval(
        id=row[0],
        tool=row[1],
        args_sha256=row[2],
        args_display=json.loads(row[3]),
        summary=row[4],
        risk=row[5],
        principal=row[6],
        created=row[7],
        expires=row[8],
        status=row[9],
        decided=row[10],
        consumed=row[11],
    )
